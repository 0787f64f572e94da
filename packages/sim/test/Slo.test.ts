import { fc, test } from "@fast-check/vitest"
import { roundRobin, totalTokens } from "@loadledger/policies"
import { describe, expect, it } from "vitest"
import {
  allowedMisses,
  checkConfig,
  describeSlo,
  parseSlo,
  resolveConfig,
  SLO_PRESETS,
  type Slo,
  simulate,
  type TraceRequest
} from "../src/index.js"
import { asSimPolicy, fixedStep, req } from "./helpers.js"

const slo = (ttft: number, tpot: number, extra: Partial<Slo> = {}): Slo => ({
  ttftSeconds: ttft,
  tpotSeconds: tpot,
  attainment: 0.9,
  criterion: "joint",
  ...extra
})

describe("parseSlo", () => {
  it("reads bounds in s / ms / us, attainment as a share or a percentage, and the criterion", () => {
    const s = parseSlo("ttft=2s,tpot=100ms,attain=95%,itl=1500us,criterion=p99")
    expect(s).toEqual({
      _tag: "Slo",
      slo: {
        ttftSeconds: 2,
        tpotSeconds: 0.1,
        itlSeconds: 0.0015,
        attainment: 0.95,
        criterion: "p99",
        name: undefined,
        source: undefined
      }
    })
  })
  it("takes a preset with overrides, and names it as overridden", () => {
    const s = parseSlo("mlperf-llama2-70b,attain=0.95")
    expect(s._tag === "Slo" && s.slo.attainment).toBe(0.95)
    expect(s._tag === "Slo" && s.slo.name).toBe("mlperf-llama2-70b (overridden)")
    expect(s._tag === "Slo" && s.slo.ttftSeconds).toBe(2)
  })
  it("names the bad part", () => {
    expect(parseSlo("ttft=2s")).toMatchObject({ _tag: "SloError", field: "tpot" })
    expect(parseSlo("ttft=fast,tpot=1s")).toMatchObject({ _tag: "SloError", field: "ttft" })
    expect(parseSlo("ttft=1s,tpot=1s,attain=1.2")).toMatchObject({ _tag: "SloError", field: "attain" })
    expect(parseSlo("ttft=1s,tpot=1s,criterion=p50")).toMatchObject({ _tag: "SloError", field: "criterion" })
    expect(parseSlo("mlperf-llama9")).toMatchObject({ _tag: "SloError", field: "slo" })
    expect(parseSlo("")).toMatchObject({ _tag: "SloError", field: "slo" })
  })
  it("every preset is valid, cites its source and judges by its source's criterion", () => {
    for (const [name, s] of Object.entries(SLO_PRESETS)) {
      expect(s.name).toBe(name)
      expect(s.source).toMatch(name.startsWith("mlperf") ? /mlperf\.conf/ : /DistServe/)
      expect(s.criterion).toBe(name.startsWith("mlperf") ? "p99" : "joint")
      expect(parseSlo(name)).toEqual({ _tag: "Slo", slo: s })
    }
    expect(describeSlo(SLO_PRESETS["mlperf-llama2-70b"]!)).toBe(
      "mlperf-llama2-70b: TTFT <= 2 s and TPOT <= 200 ms, each bound met by >= 99% of requests (the p99 criterion)"
    )
  })
  it("allowedMisses is the floor of the missing share", () => {
    expect(allowedMisses(slo(1, 1), 100)).toBe(10)
    expect(allowedMisses(slo(1, 1, { attainment: 0.99 }), 150)).toBe(1)
    expect(allowedMisses(slo(1, 1, { attainment: 1 }), 150)).toBe(0)
  })
})

describe("SLO attainment in simulate", () => {
  it("a bad slo is an InvalidConfig naming its field", () => {
    const c = resolveConfig({ dpSize: 1, stepModel: fixedStep(0.01), slo: slo(1, -1) })
    expect(checkConfig(c)).toMatchObject({ field: "slo.tpot" })
  })

  // one rank, 10 ms steps: a request arriving alone prefills in one step (TTFT 10 ms) and decodes
  // one token per step (TPOT 10 ms)
  it("counts TTFT, TPOT and worst-gap misses per request", () => {
    const trace = [req(0, 0, 100, 5), req(1, 0.025, 100, 3), req(2, 10, 100, 1)]
    const run = (s: Slo) =>
      simulate(
        { dpSize: 1, stepModel: fixedStep(0.01), slo: s, recordRequests: true },
        trace,
        asSimPolicy(roundRobin)
      )
    const loose = run(slo(1, 1, { itlSeconds: 1 }))
    expect(loose.slo).toMatchObject({
      total: 3,
      met: 3,
      ttftMet: 3,
      tpotMet: 3,
      itlMet: 3,
      attainment: 1,
      passed: true
    })
    // request 1 arrives while 0 decodes: SGLang runs its prefill as an extend batch, so request 0's
    // decode waits one step: its worst gap is 20 ms, its TPOT (50 - 10) / 4 = 12.5 ms
    const o = loose.outcomes!
    expect(o[0]).toMatchObject({ firstTokenSeconds: 0.01 })
    const tight = run(slo(1, 0.011, { itlSeconds: 0.015 }))
    const tpot0 = (o[0]!.finishSeconds! - o[0]!.firstTokenSeconds!) / 4
    expect(tpot0).toBeGreaterThan(0.011)
    expect(tight.slo).toMatchObject({ tpotMet: 2, itlMet: 2, met: 2 })
    // the one-token request is judged on TTFT alone
    const ttftOnly = run(slo(0.015, 1e-6))
    expect(ttftOnly.slo).toMatchObject({ ttftMet: 3, tpotMet: 1, met: 1 })
  })

  it("rejected requests miss", () => {
    const trace = [req(0, 0, 100, 2), req(1, 0, 10_000, 2)]
    const r = simulate(
      { dpSize: 1, stepModel: fixedStep(0.01), kvPoolTokens: 1000, slo: slo(10, 10, { attainment: 0.5 }) },
      trace,
      asSimPolicy(roundRobin)
    )
    expect(r.requests.rejected).toBe(1)
    expect(r.slo).toMatchObject({ total: 2, met: 1, attainment: 0.5, passed: true })
  })

  const traceArb = fc
    .array(
      fc.record({
        arrivalSeconds: fc.double({ min: 0, max: 2, noNaN: true }),
        inputLength: fc.integer({ min: 1, max: 20_000 }),
        outputLength: fc.integer({ min: 0, max: 30 })
      }),
      { minLength: 1, maxLength: 40 }
    )
    .map((rs) =>
      rs
        .sort((a, b) => a.arrivalSeconds - b.arrivalSeconds)
        .map((r, i): TraceRequest => ({ requestId: String(i), ...r }))
    )

  test.prop([
    traceArb,
    fc.double({ min: 0.005, max: 0.5, noNaN: true }),
    fc.double({ min: 0.005, max: 0.1, noNaN: true }),
    fc.constantFrom("sglang" as const, "vllm" as const)
  ])(
    "the counts equal the outcomes judged by hand; the worst gap bounds TPOT from above",
    (trace, ttft, tpot, engine) => {
      const config = { dpSize: 2, engine, stepModel: fixedStep(0.01), recordRequests: true }
      const s = slo(ttft, tpot, { itlSeconds: 0.5 })
      const r = simulate({ ...config, slo: s }, trace, asSimPolicy(totalTokens))
      const plain = simulate(config, trace, asSimPolicy(totalTokens))
      // judging changes nothing else
      expect({ ...r, slo: undefined }).toEqual({ ...plain, slo: undefined })
      let ttftMet = 0
      let tpotMet = 0
      let met = 0
      for (const o of r.outcomes!) {
        if (o.finishSeconds === undefined || o.rejected !== undefined) continue
        const n = Math.max(1, trace[Number(o.requestId)]!.outputLength)
        const a = o.firstTokenSeconds! - o.arrivalSeconds <= ttft
        const b = n <= 1 || (o.finishSeconds - o.firstTokenSeconds!) / (n - 1) <= tpot
        if (a) ttftMet++
        if (b) tpotMet++
        if (a && b) met++
      }
      expect(r.slo).toMatchObject({ total: trace.length, ttftMet, tpotMet })
      // with a 0.5 s worst-gap bound every request whose E2E after its first token is under it meets it
      expect(r.slo!.met).toBeLessThanOrEqual(met)
      const tightItl = simulate(
        { ...config, slo: { ...s, itlSeconds: 0.0099 } },
        trace,
        asSimPolicy(totalTokens)
      )
      // every gap is at least one 10 ms step: a bound under it only one-token outputs meet
      const oneToken = r.outcomes!.filter(
        (o) => o.finishSeconds !== undefined && Math.max(1, trace[Number(o.requestId)]!.outputLength) === 1
      ).length
      expect(tightItl.slo!.itlMet).toBe(oneToken)
    }
  )

  it("sloStopEarly stops a hopeless run as soon as the misses exceed the target, and says so", () => {
    // 400 requests at once on one rank: queueing makes most miss a 0.5 s TTFT
    const trace = Array.from({ length: 400 }, (_, i) => req(i, i * 0.001, 8000, 10))
    const s = slo(0.5, 1)
    const full = simulate({ dpSize: 1, stepModel: fixedStep(0.01), slo: s }, trace, asSimPolicy(roundRobin))
    const early = simulate(
      { dpSize: 1, stepModel: fixedStep(0.01), slo: s, sloStopEarly: true },
      trace,
      asSimPolicy(roundRobin)
    )
    expect(full.slo!.passed).toBe(false)
    expect(full.status._tag).toBe("Completed")
    expect(early.status._tag).toBe("SloMissed")
    expect(early.slo).toMatchObject({ passed: false, stoppedEarly: true })
    expect(early.steps).toBeLessThan(full.steps)
    expect(early.slo!.attainment).toBeGreaterThanOrEqual(full.slo!.attainment)
    // a run that passes is not stopped
    const ok = simulate(
      { dpSize: 1, stepModel: fixedStep(0.01), slo: slo(100, 1), sloStopEarly: true },
      trace,
      asSimPolicy(roundRobin)
    )
    expect(ok.status._tag).toBe("Completed")
    expect(ok.slo!.passed).toBe(true)
  })
})
