import type { Policy, RankLoad } from "@loadledger/policies"
import { roundRobin } from "@loadledger/policies"
import { describe, expect, it } from "vitest"
import { IMBALANCE_BUCKETS, simulate } from "../src/index.js"
import { asSimPolicy, fixedStep, req } from "./helpers.js"

const rr = asSimPolicy(roundRobin)

describe("latencies and step accounting", () => {
  it("one request on an idle DP-2 group: TTFT = one prefill step, ITL = one decode step", () => {
    const r = simulate({ dpSize: 2, stepModel: fixedStep(0.01) }, [req(0, 0.5, 100, 3)], rr)
    expect(r.status._tag).toBe("Completed")
    expect(r.ttftSeconds.p50).toBeCloseTo(0.01, 12)
    expect(r.itlSeconds.count).toBe(2)
    expect(r.itlSeconds.p99).toBeCloseTo(0.01, 12)
    expect(r.e2eSeconds.p50).toBeCloseTo(0.03, 12)
    expect(r.outputTokensPerSecond).toBeCloseTo(3 / 0.03, 9)
    expect(r.steps).toBe(3)
    // rank 1 ran an idle batch in every step: half the rank-steps
    expect(r.idleRankStepShare).toBe(0.5)
    // tokens [100, 0] then [1, 0]: max/mean = 2, which falls in SGLang's le=2 bucket
    expect(r.imbalanceHistogram.counts[IMBALANCE_BUCKETS.indexOf(2)]).toBe(3)
    expect(r.imbalanceHistogram.counts.reduce((a, b) => a + b, 0)).toBe(3)
  })

  it("chunked prefill: a 20,000-token prompt takes ceil(20000 / 8192) = 3 extend steps", () => {
    const r = simulate({ dpSize: 1, stepModel: fixedStep(0.01) }, [req(0, 0, 20_000, 1)], rr)
    expect(r.steps).toBe(3)
    expect(r.ttftSeconds.p50).toBeCloseTo(0.03, 12)
    expect(r.tokens.prefillComputed).toBe(20_000)
  })

  it("vLLM waves end only on a finish-sync step (every 32 steps at vllm @00080ee1): dummy steps follow", () => {
    const r = simulate({ dpSize: 2, stepModel: fixedStep(0.01), engine: "vllm" }, [req(0, 0, 100, 3)], rr)
    expect(r.status._tag).toBe("Completed")
    expect(r.steps).toBe(32)
    expect(r.idleRankStepShare).toBeCloseTo((64 - 3) / 64, 12)
    const s = simulate({ dpSize: 2, stepModel: fixedStep(0.01), engine: "sglang" }, [req(0, 0, 100, 3)], rr)
    expect(s.steps).toBe(3)
  })

  it("sync wait share is the ranks' wait over the ranks' step time", () => {
    const r = simulate(
      {
        dpSize: 2,
        stepModel: (ranks) => ({
          stepSeconds: 0.01,
          tokenImbalanceRatio: 1,
          ranks: ranks.map((_, i) => ({ syncWaitSeconds: i === 1 ? 0.004 : 0 }))
        })
      },
      [req(0, 0, 10, 2)],
      rr
    )
    expect(r.syncWaitShare).toBeCloseTo(0.004 / 0.02, 12)
  })
})

describe("prefix cache", () => {
  const blocks = [11, 12, 13, 14, 15]
  it("a repeated prefix on the same rank skips its cached full blocks, and the ledger shows only uncached tokens", () => {
    const seen: Array<ReadonlyArray<RankLoad>> = []
    const capture: Policy<null> = {
      name: "capture",
      init: () => null,
      observe: (s, loads) => {
        seen.push(loads)
        return s
      },
      route: (s, r) => ({ _tag: "Routed", rank: r.routedDpRank ?? 0, state: s, explanation: {} }),
      finish: (s) => s,
      setStatus: (s) => s
    }
    const r = simulate(
      { dpSize: 1, stepModel: fixedStep(0.01), recordRequests: true },
      [
        req(0, 0, 2148, 2, { hashIds: blocks }), // prefill 0-0.01, decode 0.01-0.02, done
        req(1, 0.015, 4096, 50), // extend 0.02-0.03
        req(2, 0.025, 2148, 2, { hashIds: blocks }) // waits behind it; 4 full blocks cached
      ],
      { name: "capture", make: () => capture as Policy<unknown> }
    )
    const b = r.outcomes!.find((o) => o.requestId === "2")!
    expect(b.cachedTokens).toBe(4 * 512)
    expect(r.tokens.prefillComputed).toBe(2148 + 4096 + (2148 - 2048))
    expect(r.prefixCacheHitRate).toBeCloseTo(2048 / (2148 * 2 + 4096), 12)
    // the snapshot published at t = 0.03: request 1 holds 4,096 tokens, request 2 waits with 100 uncached
    const at = seen.find((l) => l[0]!.timestamp === 0.03)!
    expect(at[0]).toMatchObject({ numRunningReqs: 1, numWaitingReqs: 1, numTotalTokens: 4096 + 100 })
  })

  it("the cache is per rank: the same prefix on another rank is a miss", () => {
    const r = simulate(
      { dpSize: 2, stepModel: fixedStep(0.01), recordRequests: true },
      [
        req(0, 0, 2148, 1, { hashIds: blocks, dpRank: 0 }),
        req(1, 1, 2148, 1, { hashIds: blocks, dpRank: 1 })
      ],
      rr
    )
    expect(r.outcomes!.map((o) => o.cachedTokens)).toEqual([0, 0])
    expect(r.prefixCacheHitRate).toBe(0)
  })
})

describe("KV pool", () => {
  it("retracts when the pool runs out; the request stays on its rank and recomputes", () => {
    const r = simulate(
      { dpSize: 1, stepModel: fixedStep(0.01), kvPoolTokens: 3000, recordRequests: true },
      [req(0, 0, 1000, 1000), req(1, 0, 1000, 1000)],
      rr
    )
    expect(r.status._tag).toBe("Completed")
    expect(r.requests.finished).toBe(2)
    expect(r.retractions).toBeGreaterThan(0)
    expect(r.outcomes!.every((o) => o.rank === 0 && o.outputTokens === 1000)).toBe(true)
    expect(r.requestsPerRank).toEqual([2])
    // every delivered token came from a decode step or a (re-)prefill step
    expect(r.tokens.output).toBe(r.tokens.decode + r.tokens.outputFromPrefill)
    // SGLang retracts decoding requests only, so each retraction is followed by one more prefill token
    expect(r.tokens.outputFromPrefill).toBe(2 + r.retractions)
  })

  it("a request that can never fit is rejected, not run", () => {
    const r = simulate(
      { dpSize: 1, stepModel: fixedStep(0.01), kvPoolTokens: 1000, recordRequests: true },
      [req(0, 0, 990, 20)],
      rr
    )
    expect(r.requests).toEqual({ total: 1, finished: 0, unfinished: 1, rejected: 1, stalled: 0 })
    expect(r.outcomes![0]!.rejected).toMatch(/1010 tokens of KV/)
  })
})

describe("no-progress detection", () => {
  it("ranks holding work that can never run end the run with NoProgress naming them", () => {
    const r = simulate(
      // an engine that accepts requests its KV pool cannot hold (maxRequestTokens above the pool);
      // a cap of 0 running requests, which this test used, is now an InvalidConfig
      { dpSize: 3, stepModel: fixedStep(0.01), kvPoolTokens: 1000, maxRequestTokens: 100_000 },
      [req(0, 2, 5000, 1, { dpRank: 1 })],
      rr
    )
    expect(r.status).toMatchObject({
      _tag: "NoProgress",
      atSeconds: 2,
      ranks: [1],
      causes: [
        {
          rank: 1,
          cause:
            "request 0 needs 5000 tokens of KV for its prompt, more than the rank's pool of 1000: it can never be admitted"
        }
      ]
    })
    expect(r.steps).toBe(0)
  })
  it("a step model returning a zero step is reported, not looped on", () => {
    const r = simulate(
      {
        dpSize: 1,
        stepModel: (ranks) => ({
          stepSeconds: 0,
          tokenImbalanceRatio: 1,
          ranks: ranks.map(() => ({ syncWaitSeconds: 0 }))
        })
      },
      [req(0, 0, 10, 1)],
      rr
    )
    expect(r.status._tag).toBe("NoProgress")
  })
  it("maxSimulatedSeconds stops a run with TimeLimit", () => {
    const r = simulate(
      { dpSize: 1, stepModel: fixedStep(1), maxSimulatedSeconds: 2.5 },
      [req(0, 0, 10, 100)],
      rr
    )
    expect(r.status).toEqual({ _tag: "TimeLimit", atSeconds: 2.5 })
    expect(r.requests.unfinished).toBe(1)
  })
})

describe("percentiles", () => {
  it("ITL percentiles interpolate between order statistics of all gaps (numpy's linear method)", () => {
    // two requests on two ranks: gaps 0.01 (x4 from a 0.01 s model) ... use a step model alternating 0.01 / 0.03
    let k = 0
    const r = simulate(
      {
        dpSize: 1,
        stepModel: (ranks) => ({
          stepSeconds: k++ % 2 === 0 ? 0.01 : 0.03,
          tokenImbalanceRatio: 1,
          ranks: ranks.map(() => ({ syncWaitSeconds: 0 }))
        })
      },
      [req(0, 0, 10, 5)],
      rr
    )
    // steps: prefill 0.01, decodes 0.03, 0.01, 0.03, 0.01 -> gaps [0.03, 0.01, 0.03, 0.01]
    expect(r.itlSeconds.count).toBe(4)
    expect(r.itlSeconds.p50).toBeCloseTo(0.02, 12)
    expect(r.itlSeconds.p90).toBeCloseTo(0.03, 12)
    expect(r.itlSeconds.mean).toBeCloseTo(0.02, 12)
  })
})

describe("progress", () => {
  it("onProgress counts requests done (finished or rejected) and ends at the total", () => {
    const calls: Array<[number, number]> = []
    const trace = [req(0, 0, 10, 2), req(1, 0.1, 10_000, 1), req(2, 0.2, 10, 3)]
    const r = simulate({ dpSize: 1, stepModel: fixedStep(0.01), kvPoolTokens: 5000 }, trace, rr, {
      onProgress: (done, total) => calls.push([done, total])
    })
    expect(r.requests).toMatchObject({ finished: 2, rejected: 1 })
    expect(calls.at(-1)).toEqual([3, 3])
    for (let i = 1; i < calls.length; i++) expect(calls[i]![0]).toBeGreaterThanOrEqual(calls[i - 1]![0])
  })
})
