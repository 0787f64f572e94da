// The lockstep rules of `simulate` (see its docstring, "The step rule"), each on a small hand-built
// scenario with a fixed 10 ms step, so every time below is a whole number of steps.
import { findPolicy, type Policy } from "@loadledger/policies"
import { describe, expect, it } from "vitest"
import type { SimConfig, SimPolicy, TraceRequest } from "../src/index.js"
import { simulate } from "../src/index.js"
import { asSimPolicy, fixedStep, req } from "./helpers.js"

/** Routes every request to the trace's `dpRank`. */
const follow = asSimPolicy<null>({
  name: "follow",
  init: () => null,
  observe: (s) => s,
  finish: (s) => s,
  setStatus: (s) => s,
  route: (s, r) => ({ _tag: "Routed", rank: r.routedDpRank ?? 0, state: s, explanation: {} })
} satisfies Policy<null>)

const run = (config: Partial<SimConfig>, trace: ReadonlyArray<TraceRequest>) =>
  simulate({ dpSize: 1, stepModel: fixedStep(0.01), recordRequests: true, ...config }, trace, follow)

// the prefill cadence is a vLLM option (checkConfig refuses it on the SGLang engine)
const runVllm = (config: Partial<SimConfig>, trace: ReadonlyArray<TraceRequest>) =>
  run({ engine: "vllm", ...config }, trace)

const firstToken = (r: ReturnType<typeof run>, id: string) =>
  r.outcomes!.find((o) => o.requestId === id)!.firstTokenSeconds

describe("one step for all ranks under lockstep", () => {
  // a step costs 50 ms when any rank runs a prefill chunk, else 10 ms
  const prefillSpeed: SimConfig["stepModel"] = (ranks) => ({
    stepSeconds: ranks.some((w) => w.extendTokens > 0) ? 0.05 : 0.01,
    tokenImbalanceRatio: 1,
    ranks: ranks.map(() => ({ syncWaitSeconds: 0 }))
  })
  // A decodes on rank 1; B arrives on rank 0 during A's prefill and is prefilled in step 1
  const trace = [req(0, 0, 100, 5, { dpRank: 1 }), req(1, 0.025, 100, 2, { dpRank: 0 })]

  it("a prefill on rank 0 makes rank 1's decode step a prefill-speed step (A's ITL 50 ms once)", () => {
    const r = run({ dpSize: 2, stepModel: prefillSpeed }, trace)
    // A: prefill 0-0.05, decode 0.05-0.10 (B's prefill sets the step), then 0.11, 0.12, 0.13
    expect(r.outcomes![0]!.finishSeconds).toBeCloseTo(0.13, 12)
    // gaps: A 0.05, 0.01, 0.01, 0.01; B 0.01
    expect(r.itlSeconds.count).toBe(5)
    expect(r.itlSeconds.mean).toBeCloseTo(0.09 / 5, 12)
  })

  it("ranks that step alone (lockstep: false) keep their own decode speed", () => {
    const r = run({ dpSize: 2, stepModel: prefillSpeed, lockstep: false }, trace)
    expect(r.outcomes![0]!.finishSeconds).toBeCloseTo(0.09, 12)
  })
})

describe("prefill cadence (prefillIntervalSteps, vLLM prefill_schedule_interval)", () => {
  // A decodes from step 1 on; B arrives during step 1 (t = 0.015)
  const trace = [req(0, 0, 100, 20), req(1, 0.015, 100, 3)]

  it("off by default: B is prefilled at the next step (t = 0.02) and gets its token at 0.03", () => {
    const r = run({}, trace)
    expect(firstToken(r, "1")).toBeCloseTo(0.03, 12)
    expect(runVllm({ prefillIntervalSteps: 1 }, trace)).toEqual(runVllm({}, trace))
  })

  it("the SGLang engine refuses it: InvalidConfig naming prefillIntervalSteps, nothing run", () => {
    const r = run({ engine: "sglang", prefillIntervalSteps: 4 }, trace)
    expect(r.status._tag).toBe("InvalidConfig")
    expect(r.status._tag === "InvalidConfig" && r.status.field).toBe("prefillIntervalSteps")
    expect(r.steps).toBe(0)
    expect(run({ engine: "sglang", prefillIntervalSteps: 1 }, trace).status._tag).toBe("Completed")
  })

  it("the SGLang engine refuses every other vLLM-only option set away from its default", () => {
    for (const [field, value] of [
      ["coordinatorIntervalSeconds", 0.5],
      ["vllmWaveProfile", { name: "every-step", syncInterval: 1, syncFirstStep: true }],
      ["coordinatorRows", "vllm"]
    ] as const) {
      const r = run({ engine: "sglang", [field]: value } as Partial<SimConfig>, trace)
      expect(r.status).toEqual({
        _tag: "InvalidConfig",
        field,
        message: expect.stringMatching(/needs the vLLM engine \(SGLang.*\), got engine sglang$/)
      })
      expect(r.steps).toBe(0)
    }
    expect(run({ engine: "sglang", coordinatorIntervalSeconds: 0.1 }, trace).status._tag).toBe("Completed")
  })

  it("vLLM, k = 4: prefills wait for step 4 (t = 0.04) while A decodes; B's token at 0.05", () => {
    const r = runVllm({ prefillIntervalSteps: 4, recordSteps: true }, trace)
    expect(r.status._tag).toBe("Completed")
    expect(firstToken(r, "1")).toBeCloseTo(0.05, 12)
    // steps 1-3 ran A's decode only (1 token), step 4 ran B's 100-token prefill beside A's decode
    expect(r.stepLog!.slice(0, 5).map((s) => s.ranks[0]!.tokens)).toEqual([100, 1, 1, 1, 101])
  })

  it("saturation guard: a prefill step that left requests waiting lets the next step admit", () => {
    // a 100-token budget admits A alone at step 0 (B waits): step 1 is throttled but not deferred,
    // and A's decode token plus B's 99-token prompt fill the budget: B's first token at step 1's end
    const both = [req(0, 0, 100, 20), req(1, 0, 99, 3)]
    const r = runVllm({ prefillIntervalSteps: 4, chunkedPrefillTokens: 100 }, both)
    expect(firstToken(r, "1")).toBeCloseTo(0.02, 12)
  })

  it("nothing to decode: a chunked prompt alone keeps prefilling on throttled steps", () => {
    // ceil(20000 / 8192) = 3 extend steps, the same as without the cadence
    const r = runVllm({ prefillIntervalSteps: 4 }, [req(0, 0, 20_000, 1)])
    expect(r.steps).toBe(3)
    expect(r.ttftSeconds.p50).toBeCloseTo(0.03, 12)
  })

  it("the counter restarts when the group goes idle: a request after idle is prefilled at once", () => {
    // A runs steps 0-2 (counter 3), the group idles, B arrives at t = 1: counter 0, no wait
    const r = runVllm({ prefillIntervalSteps: 4 }, [req(0, 0, 100, 3), req(1, 1, 100, 2)])
    expect(firstToken(r, "1")).toBeCloseTo(1.01, 12)
  })
})

describe("forward veto (dummyBatches: false) under attention DP", () => {
  const dp2 = { dpSize: 2 } as const

  it("with dummy batches (SGLang's default) rank 0 runs alone while rank 1 is idle", () => {
    const r = run(dp2, [req(0, 0, 100, 3, { dpRank: 0 }), req(1, 0.5, 100, 3, { dpRank: 1 })])
    expect(r.outcomes![0]!.finishSeconds).toBeCloseTo(0.03, 12)
    expect(r.forwardStallSeconds).toBe(0)
    expect(r.idleRankStepShare).toBe(0.5)
  })

  it("without them rank 0's forward waits for rank 1's first request (t = 0.5): 0.5 s stalled", () => {
    const r = run({ ...dp2, dummyBatches: false }, [
      req(0, 0, 100, 3, { dpRank: 0 }),
      req(1, 0.5, 100, 3, { dpRank: 1 })
    ])
    expect(r.status._tag).toBe("Completed")
    expect(firstToken(r, "0")).toBeCloseTo(0.51, 12)
    expect(r.outcomes![0]!.finishSeconds).toBeCloseTo(0.53, 12)
    expect(r.forwardStallSeconds).toBeCloseTo(0.5, 12)
    expect(r.steps).toBe(3)
    expect(r.idleRankStepShare).toBe(0)
  })

  it("a rank left empty with no request to come ends the run NoProgress, naming it and the cause", () => {
    // both prefill at 0, B finishes at 0.02 (2 tokens), then rank 1 is empty for good
    const r = run({ ...dp2, dummyBatches: false }, [
      req(0, 0, 100, 10, { dpRank: 0 }),
      req(1, 0, 100, 2, { dpRank: 1 })
    ])
    expect(r.status).toMatchObject({
      _tag: "NoProgress",
      atSeconds: 0.02,
      ranks: [0],
      causes: [{ rank: 1, cause: "no request to run" }]
    })
    if (r.status._tag === "NoProgress") expect(r.status.message).toMatch(/forward of ranks 0 waits/)
    expect(r.steps).toBe(2)
    expect(r.requests).toEqual({ total: 2, finished: 1, unfinished: 1, rejected: 0, stalled: 1 })
  })

  it("with dummy batches the same trace completes (rank 1 pads with dummies)", () => {
    const r = run(dp2, [req(0, 0, 100, 10, { dpRank: 0 }), req(1, 0, 100, 2, { dpRank: 1 })])
    expect(r.status._tag).toBe("Completed")
    expect(r.simulatedSeconds).toBeCloseTo(0.1, 12)
  })
})

describe("KV-aware admission and bounded no-progress detection", () => {
  // the engine accepts 4,000-token requests but each rank's KV pool holds 1,000 tokens
  const config = { dpSize: 2, kvPoolTokens: 1000, maxRequestTokens: 4000, stallSteps: 3 } as const
  const trace = [req(0, 0, 2000, 1, { dpRank: 1 }), req(1, 0, 100, 50, { dpRank: 0 })]

  it("a request larger than its rank's free KV is never admitted: with dummies the rank is named after stallSteps steps", () => {
    const r = run(config, trace)
    // attempts at t = 0, 0.01, 0.02: rank 1 empty in all three; the third ends the run
    expect(r.status).toMatchObject({ _tag: "NoProgress", atSeconds: 0.02, ranks: [1] })
    if (r.status._tag !== "NoProgress") return
    expect(r.status.causes).toEqual([
      {
        rank: 1,
        cause:
          "request 0 needs 2000 tokens of KV for its prompt, more than the rank's pool of 1000: it can never be admitted"
      }
    ])
    expect(r.steps).toBe(2)
    expect(r.requests).toEqual({ total: 2, finished: 0, unfinished: 2, rejected: 0, stalled: 1 })
  })

  it("without dummies rank 1's empty batch vetoes every forward: NoProgress at once, both ranks stalled", () => {
    const r = run({ ...config, dummyBatches: false }, trace)
    expect(r.status).toMatchObject({ _tag: "NoProgress", atSeconds: 0, ranks: [0, 1] })
    expect(r.steps).toBe(0)
    expect(r.requests.stalled).toBe(2)
    // nothing finished, so no latency is known: empty curves, not curves of zeros
    expect(r.latencyCdf.quantiles.length).toBeGreaterThan(0)
    expect(r.latencyCdf.ttftSeconds).toEqual([])
    expect(r.latencyCdf.e2eSeconds).toEqual([])
    expect(r.latencyCdf.itlSeconds).toEqual([])
    expect(r.ttftSeconds.count).toBe(0)
  })

  it("a request that fits the pool but not the free KV waits, then runs once KV frees (no false alarm)", () => {
    // B (600) holds KV until 0.5 s; C (600) cannot fit next to it and waits 50 steps: more than stallSteps
    // would allow if the rank were empty, but rank 0 decodes B meanwhile, so it is never empty
    const r = run({ dpSize: 1, kvPoolTokens: 1000, stallSteps: 3 }, [req(0, 0, 600, 50), req(1, 0, 600, 2)])
    expect(r.status._tag).toBe("Completed")
    expect(r.requests.finished).toBe(2)
    expect(firstToken(r, "1")).toBeCloseTo(0.51, 12)
  })

  it("by default the request limit is the pool: the same request is rejected on arrival", () => {
    const r = run({ dpSize: 2, kvPoolTokens: 1000 }, trace)
    expect(r.status._tag).toBe("Completed")
    expect(r.requests).toEqual({ total: 2, finished: 1, unfinished: 1, rejected: 1, stalled: 0 })
    // one request finished: its latencies make full curves
    expect(r.latencyCdf.ttftSeconds).toHaveLength(r.latencyCdf.quantiles.length)
    expect(r.latencyCdf.ttftSeconds.every((v) => v > 0)).toBe(true)
  })
})

describe("lockstep options out of range", () => {
  for (const [field, value] of [
    ["prefillIntervalSteps", 0],
    ["prefillIntervalSteps", 2.5],
    ["stallSteps", 0],
    ["stallSteps", -1],
    ["maxRequestTokens", 0],
    ["maxRequestTokens", Number.NaN]
  ] as const)
    it(`${field} = ${value}: an InvalidConfig status naming the field, nothing run`, () => {
      const r = run({ [field]: value }, [req(0, 0, 100, 3)])
      expect(r.status).toMatchObject({ _tag: "InvalidConfig", field })
      expect(r.steps).toBe(0)
      expect(r.requests).toEqual({ total: 1, finished: 0, unfinished: 1, rejected: 0, stalled: 0 })
    })
})

describe("every config field out of range: an InvalidConfig naming it, never a throw from inside or a run of nothing", () => {
  // before: dpSize 1.5 / -1 / NaN threw RangeError from building the ranks, vLLM frontEnds 0 threw
  // TypeError, dpSize 0 and maxRunningRequests NaN "completed", kvPoolTokens 0 was reported as
  // maxRequestTokens, and a bad seed or coordinatorIntervalSeconds ran or stalled
  const cases: ReadonlyArray<readonly [string, unknown]> = [
    ["dpSize", 0],
    ["dpSize", -1],
    ["dpSize", 1.5],
    ["dpSize", Number.NaN],
    ["maxRunningRequests", 0],
    ["maxRunningRequests", Number.NaN],
    ["chunkedPrefillTokens", 0],
    ["chunkedPrefillTokens", Number.POSITIVE_INFINITY],
    ["kvPoolTokens", 0],
    ["kvPoolTokens", -5],
    ["sparseTopK", 0],
    ["seed", Number.NaN],
    ["seed", 0.5],
    ["coordinatorIntervalSeconds", 0],
    ["coordinatorIntervalSeconds", Number.NaN],
    ["maxSimulatedSeconds", 0],
    ["loadSamples", -1],
    ["stepModel", 3],
    ["engine", "tgi"],
    ["lockstep", "yes"],
    ["dummyBatches", 1]
  ]
  for (const engine of ["sglang", "vllm"] as const)
    for (const [field, value] of cases)
      it(`${engine}: ${field} = ${String(value)}`, () => {
        const r = run({ engine, [field]: value } as Partial<SimConfig>, [req(0, 0, 100, 3)])
        expect(r.status).toEqual({
          _tag: "InvalidConfig",
          field,
          message: expect.stringMatching(new RegExp(`^${field} must be .*, got `))
        })
        expect(r.steps).toBe(0)
        expect(r.requests).toEqual({ total: 1, finished: 0, unfinished: 1, rejected: 0, stalled: 0 })
      })
  it("dpSize above 4096: refused before anything is built (100,000 ran out of memory)", () => {
    const r = run({ dpSize: 100_000 }, [req(0, 0, 100, 3)])
    expect(r.status).toEqual({
      _tag: "InvalidConfig",
      field: "dpSize",
      message: "dpSize must be an integer from 1 to 4096, got 100000"
    })
  })
  it("a config that is not an object: InvalidConfig, not a TypeError", () => {
    for (const bad of [null, undefined])
      expect(simulate(bad as unknown as SimConfig, [req(0, 0, 100, 3)], follow).status).toMatchObject({
        _tag: "InvalidConfig",
        field: "dpSize"
      })
  })
  it("a policy without make (a made policy where its registry entry belongs): InvalidConfig naming policy", () => {
    const made = findPolicy("total-tokens")!.make({})
    const r = simulate(
      { dpSize: 2, stepModel: fixedStep(0.01) },
      [req(0, 0, 100, 3)],
      made as unknown as SimPolicy
    )
    expect(r.status).toEqual({
      _tag: "InvalidConfig",
      field: "policy",
      message: "policy must be { name, make(options) }, e.g. a registry entry from findPolicy(name)"
    })
    expect(r.requests.finished).toBe(0)
  })
  it("a vLLM wave profile with syncInterval 0 or NaN: InvalidConfig (it ran until out of memory)", () => {
    for (const syncInterval of [0, Number.NaN, 1.5])
      expect(
        run({ engine: "vllm", vllmWaveProfile: { name: "x", syncInterval, syncFirstStep: true } }, [
          req(0, 0, 100, 3)
        ]).status
      ).toMatchObject({ _tag: "InvalidConfig", field: "vllmWaveProfile" })
  })
  it("a request the simulator cannot run: InvalidConfig naming it by index and field, nothing run", () => {
    // NaN arrival spun forever, Infinity held every other request back, inputLength 0 ended in a
    // NoProgress whose cause contradicted itself (fresh-user trial)
    const ok = req(0, 1, 100, 3)
    for (const [bad, field] of [
      [{ ...req(1, 0, 100, 3), arrivalSeconds: Number.NaN }, "trace[1].arrivalSeconds"],
      [{ ...req(1, 0, 100, 3), arrivalSeconds: Number.POSITIVE_INFINITY }, "trace[1].arrivalSeconds"],
      [{ ...req(1, 0, 100, 3), inputLength: 0 }, "trace[1].inputLength"],
      [{ ...req(1, 0, 100, 3), outputLength: Number.NaN }, "trace[1].outputLength"],
      [{ ...req(1, 0, 100, 3), requestId: 7 as unknown as string }, "trace[1].requestId"]
    ] as const) {
      const r = run({}, [ok, bad])
      expect(r.status).toMatchObject({ _tag: "InvalidConfig", field })
      expect(r.requests.total).toBe(0)
    }
  })
  it("frontEnds is checked whatever the engine; SGLang takes only its one front end", () => {
    const v = run({ engine: "vllm", frontEnds: 0 }, [req(0, 0, 100, 3)])
    expect(v.status).toMatchObject({ _tag: "InvalidConfig", field: "frontEnds" })
    // since 0.7.0 a bad value is refused on SGLang too (it was forced to 1 and ran)
    expect(run({ engine: "sglang", frontEnds: 0 }, [req(0, 0, 100, 3)]).status).toMatchObject({
      _tag: "InvalidConfig",
      field: "frontEnds"
    })
    expect(run({ engine: "sglang", frontEnds: 1 }, [req(0, 0, 100, 3)]).status).toEqual({ _tag: "Completed" })
  })
})

describe("async scheduling (asyncScheduling, vLLM --async-scheduling)", () => {
  // A decodes from step 1 on; B arrives during step 1 (t = 0.015) on the same rank
  const trace = [req(0, 0, 100, 20), req(1, 0.015, 100, 3)]

  it("step 2 was scheduled when step 1 started: B waits for step 3 (t = 0.03), its token at 0.04", () => {
    expect(firstToken(runVllm({}, trace), "1")).toBeCloseTo(0.03, 12)
    const r = runVllm({ asyncScheduling: true }, trace)
    expect(r.status._tag).toBe("Completed")
    expect(firstToken(r, "1")).toBeCloseTo(0.04, 12)
  })

  it("a rank with nothing running schedules an arrival at once; a request after idle too", () => {
    // dp 2: B lands on the idle rank 1 during A's step 1 and is prefilled in step 2 as without it
    const two = [req(0, 0, 100, 20, { dpRank: 0 }), req(1, 0.015, 100, 3, { dpRank: 1 })]
    expect(firstToken(runVllm({ dpSize: 2, asyncScheduling: true }, two), "1")).toBeCloseTo(0.03, 12)
    const idle = [req(0, 0, 100, 3), req(1, 1, 100, 2)]
    expect(firstToken(runVllm({ asyncScheduling: true }, idle), "1")).toBeCloseTo(1.01, 12)
  })

  it("with the prefill cadence, the step a new request waits through is a fast decode step", () => {
    // a step costs 50 ms with a prefill chunk on any rank, else 10 ms; 2 ranks below saturation:
    // arrivals about 40 ms apart (jittered by 0-12 ms) alternating ranks, 40 output tokens each
    const prefillSpeed: SimConfig["stepModel"] = (ranks) => ({
      stepSeconds: ranks.some((w) => w.extendTokens > 0) ? 0.05 : 0.01,
      tokenImbalanceRatio: 1,
      ranks: ranks.map(() => ({ syncWaitSeconds: 0 }))
    })
    const many = Array.from({ length: 200 }, (_, i) =>
      req(i, i * 0.04 + ((i * 7919) % 13) * 0.001, 100, 40, { dpRank: i % 2 })
    )
    const ttft = (k: number, asyncScheduling: boolean) =>
      runVllm({ dpSize: 2, stepModel: prefillSpeed, prefillIntervalSteps: k, asyncScheduling }, many)
        .ttftSeconds.mean!
    // without async scheduling the cadence's wait costs TTFT; with it the cadence lowers TTFT, as
    // vllm PR #44558 measured (813 -> 502 ms); here 75.8 -> 83.4 ms without, 124.5 -> 87.9 ms with
    expect(ttft(2, false)).toBeGreaterThan(1.05 * ttft(1, false))
    expect(ttft(2, true)).toBeLessThan(0.8 * ttft(1, true))
  })

  it("refused on the SGLang and TensorRT-LLM engines, as every vLLM-only option", () => {
    for (const engine of ["sglang", "trtllm"] as const) {
      const r = run({ engine, asyncScheduling: true }, trace)
      expect(r.status).toEqual({
        _tag: "InvalidConfig",
        field: "asyncScheduling",
        message: expect.stringMatching(/^asyncScheduling true needs the vLLM engine \(.*\), got engine /)
      })
    }
  })
})

describe("saturation guard at a saturated running-request cap (vllm PR #44558)", () => {
  // 2 ranks of at most 4 running requests, far more offered than they serve: every admitting step
  // leaves requests waiting, so the guard keeps the cadence from deferring prefills
  const prefillSpeed: SimConfig["stepModel"] = (ranks) => ({
    stepSeconds: ranks.some((w) => w.extendTokens > 0) ? 0.05 : 0.01,
    tokenImbalanceRatio: 1,
    ranks: ranks.map(() => ({ syncWaitSeconds: 0 }))
  })
  const flood = Array.from({ length: 400 }, (_, i) =>
    req(i, i * 0.002, 100, 5 + ((i * 37) % 36), { dpRank: i % 2 })
  )
  const at = (k: number) =>
    runVllm({ dpSize: 2, stepModel: prefillSpeed, maxRunningRequests: 4, prefillIntervalSteps: k }, flood)

  it("interval 2 keeps the throughput and TTFT of interval 1 within a few percent (no avalanche)", () => {
    // here 353.9 -> 346.8 tokens/s and 11.87 -> 12.08 s mean TTFT
    const one = at(1)
    const two = at(2)
    expect(one.status._tag).toBe("Completed")
    expect(two.status._tag).toBe("Completed")
    expect(two.outputTokensPerSecond).toBeGreaterThanOrEqual(0.97 * one.outputTokensPerSecond)
    expect(two.ttftSeconds.mean).toBeLessThanOrEqual(1.05 * one.ttftSeconds.mean!)
  })
})

describe("an option an engine does not have is refused for it, naming the option", () => {
  const trace = [req(0, 0, 100, 3)]
  it.each([
    ["sglang", "frontEnds", 4],
    ["trtllm", "frontEnds", 2],
    ["trtllm", "prefillIntervalSteps", 2],
    ["trtllm", "coordinatorRows", "vllm"],
    ["sglang", "attentionDpEnableBalance", true],
    ["sglang", "attentionDpTimeoutIters", 30],
    ["vllm", "attentionDpBatchingWaitIters", 0]
  ] as const)("%s refuses %s = %s", (engine, field, value) => {
    const r = run({ engine, [field]: value } as Partial<SimConfig>, trace)
    expect(r.status._tag === "InvalidConfig" && r.status.field).toBe(field)
    expect(r.status._tag === "InvalidConfig" && r.status.message).toMatch(
      new RegExp(`^${field} .* needs the (vLLM|TensorRT-LLM) engine \\(.*\\), got engine ${engine}$`)
    )
    expect(r.steps).toBe(0)
  })
  it("each at its default runs", () => {
    for (const engine of ["sglang", "vllm", "trtllm"] as const)
      expect(
        run({ engine, frontEnds: 1, attentionDpTimeoutIters: 50, attentionDpBatchingWaitIters: 10 }, trace)
          .status._tag
      ).toBe("Completed")
  })
})
