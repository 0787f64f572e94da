// What each policy does with the ledger contract's other rows: absent fields, an absent timestamp,
// `unknown` rows (loadledger's extension; upstream always has every field). Stale and unhealthy
// ranks are covered next to each policy's own tests.
import {
  cacheAffinity,
  isPolicyError,
  ledgerBalanced,
  type Policy,
  type RankLoad,
  totalRequests,
  totalTokens,
  vllmKvPressure
} from "@loadledger/policies"
import { describe, expect, it } from "vitest"

const unknownRow = (dpRank: number, timestamp?: number): RankLoad => ({
  dpRank,
  timestamp,
  unknown: { reason: "stale", message: "no report within the bound" }
})
/** The ranks of `k` requests routed at `times` (default all at `t0`) from `s`. */
const burst = <S>(p: Policy<S>, s: S, k: number, t0: number, step = 0): Array<number> => {
  const ranks: Array<number> = []
  for (let i = 0; i < k; i++) {
    const r = p.route(s, { requestId: `q${i}`, inputLength: 100 }, t0 + i * step)
    if (isPolicyError(r)) throw new Error(r.message)
    ranks.push(r.rank)
    s = r.state
  }
  return ranks
}

describe("vllm-kv-pressure: an unknown or partial row takes the busiest known values", () => {
  // issue 11: three of four ranks had no waiting count; the scores were [27, null, null, null] and
  // four of four requests went to the busiest rank, rank 0
  const rows: ReadonlyArray<RankLoad> = [
    { dpRank: 0, timestamp: 5, numRunningReqs: 20, numWaitingReqs: 7, kvCacheUsage: 0.3 },
    { dpRank: 1, timestamp: 5, numRunningReqs: 5, kvCacheUsage: 0.3 },
    { dpRank: 2, timestamp: 5, numRunningReqs: 5, kvCacheUsage: 0.3 },
    { dpRank: 3, timestamp: 5, numRunningReqs: 5, kvCacheUsage: 0.3 }
  ]
  it("the reproduction: no request goes to the busiest rank because the others are unknown", () => {
    const s = vllmKvPressure.observe(vllmKvPressure.init(4), rows, 5)
    const first = vllmKvPressure.route(s, { requestId: "a", inputLength: 100 }, 5)
    if (isPolicyError(first)) throw new Error(first.message)
    // ranks 1..3 wait as long as the busiest known (7) and run their own 5: 12, never NaN / null
    expect(first.explanation.scores).toEqual([27, 12, 12, 12])
    expect(first.explanation.details?.["loadUnknown"]).toEqual([1, 2, 3])
    // (upstream's rotating start index: the fourth scan starts at rank 3, where all three tie at 13)
    expect(burst(vllmKvPressure, s, 4, 5)).toEqual([1, 2, 3, 3])
  })
  it("unknown rows are as busy as the busiest known rank: ties, then the local bump spreads", () => {
    const s = vllmKvPressure.observe(
      vllmKvPressure.init(4),
      [rows[0]!, unknownRow(1), unknownRow(2), unknownRow(3)],
      5
    )
    expect(s.lb.lbEngines).toEqual([
      [7, 20, 0.3],
      [7, 20, 0.3],
      [7, 20, 0.3],
      [7, 20, 0.3]
    ])
    expect(burst(vllmKvPressure, s, 4, 5)).toEqual([0, 1, 2, 3])
  })
  it("a later row with both counts ends the substitution; an absent timestamp is observed at now", () => {
    let s = vllmKvPressure.observe(vllmKvPressure.init(2), [rows[0]!, rows[1]!], 5)
    expect(s.loadUnknown).toEqual([1])
    s = vllmKvPressure.observe(s, [{ dpRank: 1, numRunningReqs: 1, numWaitingReqs: 0, kvCacheUsage: 0.1 }], 6)
    expect(s.loadUnknown).toBeUndefined()
    expect(s.lb.lbEngines[1]).toEqual([0, 1, 0.1])
    expect(s.snapshotAt).toEqual([5, 6])
  })
  it("with no rank known, an unknown rank keeps its previous row (upstream's initial zeros)", () => {
    const s = vllmKvPressure.observe(vllmKvPressure.init(2), [unknownRow(0), unknownRow(1)], 5)
    expect(s.lb.lbEngines).toEqual([
      [0, 0, 0],
      [0, 0, 0]
    ])
    expect(s.loadUnknown).toEqual([0, 1])
  })
  it("every row partial (a /metrics page cut before its waiting family): each keeps what it reported, the busiest report fills the rest", () => {
    // vLLM #48808's second block cut after its running family: the balancer used to keep the
    // initial zero rows and send the first request to rank 0, the busiest by what it reported
    const cut: ReadonlyArray<RankLoad> = [27, 5, 0, 0].map((numRunningReqs, dpRank) => ({
      dpRank,
      numRunningReqs
    }))
    const s = vllmKvPressure.observe(vllmKvPressure.init(4), cut, 5)
    // no rank reported its queue: every rank waits alike (0), and runs what it reported
    expect(s.lb.lbEngines).toEqual([
      [0, 27, undefined],
      [0, 5, undefined],
      [0, 0, undefined],
      [0, 0, undefined]
    ])
    expect(s.loadUnknown).toEqual([0, 1, 2, 3])
    expect(burst(vllmKvPressure, s, 4, 5)).toEqual([2, 3, 2, 3])
    // a waiting count one partial row did report is the busiest for the others
    const mixed = vllmKvPressure.observe(
      vllmKvPressure.init(3),
      [
        { dpRank: 0, numRunningReqs: 1 },
        { dpRank: 1, numWaitingReqs: 6 },
        { dpRank: 2, numRunningReqs: 4, kvCacheUsage: 0.5 }
      ],
      5
    )
    expect(mixed.lb.lbEngines).toEqual([
      [6, 1, 0.5],
      [6, 4, 0.5],
      [6, 4, 0.5]
    ])
  })
})

describe("SGLang total-requests / total-tokens: ranks with unknown counts are passed over while a known rank exists", () => {
  const known = (dpRank: number, requests: number, tokens: number): RankLoad => ({
    dpRank,
    timestamp: 5,
    numRunningReqs: requests,
    numWaitingReqs: 0,
    numTotalTokens: tokens
  })
  for (const policy of [totalRequests, totalTokens]) {
    it(`${policy.name}: an unknown row or a missing count excludes the rank, a later full row restores it`, () => {
      let s = policy.observe(
        policy.init(3),
        [known(0, 9, 900), unknownRow(1, 5), { dpRank: 2, timestamp: 5, numRunningReqs: 0 }],
        5
      )
      const r = policy.route(s, { requestId: "a", inputLength: 10 }, 5)
      if (isPolicyError(r)) throw new Error(r.message)
      expect(r.rank).toBe(0)
      expect(r.state.budget.requestsUnknown).toEqual([false, true, true])
      s = policy.observe(r.state, [{ ...known(1, 0, 0), timestamp: 5.1 }], 5.1)
      expect(burst(policy, s, 1, 5.1)).toEqual([1])
    })
    it(`${policy.name}: every rank unknown: the lowest index, as with equal loads`, () => {
      const s = policy.observe(policy.init(2), [unknownRow(0, 5), unknownRow(1, 5)], 5)
      expect(burst(policy, s, 2, 5)).toEqual([0, 1])
    })
    it(`${policy.name}: a row without timestamp is observed at now and applied once (charges survive refreshes)`, () => {
      const s = policy.observe(
        policy.init(2),
        [
          { ...known(0, 3, 300), timestamp: undefined },
          { ...known(1, 3, 300), timestamp: undefined }
        ],
        5
      )
      // refreshes at 5.00, 5.03, 5.06 and 5.09 (every 20 ms at most): the rows are not re-applied
      expect(burst(policy, s, 4, 5, 0.03)).toEqual([0, 1, 0, 1])
    })
  }
  it("total-tokens: an absent token count excludes the rank and compares requests (S08)", () => {
    const s = totalTokens.observe(
      totalTokens.init(2),
      [{ ...known(0, 0, 0), numTotalTokens: undefined }, known(1, 4, 5000)],
      5
    )
    const r = totalTokens.route(s, { requestId: "a", inputLength: 10 }, 5)
    expect(!isPolicyError(r) && [r.rank, r.explanation.scores]).toEqual([1, [0, 4]])
  })
})

describe("own policies: an unknown rank is at least as busy as the busiest known values", () => {
  const rows: ReadonlyArray<RankLoad> = [
    { dpRank: 0, timestamp: 5, numRunningReqs: 2, numWaitingReqs: 1, numTotalTokens: 100 },
    { dpRank: 1, timestamp: 5, numRunningReqs: 5, numWaitingReqs: 0, numTotalTokens: 50 },
    unknownRow(2, 5),
    { dpRank: 3, numRunningReqs: 0, numTotalTokens: 10 }
  ]
  it("ledger-balanced: reported fields kept, each missing one the busiest known; an absent timestamp is now", () => {
    const s = ledgerBalanced.observe(ledgerBalanced.init(4), rows, 5)
    const v = ledgerBalanced.view(s, 5)
    expect(v.map((x) => [x.requests, x.tokens, x.waiting, x.unknown])).toEqual([
      [3, 100, 1, false],
      [5, 50, 0, false],
      [6, 100, 1, true], // 5 running + 1 waiting (busiest known each), 100 tokens
      [1, 10, 1, true] // its own 0 running and 10 tokens, the busiest known waiting (1)
    ])
    expect(burst(ledgerBalanced, s, 1, 5)).toEqual([3])
  })
  it("ledger-balanced: a rank that did not report KV usage is guarded as if at the highest reported", () => {
    const kvRows: ReadonlyArray<RankLoad> = [
      {
        dpRank: 0,
        timestamp: 5,
        numRunningReqs: 9,
        numWaitingReqs: 2,
        numTotalTokens: 900,
        kvCacheUsage: 0.995
      },
      {
        dpRank: 1,
        timestamp: 5,
        numRunningReqs: 9,
        numWaitingReqs: 2,
        numTotalTokens: 900,
        kvCacheUsage: 0.5
      },
      { dpRank: 2, timestamp: 5, numRunningReqs: 0, numWaitingReqs: 1, numTotalTokens: 0 }
    ]
    const r = ledgerBalanced.route(
      ledgerBalanced.observe(ledgerBalanced.init(3), kvRows, 5),
      { requestId: "a", inputLength: 1 },
      5
    )
    // excluded by the KV-pressure gate (the term `kvPressureGate`)
    expect(!isPolicyError(r) && [r.rank, r.explanation.details?.["excluded"]]).toEqual([1, [0, 2]])
  })
  it("cache-affinity: an unreported KV usage is the highest reported; unknown loads as ledger-balanced", () => {
    const s = cacheAffinity.observe(cacheAffinity.init(4), rows, 5)
    expect(cacheAffinity.projectedKv(s)).toEqual([undefined, undefined, undefined, undefined])
    const kv = cacheAffinity.observe(s, [{ ...rows[0]!, timestamp: 6, kvCacheUsage: 0.97 }], 6)
    const r = cacheAffinity.route(kv, { requestId: "a", inputLength: 1 }, 6)
    // every worker counts as 0.97 KV (overloaded alike); rank 3 (its own 0 running + the busiest known
    // waiting, 1) is the least loaded
    expect(!isPolicyError(r) && [r.rank, r.explanation.details?.["projectedKv"]]).toEqual([
      3,
      [0.97, 0.97, 0.97, 0.97]
    ])
  })
})
