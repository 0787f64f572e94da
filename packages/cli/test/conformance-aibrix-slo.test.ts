import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { runVectors } from "../src/conformance/index.js"
import { runCaptured } from "./runCli.js"

const file = (name: string) => new URL(`../../../fixtures/reference/peers/${name}.json`, import.meta.url)
const load = (name: string) =>
  JSON.parse(readFileSync(file(name), "utf8")) as {
    cases: Array<{ id: string; policy: string; steps: Array<Record<string, unknown>> }>
  }

const countBy = (name: string) => {
  const doc = load(name)
  const out = runVectors(doc)
  const policyOf = new Map(doc.cases.map((c) => [c.id, c.policy]))
  const by: Record<string, { passed: number; failed: Array<string> }> = {}
  for (const r of out?.results ?? []) {
    const p = policyOf.get(r.id)!
    by[p] ??= { passed: 0, failed: [] }
    if (r.ok) by[p].passed++
    else by[p].failed.push(`${r.id}: ${r.firstDiff}`)
  }
  return { format: out?.format, by }
}

describe("AIBrix SLO and least-utilization vectors (fixtures/reference/peers)", () => {
  it("aibrix-slo.json: every case passes, per policy", () => {
    const r = countBy("aibrix-slo")
    expect(r.format).toBe("loadledger-peer-policy-golden/aibrix")
    expect(r.by).toEqual({
      "aibrix/slo-least-load": { passed: 7, failed: [] },
      "aibrix/slo-least-load-pulling": { passed: 6, failed: [] },
      "aibrix/slo": { passed: 19, failed: [] },
      "aibrix/slo-pack-load": { passed: 2, failed: [] }
    })
  })

  it("aibrix-least-utilization.json: all 8 cases pass", () => {
    expect(countBy("aibrix-least-utilization").by).toEqual({
      "aibrix/least-utilization": { passed: 8, failed: [] }
    })
  })

  it("a corrupted pending load is reported with the step and pod", () => {
    const doc = load("aibrix-slo")
    const c = doc.cases.find((x) => x.id === "aib-slo-up-05")!
    const e = c.steps[0]!.expect as { pendings: Record<string, number> }
    e.pendings.pod2 = 0.5
    const r = runVectors({ ...doc, cases: [c] })?.results[0]
    expect(r).toEqual({
      id: "aib-slo-up-05",
      ok: false,
      firstDiff: "step 0.pendings.pod2: expected 0.5, got 0.16081658474871144"
    })
  })

  it("a held request that routes is a failure, not a pass", () => {
    const doc = load("aibrix-slo")
    const c = doc.cases.find((x) => x.id === "aib-slo-code-03")!
    c.steps[0]!.expect = { worker: "f1" }
    expect(runVectors({ ...doc, cases: [c] })?.results[0]?.firstDiff).toBe(
      'step 0.worker: expected "f1", got null'
    )
  })

  it("`loadledger conformance` over both files prints 42 passed, 0 failed", async () => {
    const r = await runCaptured(
      "conformance",
      file("aibrix-slo").pathname,
      file("aibrix-least-utilization").pathname
    )
    expect(r.code).toBe(0)
    expect(r.out).toBe("42 passed, 0 failed\n")
  })
})
