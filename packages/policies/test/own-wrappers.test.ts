import { policyLaws } from "@loadledger/testing"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  makeLedgerBalanced,
  makeVllmLb,
  type Policy,
  policyEntries,
  policyError,
  type RankLoad,
  totalRequests,
  withKvAdmission,
  withStaleness
} from "../src/index.js"
import { routed } from "./support/routed.js"

const row = (
  dpRank: number,
  timestamp: number,
  running: number,
  extra: Partial<RankLoad> = {}
): RankLoad => ({
  dpRank,
  timestamp,
  numRunningReqs: running,
  numWaitingReqs: 0,
  numTotalTokens: 0,
  ...extra
})

/**
 * A policy that keeps only the rows it was last given (no charges of its own): fewest running +
 * waiting, lowest index on ties, healthy ranks only; `fail` makes every route an error with state.
 */
interface RowsState {
  readonly rows: ReadonlyArray<RankLoad | undefined>
  readonly healthy: ReadonlyArray<boolean>
  readonly seen: ReadonlyArray<RankLoad>
}
const lastRows = (fail = false): Policy<RowsState> => ({
  name: "last-rows",
  init: (n) => ({ rows: new Array(n).fill(undefined), healthy: new Array(n).fill(true), seen: [] }),
  observe: (s, loads) => {
    const rows = s.rows.slice()
    for (const l of loads) if (l.dpRank >= 0 && l.dpRank < rows.length) rows[l.dpRank] = l
    return { ...s, rows, seen: [...s.seen, ...loads] }
  },
  route: (s, req) => {
    if (fail) return { ...policyError("InvalidInput", "no", "x"), state: { ...s, seen: [] } }
    let best = -1
    let bestLoad = Number.POSITIVE_INFINITY
    s.rows.forEach((l, r) => {
      const load = (l?.numRunningReqs ?? 0) + (l?.numWaitingReqs ?? 0)
      if (s.healthy[r] && load < bestLoad) {
        best = r
        bestLoad = load
      }
    })
    if (req.routedDpRank !== undefined) best = req.routedDpRank
    return best < 0
      ? policyError("AllRanksUnavailable", "none")
      : { _tag: "Routed", rank: best, state: s, explanation: {} }
  },
  finish: (s) => s,
  setStatus: (s, healthy) => ({ ...s, healthy })
})

describe("withStaleness", () => {
  const burst = <S>(p: Policy<S>, s0: S, k: number, t0: number) => {
    let s = s0
    const ranks: Array<number> = []
    for (let i = 0; i < k; i++) {
      const r = routed(p.route(s, { requestId: `b${i}`, inputLength: 100 }, t0 + i * 0.001))
      ranks.push(r.rank)
      s = r.state
    }
    return { ranks, s }
  }
  const equal = [0, 1, 2, 3].map((r) => row(r, 1, 5))

  it("speculative charges: a burst on one snapshot spreads instead of piling onto the first minimum", () => {
    const bare = lastRows()
    expect(burst(bare, bare.observe(bare.init(4), equal, 1), 4, 1.01).ranks).toEqual([0, 0, 0, 0])
    const p = withStaleness(lastRows())
    expect(burst(p, p.observe(p.init(4), equal, 1), 4, 1.01).ranks).toEqual([0, 1, 2, 3])
  })
  it("a snapshot stamped after a route covers its charge; an older one than held is not applied", () => {
    const p = withStaleness(lastRows(), { inflightFloor: false })
    const { s } = burst(p, p.observe(p.init(4), equal, 1), 2, 1.01)
    expect(s.inner.rows.map((l) => l?.numWaitingReqs)).toEqual([1, 1, 0, 0])
    // stamped 1.005: covers nothing routed at 1.01 and after
    const s1 = p.observe(s, [row(0, 1.005, 7)], 1.1)
    expect(s1.inner.rows[0]).toMatchObject({ numRunningReqs: 7, numWaitingReqs: 1, timestamp: 1.005 })
    // stamped 1.2: covers it
    const s2 = p.observe(s1, [row(0, 1.2, 8)], 1.2)
    expect(s2.inner.rows[0]).toMatchObject({ numRunningReqs: 8, numWaitingReqs: 0 })
    // stamped 1.15 arrives late: the inner policy is given the newest row again
    const s3 = p.observe(s2, [row(0, 1.15, 99)], 1.3)
    expect(s3.inner.rows[0]).toMatchObject({ numRunningReqs: 8, timestamp: 1.2 })
  })
  it("in-flight floor: a lagging snapshot never makes a rank look emptier than what is in flight there", () => {
    const p = withStaleness(lastRows(), { clientCount: 2 })
    const { s } = burst(p, p.observe(p.init(2), [row(0, 1, 0), row(1, 1, 0)], 1), 3, 1.01)
    // 2 on rank 0, 1 on rank 1, each counted twice (two front ends)
    expect(s.inner.rows.map((l) => l?.numWaitingReqs)).toEqual([4, 2])
    // a snapshot after the burst that does not show it yet (engines still queueing it)
    const late = p.observe(s, [row(0, 2, 0), row(1, 2, 1)], 2)
    expect(late.inner.rows.map((l) => (l?.numRunningReqs ?? 0) + (l?.numWaitingReqs ?? 0))).toEqual([4, 2])
    // rank 0's two finish: nothing is left there; rank 1 still has b1 in flight (x 2, one shown running)
    const done = p.finish(late, ["b0", "b2"], 3)
    expect(done.inner.rows.map((l) => (l?.numRunningReqs ?? 0) + (l?.numWaitingReqs ?? 0))).toEqual([0, 2])
    expect(p.finish(done, ["b1"], 3).inner.rows.map((l) => l?.numWaitingReqs)).toEqual([0, 0])
  })
  it("adds to the fields a row has, leaves absent fields absent and unknown rows as they are", () => {
    const p = withStaleness(lastRows())
    const rows: Array<RankLoad> = [
      {
        dpRank: 0,
        timestamp: 1,
        numRunningReqs: 1,
        numWaitingReqs: 0,
        numTotalTokens: 50,
        kvAvailableTokens: 1000,
        numUsedTokens: 9000,
        tokenCapacity: 10_000,
        kvCacheUsage: 0.9,
        numWaitingUncachedTokens: 0
      },
      { dpRank: 1, timestamp: 1, unknown: { reason: "not-reported", message: "t" } }
    ]
    const r = routed(
      p.route(p.observe(p.init(2), rows, 1), { requestId: "a", inputLength: 300, routedDpRank: 0 }, 1.5)
    )
    expect(r.state.inner.rows[0]).toEqual({
      ...rows[0],
      numWaitingReqs: 1,
      numTotalTokens: 350,
      kvAvailableTokens: 700,
      numUsedTokens: 9300,
      kvCacheUsage: 0.93,
      numWaitingUncachedTokens: 300
    })
    const r2 = routed(p.route(r.state, { requestId: "b", inputLength: 300, routedDpRank: 1 }, 1.6))
    expect(r2.state.inner.rows[1]).toBe(rows[1])
    const partial = withStaleness(lastRows())
    const pr = routed(
      partial.route(
        partial.observe(partial.init(1), [{ dpRank: 0, timestamp: 1, numWaitingReqs: 2 }], 1),
        { requestId: "c", inputLength: 9 },
        2
      )
    )
    expect(pr.state.inner.rows[0]).toEqual({ dpRank: 0, timestamp: 1, numWaitingReqs: 3 })
  })
  it("invalid rows reach the inner policy; its errors keep its state", () => {
    const p = withStaleness(lastRows())
    const s = p.observe(p.init(2), [row(5, 1, 0)], 1)
    expect(s.inner.seen).toEqual([row(5, 1, 0)])
    const f = withStaleness(lastRows(true))
    const e = f.route(f.observe(f.init(2), [row(0, 1, 0)], 1), { requestId: "a", inputLength: 1 }, 1)
    expect(e).toMatchObject({ _tag: "PolicyError", reason: "InvalidInput", field: "x" })
    expect(e._tag === "PolicyError" && (e.state as { inner: RowsState }).inner.seen).toEqual([])
  })
  it("vLLM's balancer: a re-broadcast of counts older than the burst erases its bumps (S02); wrapped, the burst stays", () => {
    const rows = [row(0, 1, 10), row(1, 1, 12)]
    const next = <S>(p: Policy<S>) => {
      const { s } = burst(p, p.observe(p.init(2), rows, 1), 3, 1.01)
      // the coordinator republishes the counts it had at 1 s
      return routed(p.route(p.observe(s, rows, 1.05), { requestId: "x", inputLength: 100 }, 1.06)).rank
    }
    expect(next(makeVllmLb())).toBe(0)
    expect(next(withStaleness(makeVllmLb()))).toBe(1)
  })
  it("documented gotcha: around a policy that charges by itself, each charge counts twice", () => {
    const lb = makeLedgerBalanced()
    const p = withStaleness(lb)
    const s = routed(
      p.route(p.observe(p.init(2), [row(0, 1, 0), row(1, 1, 0)], 1), { requestId: "a", inputLength: 10 }, 1.5)
    ).state
    expect(lb.view(s.inner, 1.5)[0]?.requests).toBe(2)
  })
})

describe("withKvAdmission", () => {
  const kvCaseWrapped = (p: Policy<unknown>) => policyLaws(withKvAdmission(p)).kvFeasibility
  it("every registered policy, wrapped, holds the kvFeasibility law", () => {
    for (const e of policyEntries()) fc.assert(kvCaseWrapped(e.make({})), { numRuns: 25, seed: 8 })
  })
  it("the inner policy chooses among the feasible ranks, and its own health comes back after", () => {
    const p = withKvAdmission(makeVllmLb())
    const rows = [0, 1, 2].map((r) => row(r, 1, [0, 3, 5][r]!, { kvAvailableTokens: [100, 5000, 5000][r]! }))
    let s = p.setStatus(p.observe(p.init(3), rows, 1), [true, true, false])
    const r = routed(p.route(s, { requestId: "a", inputLength: 1000 }, 1))
    expect(r.rank).toBe(1)
    expect(r.explanation.details?.["kvAdmission"]).toEqual({ feasible: [1], overridden: false })
    s = r.state
    expect(s.inner.healthy).toEqual([true, true, false])
    // a small prompt fits everywhere healthy: no mask, vLLM's own choice
    expect(routed(p.route(s, { requestId: "b", inputLength: 10 }, 1)).rank).toBe(0)
  })
  it("an inner policy that ignores health is routed again, pinned to the feasible rank with the most free KV", () => {
    const p = withKvAdmission(totalRequests)
    const rows = [0, 1, 2].map((r) => row(r, 1, [0, 3, 5][r]!, { kvAvailableTokens: [100, 3000, 6000][r]! }))
    const r = routed(p.route(p.observe(p.init(3), rows, 1), { requestId: "a", inputLength: 1000 }, 1))
    expect(r.rank).toBe(2)
    expect(r.explanation.details?.["kvAdmission"]).toEqual({
      feasible: [1, 2],
      overridden: true,
      innerChoice: 0
    })
  })
  it("prompts routed since the snapshot use up free KV until a snapshot covers them (x clientCount)", () => {
    const p = withKvAdmission(makeVllmLb(), { clientCount: 2 })
    const rows = [row(0, 1, 0, { kvAvailableTokens: 5000 }), row(1, 1, 9, { kvAvailableTokens: 4000 })]
    const a = routed(p.route(p.observe(p.init(2), rows, 1), { requestId: "a", inputLength: 1500 }, 1.1))
    expect(a.rank).toBe(0)
    // rank 0 has 5000 - 2 x 1500 = 2000 left: 3000 tokens fit only on rank 1
    expect(routed(p.route(a.state, { requestId: "b", inputLength: 3000 }, 1.2)).rank).toBe(1)
    const covered = p.observe(a.state, [row(0, 2, 1, { kvAvailableTokens: 5000 })], 2)
    expect(routed(p.route(covered, { requestId: "b", inputLength: 3000 }, 2)).rank).toBe(0)
  })
  it("poolTokens turns kvCacheUsage into free KV for rows without token counts (vLLM)", () => {
    const rows = [row(0, 1, 0, { kvCacheUsage: 0.95 }), row(1, 1, 6, { kvCacheUsage: 0.2 })]
    const req = { requestId: "a", inputLength: 1000 }
    const plain = withKvAdmission(makeVllmLb())
    expect(routed(plain.route(plain.observe(plain.init(2), rows, 1), req, 1)).rank).toBe(0)
    const pooled = withKvAdmission(makeVllmLb(), { poolTokens: 10_000 })
    // free 500 vs 8000
    expect(routed(pooled.route(pooled.observe(pooled.init(2), rows, 1), req, 1)).rank).toBe(1)
  })
  it("a pinned request is left as it is", () => {
    const p = withKvAdmission(makeVllmLb())
    const rows = [row(0, 1, 0, { kvAvailableTokens: 10 }), row(1, 1, 0, { kvAvailableTokens: 9000 })]
    expect(
      routed(p.route(p.observe(p.init(2), rows, 1), { requestId: "a", inputLength: 500, routedDpRank: 0 }, 1))
        .rank
    ).toBe(0)
  })
})
