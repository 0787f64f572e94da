import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { runVectors } from "../src/conformance/index.js"
import { runCaptured } from "./runCli.js"

const file = (system: string) => new URL(`../../../fixtures/reference/peers/${system}.json`, import.meta.url)
const load = (system: string) =>
  JSON.parse(readFileSync(file(system), "utf8")) as {
    cases: Array<{ id: string; policy: string; steps: Array<Record<string, unknown>> }>
  }

const perPolicy = (system: string) => {
  const doc = load(system)
  const out = runVectors(doc)
  const policyOf = new Map(doc.cases.map((c) => [c.id, c.policy]))
  const by = new Map<string, { passed: number; failed: Array<string> }>()
  for (const r of out?.results ?? []) {
    const p = policyOf.get(r.id)!
    const e = by.get(p) ?? { passed: 0, failed: [] }
    if (r.ok) e.passed++
    else e.failed.push(`${r.id}: ${r.firstDiff}`)
    by.set(p, e)
  }
  return { format: out?.format, by }
}

describe("peer golden vectors (fixtures/reference/peers)", () => {
  const smg = perPolicy("smg")
  it.each([
    ["smg/round_robin", 11],
    ["smg/random", 12],
    ["smg/power_of_two", 18],
    ["smg/least_load", 22],
    ["smg/cache_aware", 22],
    ["smg/prefix_hash", 20],
    ["smg/consistent_hashing", 15],
    ["smg/dp_min_token", 16]
  ] as const)("%s: all %i cases pass", (policy, n) => {
    expect(smg.format).toBe("loadledger-peer-policy-golden/smg")
    expect(smg.by.get(policy)).toEqual({ passed: n, failed: [] })
  })

  const ps = perPolicy("production-stack")
  it.each([
    ["production-stack/roundrobin", 14],
    ["production-stack/session", 19],
    ["production-stack/prefixaware", 18],
    ["production-stack/loadaware", 35]
  ] as const)("%s: all %i cases pass", (policy, n) => {
    expect(ps.format).toBe("loadledger-peer-policy-golden/production-stack")
    expect(ps.by.get(policy)).toEqual({ passed: n, failed: [] })
  })

  it("a corrupted expectation is reported with the step and field", () => {
    const doc = load("smg")
    const c = doc.cases.find((x) => x.id === "smg-ll-up-01")!
    ;(c.steps[0]!.expect as { scores: Record<string, number> }).scores.w0 = 5.5
    const r = runVectors({ ...doc, cases: [c] })?.results[0]
    expect(r).toEqual({
      id: "smg-ll-up-01",
      ok: false,
      firstDiff: "step 0 (route).scores.w0: expected 5.5, got 5"
    })
  })

  it("a corrupted production-stack worker is reported", () => {
    const doc = load("production-stack")
    const c = doc.cases.find((x) => x.id === "ps-sess-up-01")!
    ;(c.steps[0]!.expect as { worker: string }).worker = "e2"
    const r = runVectors({ ...doc, cases: [c] })?.results[0]
    expect(r?.firstDiff).toBe('step 0 (route).worker: expected "e2", got "e1"')
  })

  it("`loadledger conformance` over both files prints 222 passed, 0 failed", async () => {
    const r = await runCaptured("conformance", file("smg").pathname, file("production-stack").pathname)
    expect(r.code).toBe(0)
    expect(r.out).toBe("222 passed, 0 failed\n")
  })

  it.each(["smg", "production-stack", "aibrix", "dynamo", "llm-d"])(
    "a %s document without a cases array is not a known format (never an empty pass)",
    (system) => {
      expect(runVectors({ format: "loadledger-peer-policy-golden", system })).toBeUndefined()
      expect(runVectors({ format: "loadledger-peer-policy-golden", system, cases: {} })).toBeUndefined()
    }
  )

  it.each(["smg", "production-stack"])(
    "a %s case that throws is a failed case named `exception: ...`",
    (system) => {
      const doc = load(system)
      const c = doc.cases.find((x) => x.steps.some((s) => s["op"] === "update"))!
      const broken = {
        ...c,
        steps: c.steps.map((s) =>
          s["op"] === "update" ? { ...s, workers: [{ id: "no-such-worker", healthy: true }] } : s
        )
      }
      const r = runVectors({ ...doc, cases: [broken] })?.results[0]
      expect(r?.ok).toBe(false)
      expect(r?.firstDiff).toMatch(/^exception: \S/)
    }
  )
})

describe("production-stack loadaware vectors", () => {
  it("a corrupted loadaware score is reported with the step and worker", () => {
    const doc = load("production-stack")
    const c = doc.cases.find((x) => x.id === "ps-la-up-03")!
    ;(c.steps[0]!.expect as { scores: Record<string, number> }).scores.e2 = 0.5
    expect(runVectors({ ...doc, cases: [c] })?.results[0]).toEqual({
      id: "ps-la-up-03",
      ok: false,
      firstDiff: "step 0 (route).scores.e2: expected 0.5, got 1"
    })
  })
})
