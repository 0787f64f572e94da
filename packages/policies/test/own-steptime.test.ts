import { gpus, models, stepTimeFromAggregates } from "@loadledger/step-time"
import { lawNames, policyLaws, registryArbitraries } from "@loadledger/testing"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  findPolicy,
  glm53H200StepCost,
  makeStepTimeAware,
  type Policy,
  prefillSeconds,
  type RankLoad,
  type StepTimeAwareState,
  stepCostFrom
} from "../src/index.js"
import {
  emptyRankPrefixes,
  ladderBlock,
  ladderCount,
  matchRankPrefixes,
  recordRankPrefixes
} from "../src/own/internal/RankPrefixes.js"
import { cappedRows, idleAt as idle } from "./support/stepTimeRows.js"

const routed = (r: ReturnType<ReturnType<typeof makeStepTimeAware>["route"]>) => {
  if (r._tag !== "Routed") throw new Error(r.message)
  return r
}

describe("step cost model", () => {
  it("glm53H200StepCost is exactly stepCostFrom(@loadledger/step-time glm-5.3 / h200), three digits", () => {
    const config = { model: models["glm-5.3"]!, gpu: gpus.h200! }
    expect(stepCostFrom((ranks) => stepTimeFromAggregates(config, ranks))).toEqual(glm53H200StepCost)
    // another GPU gives another model: B200 prefills the same chunk in about half the time
    const b200 = stepCostFrom((ranks) => stepTimeFromAggregates({ ...config, gpu: gpus.b200! }, ranks))
    expect(b200.extendSecondsPerToken).toBe(1.73e-5)
    expect(b200.extendSecondsPerToken / glm53H200StepCost.extendSecondsPerToken).toBeLessThan(0.5)
  })
  it("the registry entry prices with PolicyOptions.stepCost (the engines' model), else GLM-5.3/H200", () => {
    const config = { model: models["deepseek-v3"]!, gpu: gpus.h200! }
    const stepCost = stepCostFrom((ranks) => stepTimeFromAggregates(config, ranks))
    const entry = findPolicy("step-time-aware")!
    const scores = (p: Policy<unknown>) => {
      const s0 = p.observe(
        p.init(2),
        [0, 1].map((dpRank) => ({
          dpRank,
          timestamp: 0,
          numRunningReqs: 0,
          numWaitingReqs: 0,
          numTotalTokens: 0
        })),
        0
      )
      const r = p.route(s0, { requestId: "a", inputLength: 20_000 }, 0)
      return r._tag === "Routed" ? r.explanation?.scores : undefined
    }
    const own = scores(entry.make({ stepCost }))
    expect(own).toEqual(scores(makeStepTimeAware({ cost: stepCost }) as Policy<unknown>))
    // DeepSeek-V3's dense MLA prefills 20,000 tokens in about twice GLM-5.3's DSA time
    expect(own![0]! / scores(entry.make({}))![0]!).toBeGreaterThan(1.5)
    expect(scores(entry.make({}))).toEqual(scores(makeStepTimeAware() as Policy<unknown>))
  })
  it("stepCostFrom reads the coefficients of a linear step-time function back", () => {
    const truth = { fixed: 0.002, perToken: 3e-6, perPair: 1e-11, perRequest: 5e-5, perContext: 2e-9 }
    const cost = stepCostFrom(
      (ranks) => ({
        stepSeconds:
          0.01 +
          Math.max(
            ...ranks.map((r) =>
              r.extendTokens > 0
                ? truth.fixed +
                  truth.perToken * r.tokens +
                  truth.perPair * (r.attentionPairs - (r.tokens * (r.tokens + 1)) / 2)
                : truth.perRequest * r.numDecodes + truth.perContext * r.attentionPairs
            )
          )
      }),
      { decodeRequests: 1, contextTokens: 1 }
    )
    expect(cost.extendSecondsPerToken).toBeCloseTo(truth.perToken, 12)
    expect(cost.extendSecondsPerTokenPerPrefixToken).toBeCloseTo(truth.perPair, 16)
    // to three significant digits: 5.0002e-5 reads back as 5e-5
    expect(cost.decodeSecondsPerRequest).toBe(5e-5)
  })
  it("prefillSeconds is the chunk-by-chunk sum in closed form", () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 300_000 }),
        fc.nat({ max: 200_000 }),
        fc.integer({ min: 1, max: 20_000 }),
        (u, p, k) => {
          const model = { ...glm53H200StepCost, chunkTokens: k, extendStepSeconds: 0.003 }
          let loop = 0
          for (let left = u, q = p; left > 0; ) {
            const e = Math.min(left, k)
            loop +=
              model.extendStepSeconds +
              model.extendSecondsPerToken * e +
              model.extendSecondsPerTokenPerPrefixToken * e * q
            left -= e
            q += e
          }
          expect(prefillSeconds(model, u, p)).toBeCloseTo(loop, 9)
        }
      ),
      { numRuns: 300 }
    )
  })
})

describe("router-side prefix index (ladder of recorded blocks)", () => {
  it("ladderCount counts the ladder positions below a prompt's block count", () => {
    for (let b = 0; b < 400; b++) {
      let count = 0
      while (ladderBlock(count) < b) count++
      expect(ladderCount(b)).toBe(count)
    }
    expect([0, 1, 2, 3, 4, 5, 6].map(ladderBlock)).toEqual([0, 1, 3, 7, 15, 31, 47])
  })
  it("a rank matches the largest ladder position within the prefix it was sent, never more", () => {
    // prompts of one family share a chained prefix; each is sent to a random rank
    const prompt = fc.record({
      shared: fc.nat({ max: 80 }),
      own: fc.nat({ max: 80 }),
      rank: fc.nat({ max: 3 })
    })
    fc.assert(
      fc.property(
        fc.array(prompt, { minLength: 1, maxLength: 8 }),
        fc.nat({ max: 160 }),
        (sent, probeLen) => {
          let index = emptyRankPrefixes(1 << 16)
          const held: Array<Set<string>> = [new Set(), new Set(), new Set(), new Set()]
          sent.forEach((p, i) => {
            const hashes = [
              ...Array.from({ length: p.shared }, (_, b) => `s${b}`),
              ...Array.from({ length: p.own }, (_, b) => `p${i}-${b}`)
            ]
            index = recordRankPrefixes(index, hashes, p.rank, i + 1)
            for (const h of hashes) held[p.rank]!.add(h)
          })
          const probe = Array.from({ length: probeLen }, (_, b) => `s${b}`)
          const out = new Array<number>(4)
          matchRankPrefixes(index, probe, () => true, out)
          for (let r = 0; r < 4; r++) {
            let truth = 0
            while (truth < probe.length && held[r]!.has(probe[truth]!)) truth++
            let expected = 0
            for (let i = 0; i < ladderCount(probe.length); i++)
              if (ladderBlock(i) < truth) expected = ladderBlock(i) + 1
            expect(out[r]).toBe(expected)
          }
        }
      ),
      { numRuns: 300 }
    )
  })
  it("a block sent more tokens ago than the rank's cache keeps no longer counts", () => {
    let index = emptyRankPrefixes(1024)
    index = recordRankPrefixes(index, ["a", "b"], 0, 1000)
    const out = [0, 0]
    matchRankPrefixes(index, ["a", "b"], (_r, stamp) => 5000 - stamp <= 4000, out)
    expect(out).toEqual([2, 0])
    matchRankPrefixes(index, ["a", "b"], (_r, stamp) => 5001 - stamp <= 4000, out)
    expect(out).toEqual([0, 0])
  })
})

describe("step-time-aware", () => {
  // the prefill rule alone (the decode term, on by default with one front end, is tested below)
  const p = makeStepTimeAware({ decodeWeight: 0 })
  const start = (n: number, rows?: ReadonlyArray<RankLoad>) =>
    p.observe(p.init(n), rows ?? Array.from({ length: n }, (_, r) => idle(r)), 0)

  it("a prompt goes where its prefill overlaps another rank's long prefill", () => {
    const a = routed(p.route(start(3), { requestId: "a", inputLength: 100_000 }, 0))
    expect(a.rank).toBe(0)
    const b = routed(p.route(a.state, { requestId: "b", inputLength: 4000 }, 1))
    expect(b.rank).toBe(1)
    // rank 0's score: the rest of a's prefill, then b's; rank 1's: b's alone
    const left = prefillSeconds(glm53H200StepCost, 100_000, 0) - 1
    const own = prefillSeconds(glm53H200StepCost, 4000, 0)
    expect(b.explanation.scores).toEqual([left + own, own, own])
    // ranks 1 and 2 tie: the rotating index takes the next one
    const c = routed(p.route(b.state, { requestId: "c", inputLength: 4000 }, 10))
    expect(c.rank).toBe(2)
  })

  it("a follow-up turn goes to the rank holding its prefix once that rank's prefill is done, not before", () => {
    const turn1 = Array.from({ length: 40 }, (_, b) => `c${b}`)
    const turn2 = [...turn1, "c40", "c41"]
    const a = routed(p.route(start(2), { requestId: "t1", inputLength: 20_480, prefixHashes: turn1 }, 0))
    expect(a.rank).toBe(0)
    // while rank 0 still prefills turn 1, the follow-up waits less on the idle rank 1
    const early = routed(
      p.route(a.state, { requestId: "t2", inputLength: 21_504, prefixHashes: turn2 }, 0.01)
    )
    expect(early.rank).toBe(1)
    // later, rank 0 is free and holds 40 of 42 blocks: the follow-up prefills 1,024 tokens there
    const late = routed(p.route(a.state, { requestId: "t2", inputLength: 21_504, prefixHashes: turn2 }, 30))
    expect(late.rank).toBe(0)
    expect(late.explanation.details?.matchedBlocks).toEqual([32, 0])
  })

  it("the prefix estimate ages out once the rank was sent more than its cache holds", () => {
    const q = makeStepTimeAware({ cacheTokens: 30_000 })
    const s0 = q.observe(q.init(2), [idle(0), idle(1)], 0)
    const hashes = Array.from({ length: 16 }, (_, b) => `x${b}`)
    let s = routed(
      q.route(s0, { requestId: "x", inputLength: 8192, prefixHashes: hashes, routedDpRank: 1 }, 0)
    ).state
    const hit = routed(q.route(s, { requestId: "y", inputLength: 8192, prefixHashes: hashes }, 60))
    expect(hit.rank).toBe(1)
    // 32,768 more tokens through rank 1 since the prefix was sent: more than the 30,000 it keeps
    for (let i = 0; i < 4; i++)
      s = routed(q.route(s, { requestId: `f${i}`, inputLength: 8192, routedDpRank: 1 }, 1 + i)).state
    const miss = routed(q.route(s, { requestId: "y", inputLength: 8192, prefixHashes: hashes }, 60))
    expect(miss.explanation.details?.matchedBlocks).toEqual([0, 0])
  })

  it("with clientCount front ends, a rank never counts fewer requests than clientCount x this front end's in flight", () => {
    const q = makeStepTimeAware({ clientCount: 4, decodeWeight: 64 })
    const rows = [idle(0, 0), idle(1, 0)]
    let s: StepTimeAwareState = q.observe(q.init(2), rows, 0)
    s = routed(q.route(s, { requestId: "a", inputLength: 10, routedDpRank: 0 }, 0)).state
    // a snapshot after the route that does not show the request yet (a lagging publisher)
    s = q.observe(s, [idle(0, 100), idle(1, 100)], 100)
    const r = routed(q.route(s, { requestId: "b", inputLength: 10 }, 100))
    expect(r.rank).toBe(1)
    const d = glm53H200StepCost.decodeSecondsPerRequest * 64
    expect((r.explanation.scores?.[0] ?? 0) - (r.explanation.scores?.[1] ?? 0)).toBeCloseTo(4 * d, 12)
    // once a finishes, the ranks tie again
    const after = routed(q.route(q.finish(s, ["a"], 101), { requestId: "c", inputLength: 10 }, 101))
    expect(after.explanation.scores?.[0]).toBeCloseTo(after.explanation.scores?.[1] ?? Number.NaN, 12)
  })

  it("routes since a snapshot count (clientCount times) until a snapshot stamped after them arrives", () => {
    // several front ends: pending routes count in the decode term and KV feasibility; a fresh
    // rank's queue is left out of the score (every front end reads the same snapshot)
    const q = makeStepTimeAware({ clientCount: 3, decodeWeight: 64, staleAfterSeconds: 1000 })
    let s = q.observe(q.init(2), [idle(0), idle(1)], 0)
    s = routed(q.route(s, { requestId: "a", inputLength: 5000, routedDpRank: 0 }, 1)).state
    const before = routed(q.route(s, { requestId: "b", inputLength: 10 }, 100))
    const after = routed(
      q.route(q.observe(s, [idle(0, 2), idle(1, 2)], 100), { requestId: "b", inputLength: 10 }, 100)
    )
    const d = 64 * glm53H200StepCost.decodeSecondsPerRequest
    const dc = 64 * glm53H200StepCost.decodeSecondsPerContextToken
    // pending on rank 0: 3 x a's prompt as context; the request count is 3 x a either way (the
    // in-flight floor)
    expect((before.explanation.scores?.[0] ?? 0) - (after.explanation.scores?.[0] ?? 0)).toBeCloseTo(
      3 * 5000 * dc,
      12
    )
    // the snapshot at t = 2 includes a: rank 0 still counts 3 x one request in flight (the floor)
    expect((after.explanation.scores?.[0] ?? 0) - (after.explanation.scores?.[1] ?? 0)).toBeCloseTo(3 * d, 12)
  })

  it("the decode term: on (w = 8) with one front end by default, off with several; it sends a prefill tie to the lighter decode", () => {
    // equal prefill queues (none), rank 0 decodes 30 requests over 300k tokens of context, rank 1 is idle
    const rows = [
      idle(0, 0, { numRunningReqs: 30, numTotalTokens: 300_000, kvCacheUsage: 0.5 }),
      idle(1, 0, { kvCacheUsage: 0 })
    ]
    const one = makeStepTimeAware()
    const r1 = routed(one.route(one.observe(one.init(2), rows, 0), { requestId: "d", inputLength: 1000 }, 0))
    expect(r1.rank).toBe(1)
    const c = glm53H200StepCost
    const prefill = prefillSeconds(c, 1000, 0)
    const decode = (requests: number, context: number) =>
      8 * ((requests + 1) * c.decodeSecondsPerRequest + (context + 1000) * c.decodeSecondsPerContextToken)
    expect(r1.explanation.scores?.[0]).toBeCloseTo(prefill + decode(30, 300_000), 12)
    expect(r1.explanation.scores?.[1]).toBeCloseTo(prefill + decode(0, 0), 12)
    // several front ends read one stale snapshot: no decode term by default, the tie rotates
    const four = makeStepTimeAware({ clientCount: 4 })
    const r4 = routed(
      four.route(four.observe(four.init(2), rows, 0), { requestId: "d", inputLength: 1000 }, 0)
    )
    expect(r4.explanation.scores).toEqual([prefill, prefill])
    expect(r4.rank).toBe(0)
    // an explicit weight wins over either default
    const off = makeStepTimeAware({ decodeWeight: 0 })
    const r0 = routed(off.route(off.observe(off.init(2), rows, 0), { requestId: "d", inputLength: 1000 }, 0))
    expect(r0.explanation.scores).toEqual([prefill, prefill])
  })

  it("one front end counts a fresh snapshot's queue; several in whole seconds, and in full for a stale rank", () => {
    const rows = [idle(0, 0, { numWaitingReqs: 2, numWaitingUncachedTokens: 20_000 }), idle(1, 0)]
    const one = routed(p.route(start(2, rows), { requestId: "q", inputLength: 1000 }, 0))
    expect(one.rank).toBe(1)
    expect(one.explanation.scores?.[0]).toBeCloseTo(
      prefillSeconds(glm53H200StepCost, 20_000, 0) + prefillSeconds(glm53H200StepCost, 1000, 0),
      12
    )
    const q = makeStepTimeAware({ clientCount: 4 })
    const fresh = routed(q.route(q.observe(q.init(2), rows, 0), { requestId: "q", inputLength: 1000 }, 0))
    expect(fresh.explanation.scores).toEqual([
      prefillSeconds(glm53H200StepCost, 1000, 0),
      prefillSeconds(glm53H200StepCost, 1000, 0)
    ])
    // a queue of more than a second counts in whole seconds
    const big = [idle(0, 0, { numWaitingReqs: 9, numWaitingUncachedTokens: 60_000 }), idle(1, 0)]
    const r2 = routed(q.route(q.observe(q.init(2), big, 0), { requestId: "q", inputLength: 1000 }, 0))
    const whole = Math.floor(prefillSeconds(glm53H200StepCost, 60_000, 0))
    expect(whole).toBeGreaterThan(1)
    expect(r2.explanation.scores?.[0]).toBeCloseTo(whole + prefillSeconds(glm53H200StepCost, 1000, 0), 12)
    // rank 1's row is 5 s old: stale, it is taken to have at least rank 0's queue
    const stale = [rows[0]!, idle(1, -5)]
    const r = routed(q.route(q.observe(q.init(2), stale, 0), { requestId: "q", inputLength: 1000 }, 0))
    expect(r.explanation.scores?.[1]).toBeCloseTo(
      prefillSeconds(glm53H200StepCost, 20_000, 0) + prefillSeconds(glm53H200StepCost, 1000, 0),
      12
    )
  })

  it("KV feasibility: a prompt only rank 1's free KV holds goes there, counting what was routed since", () => {
    const rows = [
      idle(0, 0, { kvAvailableTokens: 100 }),
      idle(1, 0, { kvAvailableTokens: 9000, numTotalTokens: 50_000 })
    ]
    const s = start(2, rows)
    const r = routed(p.route(s, { requestId: "q", inputLength: 5000 }, 0))
    expect(r.rank).toBe(1)
    // after 5,000 tokens went to rank 1, a second 5,000 fits nowhere: no rank is excluded
    const r2 = routed(p.route(r.state, { requestId: "q2", inputLength: 5000 }, 0))
    expect(r2.rank).toBe(0)
  })

  it("learns a rank's KV pool from numTotalTokens / kvCacheUsage while nothing waits", () => {
    const rows = [
      idle(0, 0, { numRunningReqs: 2, numTotalTokens: 50_000, kvCacheUsage: 0.5 }),
      idle(1, 0, { numRunningReqs: 2, numWaitingReqs: 3, numTotalTokens: 80_000, kvCacheUsage: 0.5 })
    ]
    const q = makeStepTimeAware({ decodeWeight: 64 })
    const s = q.observe(q.init(2), rows, 0)
    // rank 1: 50,000 tokens in KV (0.5 of a 100,000 pool), 30,000 waiting to be prefilled
    const r = routed(q.route(s, { requestId: "q", inputLength: 1000 }, 0))
    expect(r.rank).toBe(0)
    const d = 64 * glm53H200StepCost.decodeSecondsPerRequest
    expect((r.explanation.scores?.[1] ?? 0) - (r.explanation.scores?.[0] ?? 0)).toBeCloseTo(
      prefillSeconds(glm53H200StepCost, 30_000, 0) + 3 * d,
      9
    )
  })

  it("typed errors", () => {
    expect(p.route(p.init(0), { requestId: "a", inputLength: 1 }, 0)).toMatchObject({ reason: "NoRanks" })
    expect(p.route(start(2), { requestId: "a", inputLength: -1 }, 0)).toMatchObject({
      reason: "InvalidInput",
      field: "inputLength"
    })
    expect(p.route(start(2), { requestId: "a", inputLength: 1, routedDpRank: 2 }, 0)).toMatchObject({
      reason: "InvalidRoutedRank",
      field: "routedDpRank"
    })
    expect(
      p.route(p.setStatus(start(2), [false, false]), { requestId: "a", inputLength: 1 }, 0)
    ).toMatchObject({
      reason: "AllRanksUnavailable"
    })
  })
})

describe("step-time-aware: running slots", () => {
  // rank 0 runs 64 requests (at the cap) with 3 waiting and little to prefill; rank 1 runs 10 with a
  // longer prefill queue: without a cap rank 0 is the shorter wait, with the cap its request would
  // wait for a slot behind 3 others
  const rows = cappedRows
  const request = { requestId: "a", inputLength: 500 }
  const scoresOf = (o: Parameters<typeof makeStepTimeAware>[0]) => {
    const p = makeStepTimeAware({ decodeWeight: 0, ...o })
    return routed(p.route(p.observe(p.init(2), rows, 0), request, 0))
  }

  it("a rank at its cap adds slotWaitSeconds per request beyond it; unset, no rank has a cap", () => {
    const c = glm53H200StepCost
    const base = [prefillSeconds(c, 300, 0), prefillSeconds(c, 4000, 0)].map(
      (q) => q + prefillSeconds(c, 500, 0)
    )
    const none = scoresOf({})
    expect(none.rank).toBe(0)
    expect(none.explanation.scores?.[0]).toBeCloseTo(base[0]!, 12)
    expect(none.explanation.scores?.[1]).toBeCloseTo(base[1]!, 12)
    // 67 requests + this one = 4 beyond a cap of 64: 4 x 0.3 s
    const capped = scoresOf({ maxRunningRequests: 64 })
    expect(capped.rank).toBe(1)
    expect(capped.explanation.scores?.[0]).toBeCloseTo(base[0]! + 4 * 0.3, 12)
    expect(capped.explanation.scores?.[1]).toBeCloseTo(base[1]!, 12)
    const quick = scoresOf({ maxRunningRequests: 64, slotWaitSeconds: 0.01 })
    expect(quick.explanation.scores?.[0]).toBeCloseTo(base[0]! + 4 * 0.01, 12)
    expect(quick.rank).toBe(0)
    // a cap that is not a number >= 1 is no cap; a bad slot wait is the default
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY])
      expect(scoresOf({ maxRunningRequests: bad }).explanation.scores).toEqual(none.explanation.scores)
    expect(scoresOf({ maxRunningRequests: 64, slotWaitSeconds: -1 }).explanation.scores).toEqual(
      capped.explanation.scores
    )
  })

  it("without the option, a rank's row's maxRunningRequests is its cap; the option wins over it", () => {
    const c = glm53H200StepCost
    const base = [prefillSeconds(c, 300, 0), prefillSeconds(c, 4000, 0)].map(
      (q) => q + prefillSeconds(c, 500, 0)
    )
    const withCap = rows.map((row) => ({ ...row, maxRunningRequests: 64 }))
    const p = makeStepTimeAware({ decodeWeight: 0 })
    const r = routed(p.route(p.observe(p.init(2), withCap, 0), request, 0))
    expect(r.rank).toBe(1)
    expect(r.explanation.scores?.[0]).toBeCloseTo(base[0]! + 4 * 0.3, 12)
    // the option (a cap of 66: 67 + 1 is 2 beyond it) wins over the rows' 64
    const q = makeStepTimeAware({ decodeWeight: 0, maxRunningRequests: 66 })
    const o = routed(q.route(q.observe(q.init(2), withCap, 0), request, 0))
    expect(o.explanation.scores?.[0]).toBeCloseTo(base[0]! + 2 * 0.3, 12)
    // a bad decodeWeight counts as unset (8 with one front end), as the other options
    const byDefault = makeStepTimeAware()
    const expected = routed(byDefault.route(byDefault.observe(byDefault.init(2), rows, 0), request, 0))
    expect(expected.explanation.scores).not.toEqual(scoresOf({}).explanation.scores)
    for (const bad of [Number.NaN, -1])
      expect(scoresOf({ decodeWeight: bad }).explanation.scores).toEqual(expected.explanation.scores)
  })

  it("routes since the snapshot fill the slots (clientCount times), and the registry entry takes the cap", () => {
    // extra score of the capped policy over the uncapped one, route by route, on two ranks running 10
    const extra = (clientCount: number) => {
      const snapshot = [idle(0, 0, { numRunningReqs: 10 }), idle(1, 0, { numRunningReqs: 10 })]
      const [capped, free] = [12, undefined].map((maxRunningRequests) =>
        makeStepTimeAware({ decodeWeight: 0, clientCount, maxRunningRequests })
      )
      let [a, b] = [capped!, free!].map((p) => p.observe(p.init(2), snapshot, 0))
      const out: Array<Array<number>> = []
      for (let i = 0; i < 5; i++) {
        const ra = routed(capped!.route(a!, { requestId: `r${i}`, inputLength: 100 }, 0))
        const rb = routed(free!.route(b!, { requestId: `r${i}`, inputLength: 100 }, 0))
        expect(ra.rank).toBe(rb.rank)
        out.push(
          ra.explanation.scores!.map((x, r) => Math.round((x - rb.explanation.scores![r]!) * 1e9) / 1e9)
        )
        a = ra.state
        b = rb.state
      }
      return out
    }
    // one front end: two free slots per rank, then each route beyond them costs 0.3 s more
    expect(extra(1)).toEqual([
      [0, 0],
      [0, 0],
      [0, 0],
      [0.3, 0],
      [0.3, 0.3]
    ])
    // two front ends: each of this one's routes counts twice
    expect(extra(2)).toEqual([
      [0, 0],
      [0.3, 0],
      [0.3, 0.3],
      [0.9, 0.3],
      [0.9, 0.9]
    ])
    const entry = findPolicy("step-time-aware")!
    const made = entry.make({ maxRunningRequests: 64 }) as unknown as ReturnType<typeof makeStepTimeAware>
    expect(routed(made.route(made.observe(made.init(2), rows, 0), request, 0)).rank).toBe(1)
  })

  it("with a cap, step-time-aware still holds every law but permutationEquivariant", () => {
    const laws = policyLaws(makeStepTimeAware({ maxRunningRequests: 32 }), registryArbitraries)
    for (const law of lawNames) {
      const property = laws[law] as fc.IPropertyWithHooks<[unknown]>
      // two identical idle ranks: the rotating index, not the label-free state, decides (seeded: a
      // search for the counterexample must not depend on the run)
      if (law === "permutationEquivariant")
        expect(fc.check(property, { numRuns: 300, seed: 1 }).failed).toBe(true)
      else fc.assert(property, { numRuns: 60 })
    }
  })
})

describe("step-time-aware: shared prefixes across front ends", () => {
  const idle4 = Array.from({ length: 4 }, (_, r) => idle(r))
  const fnv = (x: string) => {
    let h = 0x811c9dc5
    for (let i = 0; i < x.length; i++) h = Math.imul(h ^ x.charCodeAt(i), 0x01000193)
    return (h >>> 0) % 4
  }

  it("with several front ends the home (hash of the first block no two ranks hold) is credited 0.3 x its own prefill", () => {
    const p = makeStepTimeAware({ clientCount: 4, clientIndex: 0 })
    const s0 = p.observe(p.init(4), idle4, 0)
    const c = glm53H200StepCost
    const own = prefillSeconds(c, 1000, 0)
    const r = routed(
      p.route(s0, { requestId: "a", inputLength: 1000, prefixHashes: ["conv-7", "turn-1"] }, 0)
    )
    const home = fnv("conv-7")
    expect(r.rank).toBe(home)
    expect(r.explanation.scores?.map((x, i) => (i === home ? x + 0.3 * own : x))).toEqual([
      own,
      own,
      own,
      own
    ])
    // a block two ranks hold (a system prompt) is no key: the next block is. The credit is the
    // difference to the same front end without it (homeWeight 0), routed through the same steps
    const off = makeStepTimeAware({ clientCount: 4, clientIndex: 0, homeWeight: 0 })
    const credit = (x: typeof p) => {
      let s = x.observe(x.init(4), idle4, 0)
      for (const [id, rank] of [
        ["x", 0],
        ["y", 1]
      ] as const)
        s = routed(
          x.route(s, { requestId: id, inputLength: 1000, prefixHashes: ["sys", id], routedDpRank: rank }, 0)
        ).state
      return routed(x.route(s, { requestId: "b", inputLength: 1000, prefixHashes: ["sys", "conv-9"] }, 0))
        .explanation.scores!
    }
    const [on, without] = [credit(p), credit(off)]
    const diff = on.map((x, i) => without[i]! - x)
    const cachedOwn = prefillSeconds(c, 500, 500)
    expect(diff.map((d, i) => (i === fnv("conv-9") ? d / cachedOwn : d))).toEqual(
      [0, 1, 2, 3].map((i) => (i === fnv("conv-9") ? expect.closeTo(0.3, 12) : 0))
    )
    // one front end sees every route: no home credit by default; an explicit weight wins
    const one = makeStepTimeAware({ decodeWeight: 0 })
    const o = routed(
      one.route(
        one.observe(one.init(4), idle4, 0),
        { requestId: "a", inputLength: 1000, prefixHashes: ["conv-7"] },
        0
      )
    )
    expect(o.explanation.scores).toEqual([own, own, own, own])
    const f = routed(
      off.route(
        off.observe(off.init(4), idle4, 0),
        { requestId: "a", inputLength: 1000, prefixHashes: ["conv-7"] },
        0
      )
    )
    expect(f.explanation.scores).toEqual([own, own, own, own])
  })

  it("the credit is bounded (a home with a longer queue is passed over) and never goes to an unknown or stale rank", () => {
    const p = makeStepTimeAware({ clientCount: 4, clientIndex: 0 })
    const home = fnv("conv-7")
    const request = { requestId: "a", inputLength: 1000, prefixHashes: ["conv-7"] }
    // the home has 3 s of queued prefill (counted in whole seconds with several front ends)
    const rows = idle4.map((row) =>
      row.dpRank === home
        ? { ...row, numWaitingReqs: 5, numTotalTokens: 200_000, numWaitingUncachedTokens: 200_000 }
        : row
    )
    expect(routed(p.route(p.observe(p.init(4), rows, 0), request, 0)).rank).not.toBe(home)
    const unknown = idle4.map((row) =>
      row.dpRank === home ? { dpRank: home, unknown: { reason: "ScrapeFailed", message: "timeout" } } : row
    ) as ReadonlyArray<RankLoad>
    const u = routed(p.route(p.observe(p.init(4), unknown, 0), request, 0))
    expect(u.rank).not.toBe(home)
    // at t = 5 every snapshot is stale (1 s): no credit, so the tie rotates from rank 0
    const stale = routed(p.route(p.observe(p.init(4), idle4, 0), request, 5))
    expect(stale.explanation.scores!.every((x) => x === stale.explanation.scores![0])).toBe(true)
  })

  it("with several front ends and a cap, step-time-aware holds every law but permutationEquivariant", () => {
    const laws = policyLaws(
      makeStepTimeAware({ clientCount: 3, clientIndex: 1, maxRunningRequests: 32 }),
      registryArbitraries
    )
    for (const law of lawNames) {
      const property = laws[law] as fc.IPropertyWithHooks<[unknown]>
      if (law === "permutationEquivariant")
        expect(fc.check(property, { numRuns: 300, seed: 1 }).failed).toBe(true)
      else fc.assert(property, { numRuns: 60 })
    }
  })
})
