import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { runVectors } from "../src/conformance/index.js"
import { runCaptured } from "./runCli.js"

const file = new URL("../../../fixtures/reference/peers/vllm-router.json", import.meta.url)

describe("vllm-router vectors (power_of_two.rs @ fa999f98) through the conformance formats", () => {
  it("are detected as loadledger-policy-ops and all 9 cases pass", () => {
    const out = runVectors(JSON.parse(readFileSync(file, "utf8")))
    expect(out?.format).toBe("loadledger-policy-ops")
    expect(out?.results.length).toBe(9)
    expect(out?.results.filter((r) => !r.ok)).toEqual([])
  })

  it("a corrupted expectation is reported", () => {
    const doc = JSON.parse(readFileSync(file, "utf8"))
    doc.cases[1].ops[6].expect.rank = 0
    const r = runVectors(doc)?.results.find((x) => !x.ok)
    expect(r?.firstDiff).toBe("op 6 (route r0): rank 0 expected, got rank 1")
  })

  it("`loadledger conformance vllm-router.json` prints 9 passed, 0 failed", async () => {
    const r = await runCaptured("conformance", file.pathname)
    expect(r.code).toBe(0)
    expect(r.out).toBe("9 passed, 0 failed\n")
  })
})
