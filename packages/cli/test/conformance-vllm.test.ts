import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { runVectors } from "../src/conformance/index.js"
import { runCaptured } from "./runCli.js"

const files = ["lb_cases.json", "wave_cases.json", "coord_cases.json"].map(
  (f) => new URL(`../../../fixtures/reference/vllm/${f}`, import.meta.url)
)

describe("vLLM golden vectors through the conformance formats", () => {
  it.each([
    [0, "vllm-lb", 170],
    [1, "vllm-wave", 82],
    [2, "vllm-coord", 15]
  ] as const)("file %i is detected as %s and all %i cases pass", (i, format, n) => {
    const out = runVectors(JSON.parse(readFileSync(files[i]!, "utf8")))
    expect(out?.format).toBe(format)
    expect(out?.results.length).toBe(n)
    expect(out?.results.filter((r) => !r.ok)).toEqual([])
  })

  it("a corrupted expected value is reported with the op and field", () => {
    const doc = JSON.parse(readFileSync(files[0]!, "utf8")) as Array<{ expected: Array<{ chosen?: number }> }>
    doc[0]!.expected[1]!.chosen = 0
    const r = runVectors(doc.slice(0, 1))?.results[0]
    expect(r?.ok).toBe(false)
    expect(r?.firstDiff).toContain("op 1 (route).chosen: expected 0, got 1")
  })

  it("`loadledger conformance fixtures/reference/vllm/*.json` prints 267 passed, 0 failed", async () => {
    const r = await runCaptured("conformance", ...files.map((f) => f.pathname))
    expect(r.code).toBe(0)
    expect(r.out).toBe("267 passed, 0 failed\n")
  })
})
