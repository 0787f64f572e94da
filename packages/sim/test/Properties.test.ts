import { fc, test } from "@fast-check/vitest"
import {
  followBootstrapRoom,
  ledgerBalanced,
  type Policy,
  roundRobin,
  totalRequests,
  totalTokens,
  vllmKvPressure
} from "@loadledger/policies"
import { describe, expect, it } from "vitest"
import { simulate, type TraceRequest } from "../src/index.js"
import { asSimPolicy, fixedStep, req } from "./helpers.js"

const policies = [
  roundRobin,
  totalRequests,
  totalTokens,
  followBootstrapRoom,
  vllmKvPressure,
  ledgerBalanced
] as ReadonlyArray<Policy<unknown>>

// Prompts share prefixes: block ids are chained from a small tree so identical leading ids recur.
const requestArb = fc
  .record({
    arrivalSeconds: fc.double({ min: 0, max: 3, noNaN: true }),
    inputLength: fc.integer({ min: 1, max: 5000 }),
    outputLength: fc.integer({ min: 0, max: 40 }),
    family: fc.integer({ min: 0, max: 3 }),
    pinned: fc.option(fc.integer({ min: 0, max: 5 }), { freq: 4 })
  })
  .map(
    (r): Omit<TraceRequest, "requestId"> => ({
      arrivalSeconds: r.arrivalSeconds,
      inputLength: r.inputLength,
      outputLength: r.outputLength,
      hashIds: Array.from({ length: Math.ceil(r.inputLength / 512) }, (_, i) =>
        i < 4 ? r.family * 100 + i : 10_000 + i
      ),
      dpRank: r.pinned ?? undefined
    })
  )

const scenarioArb = fc.record({
  dpSize: fc.integer({ min: 1, max: 6 }),
  engine: fc.constantFrom("sglang" as const, "vllm" as const),
  lockstep: fc.boolean(),
  kvPoolTokens: fc.integer({ min: 2000, max: 60_000 }),
  maxSimulatedSeconds: fc.option(fc.double({ min: 0.01, max: 3, noNaN: true }), { freq: 3 }),
  chunkedPrefillTokens: fc.constantFrom(512, 2048, 8192),
  maxRunningRequests: fc.integer({ min: 1, max: 8 }),
  // the prefill cadence (vLLM prefill_schedule_interval) must keep every invariant below
  prefillIntervalSteps: fc.constantFrom(1, 1, 2, 5),
  policy: fc.constantFrom(...policies),
  seed: fc.integer({ min: 0, max: 1000 }),
  requests: fc.array(requestArb, { minLength: 0, maxLength: 25 })
})

const traceOf = (rs: ReadonlyArray<Omit<TraceRequest, "requestId">>, dpSize: number): Array<TraceRequest> =>
  rs
    .map((r, i) => ({
      ...r,
      requestId: String(i),
      dpRank: r.dpRank === undefined ? undefined : r.dpRank % dpSize
    }))
    .sort((a, b) => a.arrivalSeconds - b.arrivalSeconds || Number(a.requestId) - Number(b.requestId))

describe("conservation and lockstep invariants", () => {
  test.prop([scenarioArb], { numRuns: 60 })(
    "every request is routed once, rejected, or reported unfinished; no token is lost or double-counted; every rank runs in every lockstep step",
    (sc) => {
      const trace = traceOf(sc.requests, sc.dpSize)
      const r = simulate(
        {
          ...sc,
          // the cadence is a vLLM option: checkConfig refuses it on the SGLang engine
          prefillIntervalSteps: sc.engine === "vllm" ? sc.prefillIntervalSteps : 1,
          maxSimulatedSeconds: sc.maxSimulatedSeconds ?? undefined,
          stepModel: fixedStep(0.02),
          recordRequests: true,
          recordSteps: true
        },
        trace,
        asSimPolicy(sc.policy)
      )
      const cut = sc.maxSimulatedSeconds !== null
      expect(r.status._tag).toBe(
        cut && r.requests.finished + r.requests.rejected < trace.length ? "TimeLimit" : "Completed"
      )
      const outcomes = r.outcomes!
      expect(outcomes.map((o) => o.requestId).sort()).toEqual(trace.map((t) => t.requestId).sort())
      // each request: rejected (too big for the pool), or routed once, or not yet arrived at a time limit
      const rejected = outcomes.filter((o) => o.rejected !== undefined)
      const routed = outcomes.filter((o) => o.rank !== undefined)
      const notArrived = outcomes.filter((o) => o.arrivalSeconds > r.simulatedSeconds)
      expect(rejected.length + routed.length + notArrived.length).toBe(trace.length)
      expect(r.requestsPerRank.reduce((a, b) => a + b, 0)).toBe(routed.length)
      expect(r.requests.rejected).toBe(rejected.length)
      for (const o of rejected) {
        const t = trace.find((x) => x.requestId === o.requestId)!
        expect(t.inputLength + Math.max(1, t.outputLength)).toBeGreaterThan(sc.kvPoolTokens)
        expect(o.rank).toBeUndefined()
      }
      expect(r.requests.finished + r.requests.unfinished).toBe(trace.length)
      if (!cut) expect(r.requests.finished).toBe(trace.length - rejected.length)
      let delivered = 0
      for (const o of routed) {
        const t = trace.find((x) => x.requestId === o.requestId)!
        if (t.dpRank !== undefined) expect(o.rank).toBe(t.dpRank)
        delivered += o.outputTokens
        if (o.finishSeconds === undefined) {
          expect(o.outputTokens).toBeLessThan(Math.max(1, t.outputLength))
          continue
        }
        expect(o.outputTokens).toBe(Math.max(1, t.outputLength))
        expect(o.firstScheduledSeconds!).toBeGreaterThanOrEqual(o.arrivalSeconds)
        expect(o.firstTokenSeconds!).toBeGreaterThan(o.firstScheduledSeconds!)
        expect(o.finishSeconds).toBeGreaterThanOrEqual(o.firstTokenSeconds!)
      }
      const finishedRequests = routed.filter((o) => o.finishSeconds !== undefined).length
      expect(finishedRequests).toBe(r.requests.finished)
      // tokens: every output token came from exactly one decode or one (re-)prefill completion
      expect(r.tokens.output).toBe(delivered)
      expect(r.tokens.output).toBe(r.tokens.decode + r.tokens.outputFromPrefill)
      // one prefill completion per request, plus one per retraction that happened after it
      expect(r.tokens.outputFromPrefill).toBeGreaterThanOrEqual(finishedRequests)
      expect(r.tokens.outputFromPrefill).toBeLessThanOrEqual(routed.length + r.retractions)
      // every prompt token of a finished request was computed or served from cache, at least once
      if (!cut) {
        const prompts = routed.reduce(
          (a, o) => a + trace.find((x) => x.requestId === o.requestId)!.inputLength,
          0
        )
        if (r.retractions === 0) expect(r.tokens.prefillComputed + r.tokens.prefillCached).toBe(prompts)
        else expect(r.tokens.prefillComputed + r.tokens.prefillCached).toBeGreaterThan(prompts)
      }
      // the steps ran exactly the computed tokens
      const log = r.stepLog!
      const stepTokens = log.reduce((a, s) => a + s.ranks.reduce((b, x) => b + x.tokens, 0), 0)
      expect(stepTokens).toBe(r.tokens.prefillComputed + r.tokens.decode)
      // tokens per rank: the totals split by rank, each rank's share matching what its steps ran
      const perRank = r.tokensPerRank!
      const total = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0)
      expect(total(perRank.prefillComputed)).toBe(r.tokens.prefillComputed)
      expect(total(perRank.prefillCached)).toBe(r.tokens.prefillCached)
      expect(total(perRank.decode)).toBe(r.tokens.decode)
      for (let k = 0; k < sc.dpSize; k++)
        expect(perRank.prefillComputed[k]! + perRank.decode[k]!).toBe(
          log.reduce((a, s) => a + s.ranks.filter((x) => x.rank === k).reduce((b, x) => b + x.tokens, 0), 0)
        )
      // the ITL CDF: non-decreasing, through the reported percentiles
      const itl = r.latencyCdf.itlSeconds!
      // (no inter-token gap measured: an empty curve, never zeros)
      expect(itl).toHaveLength(r.itlSeconds.count === 0 ? 0 : r.latencyCdf.quantiles.length)
      for (let i = 1; i < itl.length; i++) expect(itl[i]!).toBeGreaterThanOrEqual(itl[i - 1]!)
      expect(itl[50]).toBe(r.itlSeconds.p50)
      expect(itl[90]).toBe(r.itlSeconds.p90)
      expect(itl[99]).toBe(r.itlSeconds.p99)
      // the tail points p99.1..p99.9 sit between p99 and the maximum, in order
      const qs = r.latencyCdf.quantiles
      expect(qs.slice(99)).toEqual([0.99, 0.991, 0.992, 0.993, 0.994, 0.995, 0.996, 0.997, 0.998, 0.999, 1])
      for (let i = 1; i < qs.length; i++) expect(qs[i]!).toBeGreaterThan(qs[i - 1]!)
      // lockstep: each step includes every rank, each running real tokens or a dummy batch; steps never overlap
      if (sc.lockstep) {
        for (const s of log) {
          expect(s.ranks.map((x) => x.rank)).toEqual(Array.from({ length: sc.dpSize }, (_, i) => i))
          for (const x of s.ranks) expect(x.tokens > 0 || x.dummyTokens >= 1).toBe(true)
        }
        for (let i = 1; i < log.length; i++)
          expect(log[i]!.startSeconds).toBeGreaterThanOrEqual(
            log[i - 1]!.startSeconds + log[i - 1]!.stepSeconds - 1e-9
          )
        // vLLM @00080ee1: a wave ends only when step_counter % 32 == 0, so waves are whole multiples of 32 steps
        if (sc.engine === "vllm" && sc.dpSize > 1 && !cut) expect(r.steps % 32).toBe(0)
      }
    }
  )
})

describe("forward veto invariants (dummyBatches: false)", () => {
  test.prop([scenarioArb, fc.constantFrom(0, 4)], { numRuns: 40 })(
    "no lockstep step runs a dummy batch; a run ends Completed, TimeLimit or NoProgress naming each empty rank's cause; counts add up",
    (sc, maxRequestSlack) => {
      const trace = traceOf(sc.requests, sc.dpSize)
      const r = simulate(
        {
          ...sc,
          lockstep: true,
          engine: "sglang",
          prefillIntervalSteps: 1,
          dummyBatches: false,
          // slack > 0 lets requests larger than the pool reach (and block) their rank
          maxRequestTokens: sc.kvPoolTokens * (1 + maxRequestSlack),
          maxSimulatedSeconds: sc.maxSimulatedSeconds ?? undefined,
          stepModel: fixedStep(0.02),
          recordSteps: true
        },
        trace,
        asSimPolicy(sc.policy)
      )
      for (const s of r.stepLog!) for (const x of s.ranks) expect(x.tokens).toBeGreaterThan(0)
      expect(["Completed", "TimeLimit", "NoProgress"]).toContain(r.status._tag)
      if (r.status._tag === "NoProgress") {
        expect(r.status.causes!.length).toBeGreaterThan(0)
        for (const x of r.status.causes!) expect(r.status.message).toContain(`rank ${x.rank}`)
      }
      if (r.status._tag === "Completed") expect(r.requests.finished + r.requests.rejected).toBe(trace.length)
      const q = r.requests
      expect(q.finished + q.unfinished).toBe(trace.length)
      expect(q.rejected + q.stalled).toBeLessThanOrEqual(q.unfinished)
      expect(r.forwardStallSeconds).toBeGreaterThanOrEqual(0)
      expect(r.forwardStallSeconds).toBeLessThanOrEqual(r.simulatedSeconds + 1e-9)
    }
  )
})

describe("determinism", () => {
  const trace = Array.from({ length: 300 }, (_, i) =>
    req(i, i * 0.01, 500 + ((i * 7919) % 3000), 1 + (i % 17))
  )
  const config = { dpSize: 8, stepModel: fixedStep(0.02), seed: 7 }
  it("same config and seed give the same result", () => {
    for (const p of policies) {
      const a = simulate(config, trace, asSimPolicy(p))
      const b = simulate(config, trace, asSimPolicy(p))
      expect(b).toEqual(a)
    }
  })
  it("the seed drives follow-bootstrap-room's random rooms", () => {
    const a = simulate(config, trace, asSimPolicy(followBootstrapRoom))
    const b = simulate({ ...config, seed: 8 }, trace, asSimPolicy(followBootstrapRoom))
    expect(b.requestsPerRank).not.toEqual(a.requestsPerRank)
    expect(a.requestsPerRank.reduce((x, y) => x + y, 0)).toBe(300)
  })
})
