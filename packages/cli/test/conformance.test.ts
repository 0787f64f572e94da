import { describe, expect, it } from "vitest"
import { runVectors } from "../src/conformance/index.js"
import { runCaptured } from "./runCli.js"

describe("conformance format detection", () => {
  it("does not claim an unknown document", () => {
    expect(runVectors({ format: "something-else", cases: [] })).toBeUndefined()
  })
})

describe("bad input gets one line naming the file", () => {
  const run = async (args: Array<string>) => {
    const { code, err } = await runCaptured(...args)
    return { code, err }
  }
  it("missing file", async () => {
    const r = await run(["conformance", "/no/such/file.json"])
    expect(r).toEqual({ code: 1, err: "loadledger: /no/such/file.json: file not found\n" })
  })
  it("a file that is not JSON", async () => {
    const r = await run(["conformance", new URL("../../../README.md", import.meta.url).pathname])
    expect(r.code).toBe(1)
    expect(r.err).toMatch(/README\.md: not JSON \(/)
    expect(r.err.trim().split("\n")).toHaveLength(1)
  })
})
