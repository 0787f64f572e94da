import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { runVectors } from "../src/conformance/index.js"
import { runCaptured } from "./runCli.js"

const path = new URL("../../policies/test/fixtures/trtllm/adp_router_cases.json", import.meta.url)
const doc = JSON.parse(readFileSync(path, "utf8")) as { cases: Array<Record<string, unknown>> }

describe("TensorRT-LLM ADP router golden vectors (policies/test/fixtures/trtllm)", () => {
  it("all 25 ported upstream cases pass", () => {
    const out = runVectors(doc)
    expect(out?.format).toBe("trtllm-adp")
    expect(out?.results.filter((r) => !r.ok)).toEqual([])
    expect(out?.results.length).toBe(25)
  })

  it("a wrong expectation fails with the first assertion named", () => {
    const bad = { ...doc, cases: doc.cases.filter((c) => c["id"] === "kv-effective-tokens") }
    bad.cases = bad.cases.map((c) => ({ ...c, expect: { assigned: { "0": [1, 3] } } }))
    expect(runVectors(bad)?.results).toEqual([
      { id: "kv-effective-tokens", ok: false, firstDiff: "assigned[0]: expected [1,3], got [1,2]" }
    ])
  })

  it("`loadledger conformance` prints 25 passed, 0 failed", async () => {
    const r = await runCaptured("conformance", path.pathname)
    expect(r).toEqual({ code: 0, out: "25 passed, 0 failed\n", err: "" })
  })
})
