import { describe, expect, it } from "vitest"
import { runVectors } from "../src/conformance/index.js"

describe("conformance format detection", () => {
  it("does not claim an unknown document", () => {
    expect(runVectors({ format: "something-else", cases: [] })).toBeUndefined()
  })
})
