import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { runVectors } from "../src/conformance/index.js"

const load = (name: string): { cases: Array<Record<string, unknown>> } & Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`../../../fixtures/reference/peers/${name}.json`, import.meta.url), "utf8"))

describe.each([
  ["llm-d", 157],
  ["dynamo", 70],
  ["aibrix", 129],
  ["llm-d-extra", 7],
  ["aibrix-extra", 5],
  ["aibrix-load-balance", 14],
  ["smg-head", 29]
] as const)("peer golden vectors: %s", (system, total) => {
  const doc = load(system)
  it(`replays every case (${total}) with 0 failed`, () => {
    const out = runVectors(doc)
    expect(out?.format).toBe(
      `loadledger-peer-policy-golden/${system.replace(/-(extra|load-balance|head)$/, "")}`
    )
    const failed = out!.results.filter((r) => !r.ok)
    expect(failed).toEqual([])
    expect(out!.results).toHaveLength(total)
  })
  it("per policy, every case passes", () => {
    const out = runVectors(doc)!
    const byPolicy = new Map<string, number>()
    doc.cases.forEach((c, i) => {
      if (out.results[i]!.ok)
        byPolicy.set(c["policy"] as string, (byPolicy.get(c["policy"] as string) ?? 0) + 1)
    })
    const expected = new Map<string, number>()
    for (const c of doc.cases)
      expected.set(c["policy"] as string, (expected.get(c["policy"] as string) ?? 0) + 1)
    expect(byPolicy).toEqual(expected)
  })
})

describe("peer vectors: a wrong expectation is reported, naming the field", () => {
  it("dynamo: a changed cost fails its case", () => {
    const doc = load("dynamo")
    const c = doc.cases.find((x) => x["id"] === "default-up-00")!
    ;(c["steps"] as Array<{ expect: { scores: Record<string, number> } }>)[0]!.expect.scores["w0"] = 7.5
    const r = runVectors({ ...doc, cases: [c] })!.results[0]!
    expect(r).toEqual({ id: "default-up-00", ok: false, firstDiff: "step 0.scores.w0: expected 7.5, got 7" })
  })
  it("llm-d: a changed prefix match fails its case", () => {
    const doc = load("llm-d")
    const c = doc.cases.find((x) => x["id"] === "profile-gen-00")!
    const steps = c["steps"] as Array<{ expect: { worker: string } }>
    const last = steps.find((s) => s.expect?.worker !== undefined)!
    last.expect.worker = last.expect.worker === "w0" ? "w1" : "w0"
    expect(runVectors({ ...doc, cases: [c] })!.results[0]!.ok).toBe(false)
  })
  it("aibrix: a changed selection fails its case", () => {
    const doc = load("aibrix")
    const c = doc.cases.find((x) => x["id"] === "aib-pc-edge-02")!
    const step = (c["steps"] as Array<{ op: string; expect?: { selection?: string } }>).find(
      (s) => s.expect?.selection === "prefix_match"
    )!
    step.expect!.selection = "least_request_fallback"
    const r = runVectors({ ...doc, cases: [c] })!.results[0]!
    expect(r.ok).toBe(false)
    expect(r.firstDiff).toMatch(/selection: expected "least_request_fallback", got "prefix_match"/)
  })
})
