import { readFileSync } from "node:fs"
import { policyEntries } from "@loadledger/policies"
import { gpus, models } from "@loadledger/step-time"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  clairvoyantPolicy,
  compareGoodput,
  estimateGoodput,
  findGoodputRate,
  isTraceError,
  modelSimConfig,
  parseTrace,
  type SimConfig,
  type Slo,
  simulate,
  simulateBound,
  type TraceRequest,
  traceWindows
} from "../src/index.js"
import { asSimPolicy, fixture } from "./helpers.js"

const slo = (ttftSeconds: number, attainment = 0.9): Slo => ({
  ttftSeconds,
  tpotSeconds: 10,
  attainment,
  criterion: "joint"
})

// one rank, one request at a time, 1 s per step; a one-token output finishes at its prefill
const oneRank = (s: Slo): SimConfig => ({
  dpSize: 1,
  maxRunningRequests: 1,
  slo: s,
  sloStopEarly: true,
  stepModel: (ranks) => ({
    stepSeconds: 1,
    tokenImbalanceRatio: 1,
    ranks: ranks.map(() => ({ syncWaitSeconds: 0 }))
  })
})
const rank0 = asSimPolicy({
  name: "rank0",
  init: () => null,
  observe: (s) => s,
  finish: (s) => s,
  setStatus: (s) => s,
  route: (s) => ({ _tag: "Routed", rank: 0, state: s, explanation: {} })
})
// a request every 2 s: 0.5 requests/s at rate 1
const steady: ReadonlyArray<TraceRequest> = Array.from({ length: 400 }, (_, i) => ({
  requestId: `${i}`,
  arrivalSeconds: i * 2,
  inputLength: 1,
  outputLength: 1
}))

describe("findGoodputRate", () => {
  it("finds the rate where the queue's growth breaks the TTFT bound", () => {
    // up to 1 request/s (2x) every TTFT is 1 s; above it request i waits about i (1 - 2/k) s, and
    // the 360th (90%) must start within 4 s: k <= 2 / (1 - 4/360) = 2.022
    const found = findGoodputRate((t) => simulate(oneRank(slo(5)), t, rank0), steady, { precision: 0.001 })
    expect(found._tag).toBe("GoodputRate")
    if (found._tag !== "GoodputRate") return
    expect(found.rate).toBeGreaterThanOrEqual(2)
    expect(found.rate).toBeLessThan(2.023)
    expect(found.failedRate / found.rate).toBeLessThanOrEqual(1.001)
    expect(found.requestsPerSecond).toBeCloseTo(found.rate * (399 / 798), 10)
    // the probes above the goodput stopped as soon as they could no longer pass
    expect(found.probes.filter((p) => !p.passed).every((p) => p.stoppedEarly)).toBe(true)
    expect(found.probes.filter((p) => p.passed).every((p) => p.attainment >= 0.9)).toBe(true)
  })

  it("from any start, a small step finds the same crossing, the step growing while it brackets nothing", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.05, max: 40, noNaN: true }),
        fc.constantFrom(1.02, 1.05, 1.2),
        (start, step) => {
          const found = findGoodputRate((t) => simulate(oneRank(slo(5)), t, rank0), steady, {
            precision: 0.001,
            start,
            step
          })
          // the step squares up to 2: from 800x off the answer, a handful of replays more, never 40
          return (
            found._tag === "GoodputRate" && found.rate >= 2 && found.rate < 2.023 && found.probes.length <= 25
          )
        }
      ),
      { numRuns: 12 }
    )
    expect(findGoodputRate((t) => simulate(oneRank(slo(5)), t, rank0), steady, { step: 1 })).toMatchObject({
      _tag: "GoodputError",
      field: "step"
    })
  })

  it("calls an SLO no rate meets unattainable, with goodput 0", () => {
    // every TTFT is at least 1 s: a 0.5 s bound is never met
    const found = findGoodputRate((t) => simulate(oneRank(slo(0.5)), t, rank0), steady)
    expect(found).toMatchObject({ _tag: "GoodputRate", rate: 0, attainable: false, requestsPerSecond: 0 })
  })

  it("refuses a result without SLO attainment, naming slo", () => {
    const { slo: _none, ...noSlo } = oneRank(slo(5))
    const found = findGoodputRate((t) => simulate(noSlo, t, rank0), steady)
    expect(found).toMatchObject({ _tag: "GoodputError", field: "slo" })
  })
})

describe("traceWindows", () => {
  it("cuts disjoint windows that together hold every request once, each from 0", () => {
    fc.assert(
      fc.property(fc.integer({ min: 40, max: 300 }), fc.integer({ min: 2, max: 6 }), (n, k) => {
        const trace = steady.slice(0, n)
        const w = traceWindows(trace, k, 1)
        if (!Array.isArray(w)) return false
        const ids = w.flatMap((x) => x.map((r: TraceRequest) => r.requestId))
        const sizes = w.map((x) => x.length)
        return (
          ids.join() === trace.map((r) => r.requestId).join() &&
          Math.max(...sizes) - Math.min(...sizes) <= 1 &&
          w.every((x) => x[0]!.arrivalSeconds === 0)
        )
      })
    )
  })
})

describe("estimateGoodput and compareGoodput", () => {
  const positive = fc.array(fc.double({ min: 0.1, max: 100, noNaN: true }), { minLength: 2, maxLength: 12 })

  it("the interval holds the mean and narrows as the windows agree", () => {
    fc.assert(
      fc.property(positive, (xs) => {
        const e = estimateGoodput(xs, 1)
        return (
          e._tag === "GoodputEstimate" &&
          e.ci[0] <= e.requestsPerSecond + 1e-12 &&
          e.requestsPerSecond <= e.ci[1] + 1e-12
        )
      })
    )
    const same = estimateGoodput([5, 5, 5], 2.5)
    expect(same).toMatchObject({ requestsPerSecond: 5, ci: [5, 5], rate: 2 })
  })

  it("is antisymmetric: A against B mirrors B against A", () => {
    fc.assert(
      fc.property(
        positive,
        fc.array(fc.double({ min: 0.5, max: 2, noNaN: true }), { minLength: 12, maxLength: 12 }),
        (b, f) => {
          const a = b.map((x, i) => x * f[i]!)
          const ab = compareGoodput(a, b)
          const ba = compareGoodput(b, a)
          if (ab._tag !== "GoodputComparison" || ba._tag !== "GoodputComparison") return false
          const mirror = { better: "worse", worse: "better" } as Record<string, string>
          return (
            Math.abs(ab.ratio * ba.ratio - 1) < 1e-9 &&
            Math.abs(ab.ci[0] * ba.ci[1] - 1) < 1e-9 &&
            (mirror[ab.verdict] ?? ab.verdict) === ba.verdict
          )
        }
      )
    )
  })

  it("a policy 3% better on every window is better by exactly 3%; identical ones do not differ", () => {
    const b = [4, 9, 6, 12, 7]
    const c = compareGoodput(
      b.map((x) => x * 1.03),
      b
    )
    expect(c).toMatchObject({ verdict: "better" })
    expect(c._tag === "GoodputComparison" && c.ratio).toBeCloseTo(1.03, 12)
    expect(compareGoodput(b, b)).toMatchObject({ verdict: "no significant difference", ratio: 1 })
  })
})

describe("balance bound", () => {
  const text = readFileSync(fixture("examples/traces/mooncake/conversation_trace.jsonl"), "utf8")
  const parsed = parseTrace(text, undefined, { limit: 150 })
  if (isTraceError(parsed)) throw new Error(parsed.message)
  const trace = parsed
  const model = modelSimConfig(models["glm-5.3"]!, gpus["h200"]!)
  const s: Slo = { ttftSeconds: 10, tpotSeconds: 0.1, attainment: 0.9, criterion: "joint" }
  const precision = 0.04
  const goodput = (
    config: SimConfig,
    run: (c: SimConfig, t: ReadonlyArray<TraceRequest>) => ReturnType<typeof simulate>
  ) => {
    const g = findGoodputRate((t) => run({ ...config, slo: s, sloStopEarly: true }, t), trace, { precision })
    if (g._tag !== "GoodputRate") throw new Error(g.message)
    return g.rate
  }

  it("no registered policy, nor the clairvoyant one, beats it (law over the registry)", () => {
    const bounds = new Map(
      (["sglang", "vllm"] as const).map((engine) => {
        const b = goodput({ dpSize: 4, ...model, engine }, (c, t) => simulateBound(c, t))
        return [engine, b] as const
      })
    )
    expect(bounds.get("sglang")).toBeGreaterThan(0)
    const shares: Array<number> = []
    for (const p of [...policyEntries(), { ...clairvoyantPolicy(trace), engine: "sglang" as const }]) {
      // each policy on its own engine, as `loadledger goodput` runs it
      const engine = p.engine === "vllm" ? "vllm" : "sglang"
      const bound = bounds.get(engine)!
      const g = goodput({ dpSize: 4, ...model, engine }, (c, t) => simulate(c, t, p))
      shares.push(g / bound)
      // within the bisection's precision of the bound, or below it
      expect({ policy: p.name, over: g > bound * (1 + precision) }).toEqual({ policy: p.name, over: false })
    }
    // the law is not vacuous: some policy reaches a fair share of the bound
    expect(Math.max(...shares)).toBeGreaterThan(0.3)
  }, 120_000)

  it("serves every request of the trace, on one pooled rank", () => {
    const r = simulateBound({ dpSize: 4, ...model }, trace)
    expect(r.requests.finished).toBe(trace.length)
    expect(r.requestsPerRank).toEqual([trace.length])
    expect(r.syncWaitShare).toBe(0)
  })
})
