import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { runVectors } from "../src/conformance/index.js"
import { runCaptured } from "./runCli.js"

const file = new URL("../../policies/test/fixtures/vllm/power-of-two.json", import.meta.url)

describe("vllm-power-of-two vectors (vllm#43279) through the conformance formats", () => {
  it("are detected as loadledger-policy-ops and all 12 cases pass", () => {
    const out = runVectors(JSON.parse(readFileSync(file, "utf8")))
    expect(out?.format).toBe("loadledger-policy-ops")
    expect(out?.results.length).toBe(12)
    expect(out?.results.filter((r) => !r.ok)).toEqual([])
  })

  it("a corrupted expectation is reported", () => {
    const doc = JSON.parse(readFileSync(file, "utf8"))
    doc.cases[4].ops[1].expect.rank = 7
    const r = runVectors(doc)?.results.find((x) => !x.ok)
    expect(r?.firstDiff).toContain("rank 7 expected, got rank 2")
  })

  it("`loadledger conformance power-of-two.json` prints 12 passed, 0 failed", async () => {
    const r = await runCaptured("conformance", file.pathname)
    expect(r.code).toBe(0)
    expect(r.out).toBe("12 passed, 0 failed\n")
  })
})
