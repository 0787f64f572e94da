import { type Policy, type RouteRequest, Smg } from "@loadledger/policies"
import type { RankLoad } from "@loadledger/schema"
import { describe, expect, it } from "vitest"

const w = (url: string, load = 0, healthy = true): Smg.SmgWorker => ({
  url,
  healthy,
  load,
  processedRequests: 0,
  circuitBreakerCanExecute: true
})
const req = (i: number, extra: Partial<RouteRequest> = {}): RouteRequest => ({
  requestId: `r${i}`,
  inputLength: 100,
  ...extra
})
const routeAll = <S>(p: Policy<S>, s0: S, reqs: ReadonlyArray<RouteRequest>) => {
  let s = s0
  const out: Array<number | string> = []
  for (const r of reqs) {
    const x = p.route(s, r, 0)
    if (x._tag === "Routed") {
      s = x.state
      out.push(x.rank)
    } else out.push(x.reason)
  }
  return { s, out }
}

describe("SMG cores beyond the vectors", () => {
  it("prefix_hash key: XXH3-64 of little-endian u32 tokens, only the first prefixTokenCount", () => {
    expect(Smg.smgPrefixHashKey([1, 2, 3, 4, 5], 256)).toBe("f2f19a6764b86d62")
    expect(Smg.smgPrefixHashKey([1, 2, 3, 4, 5, 6, 7], 5)).toBe("f2f19a6764b86d62")
  })

  it("prefix-hash reads tokenIds as upstream: the key is the first 256 ids, prefixHashes then unread", () => {
    const p = Smg.makeSmgPolicy("prefix-hash")
    const ids = Array.from({ length: 600 }, (_, i) => (i * 2654435761) >>> 0)
    const keyOf = (r: RouteRequest) => {
      const out = p.route(p.init(8), r, 0)
      return out._tag === "Routed" ? out.explanation.details?.["prefixHashKey"] : out.reason
    }
    const key = Smg.smgPrefixHashKey(ids, 256)
    expect(keyOf(req(0, { tokenIds: ids }))).toBe(key)
    // ids past the first 256 and the block hashes do not move the key
    expect(keyOf(req(1, { tokenIds: [...ids.slice(0, 256), 7, 7], prefixHashes: ["1", "2"] }))).toBe(key)
    expect(keyOf(req(2, { tokenIds: [9, ...ids.slice(1)] }))).not.toBe(key)
    // fewer than 256 ids: all of them; without ids, one id per block (as before)
    expect(keyOf(req(3, { tokenIds: [1, 2, 3, 4, 5] }))).toBe("f2f19a6764b86d62")
    expect(keyOf(req(4, { prefixHashes: ["1", "2", "3"] }))).toBe(Smg.smgPrefixHashKey([1], 256))
  })

  it("dp cost: Rust split_whitespace counts U+0085 as a separator and U+FEFF as a letter", () => {
    expect(Smg.smgDpEstimatedCost("a\u0085b")).toBe(3) // 2 words -> ceil(2.6)
    expect(Smg.smgDpEstimatedCost("a\ufeffb")).toBe(2) // 1 word -> ceil(1.3)
    expect(Smg.smgDpEstimatedCost("   ")).toBe(1)
    expect(Smg.smgDpEstimatedCost(" ten ".repeat(10))).toBe(13)
  })

  it("consistent_hashing: target-worker index parses as Rust usize (+7 ok, -0 and ' 1' miss)", () => {
    const ws = [w("a"), w("b"), w("c"), w("d"), w("e"), w("f"), w("g"), w("h")]
    const pick = (v: string) => {
      const o = Smg.smgConsistentHashingSelect(ws, { "X-SMG-Target-Worker": v }, [])
      return o._tag === "SmgSelected" ? [o.index, o.details.branch] : o.reason
    }
    expect(pick("+7")).toEqual([7, "target_worker_hit"])
    expect(pick("-0")).toEqual([undefined, "target_worker_miss"])
    expect(pick(" 1")).toEqual([undefined, "target_worker_miss"])
    expect(pick("8")).toEqual([undefined, "target_worker_miss"])
  })

  it("a missing draw is a typed error naming it", () => {
    const o = Smg.smgPowerOfTwoSelect({ reports: new Map() }, [w("a"), w("b")], [0])
    expect(o).toMatchObject({ _tag: "PolicyError", reason: "InvalidInput", field: "draws[1]" })
    expect(Smg.smgRandomSelect([w("a")], [1])).toMatchObject({ _tag: "PolicyError", field: "draws[0]" })
  })

  it("cache_aware tree: a split keeps the first creator as tenant; a later inserter is only added", () => {
    let s = Smg.smgCacheAwareInit(["a", "b"])
    const ws = [w("a"), w("b")]
    s = Smg.smgCacheAwareSelect(s, ws, "hello world").state // miss -> a (min load)
    s = Smg.smgCacheAwareSelect(s, [w("a", 1), w("b")], "help me").state // 3/7 < 0.5 -> miss -> b; splits "hel"
    const o = Smg.smgCacheAwareSelect(s, ws, "helx")
    expect([o.details.matchedCharCount, o.details.branch, o.index]).toEqual([3, "cache_hit", 0])
  })
})

describe("SMG Policy adapters", () => {
  it("in-flight is charged on route and released on finish (least-load without reports = JSQ)", () => {
    const p = Smg.makeSmgPolicy("least-load")
    const { s, out } = routeAll(p, p.init(3), [req(0), req(1), req(2), req(3)])
    expect(out).toEqual([0, 1, 2, 0])
    expect(s.workers.map((x) => x.load)).toEqual([2, 1, 1])
    const f = p.finish(s, ["r1", "r2", "unknown-id"], 1)
    expect(f.workers.map((x) => x.load)).toEqual([2, 0, 0])
    expect(p.finish(f, ["r1"], 2)).toBe(f)
  })

  it("least-load reads numWaitingUncachedTokens and KV; a poll resets the credit; unknown removes the report", () => {
    const p = Smg.makeSmgPolicy("least-load")
    const rows: ReadonlyArray<RankLoad> = [
      { dpRank: 0, kvCacheUsage: 0.5, numWaitingUncachedTokens: 4000 },
      { dpRank: 1, kvCacheUsage: 0.1, numWaitingUncachedTokens: 0 }
    ]
    const s = p.observe(p.init(2), rows, 0)
    const r = p.route(s, req(0, { inputLength: 10_000 }), 0)
    expect(r._tag === "Routed" && [r.rank, r.explanation.scores]).toEqual([
      1,
      [4000 / 2000 + 0.15, (0.15 * 0.1) / 0.9]
    ])
    if (r._tag !== "Routed") return
    const core = () => r.state.core as Smg.SmgLeastLoadState
    expect(core().inflight.get("rank-1")).toBe(10_000)
    const polled = p.observe(r.state, rows, 1).core as Smg.SmgLeastLoadState
    expect(polled.inflight.get("rank-1")).toBe(0)
    const gone = p.observe(r.state, [{ dpRank: 0, unknown: { reason: "stale", message: "old" } }], 1)
      .core as Smg.SmgLeastLoadState
    expect([gone.cached.has("rank-0"), gone.cached.has("rank-1")]).toEqual([false, true])
  })

  it("a row without the fields a policy reads gets the poll's busiest report (never a made-up 0); none known: no report", () => {
    const p = Smg.makeSmgPolicy("power-of-two")
    const usage = (rows: ReadonlyArray<RankLoad>) =>
      [...(p.observe(p.init(3), rows, 0).core as Smg.SmgPowerOfTwoState).reports].map(
        ([url, r]) => [url, r.loads[0]!.tokenUsage] as const
      )
    expect(
      usage([
        { dpRank: 0, numRunningReqs: 3 },
        { dpRank: 1, kvCacheUsage: 0.2 },
        { dpRank: 2, kvCacheUsage: 0.7 }
      ])
    ).toEqual([
      ["rank-0", 0.7],
      ["rank-1", 0.2],
      ["rank-2", 0.7]
    ])
    expect(usage([{ dpRank: 0, numRunningReqs: 3 }, { dpRank: 1 }])).toEqual([])
  })

  // Before this rule an unknown row removed the report, and a pair with a report-less rank compared
  // both by request count (0 vs 0), so the unknown rank won whenever it was drawn first.
  it("power-of-two: an unknown rank drawn first against a known idler one loses (seed 8 draws ranks 2, 0)", () => {
    const p = Smg.makeSmgPolicy("power-of-two", { seed: 8 })
    const rows: ReadonlyArray<RankLoad> = [
      { dpRank: 0, kvCacheUsage: 0.2 },
      { dpRank: 1, kvCacheUsage: 0.9 },
      { dpRank: 2, unknown: { reason: "stale", message: "old" } }
    ]
    const r = p.route(p.observe(p.init(3), rows, 0), req(0), 0)
    expect(r._tag === "Routed" && [r.rank, r.explanation.details]).toEqual([
      0,
      expect.objectContaining({ candidates: [2, 0], metric: "token_usage", scores: [0.9, 0.2] })
    ])
    // over many seeds the unknown rank is chosen only against the busiest known rank, on a tie
    for (let seed = 0; seed < 64; seed++) {
      const q = Smg.makeSmgPolicy("power-of-two", { seed })
      const x = q.route(q.observe(q.init(3), rows, 0), req(0), 0)
      if (x._tag === "Routed" && x.rank === 2) expect(x.explanation.details?.candidates).toEqual([2, 1])
    }
  })

  it("least-load: a row missing one field keeps its own others; the missing one reads as the poll's busiest", () => {
    const p = Smg.makeSmgPolicy("least-load")
    const rows: ReadonlyArray<RankLoad> = [
      { dpRank: 0, kvCacheUsage: 0.5, numWaitingUncachedTokens: 0 },
      { dpRank: 1, kvCacheUsage: 0.1 },
      { dpRank: 2, numWaitingUncachedTokens: 3000 }
    ]
    const cached = (p.observe(p.init(3), rows, 0).core as Smg.SmgLeastLoadState).cached
    expect(
      [...cached].map(([url, r]) => [url, r.loads[0]!.tokenUsage, r.loads[0]!.numWaitingUncachedTokens])
    ).toEqual([
      ["rank-0", 0.5, 0],
      ["rank-1", 0.1, 3000],
      ["rank-2", 0.5, 3000]
    ])
  })

  it("least-load: an unknown rank scores no better than the busiest known one (was: load 0 x p / tp = 0)", () => {
    const p = Smg.makeSmgPolicy("least-load")
    const rows: ReadonlyArray<RankLoad> = [
      { dpRank: 0, kvCacheUsage: 0.2, numWaitingUncachedTokens: 100 },
      { dpRank: 1, kvCacheUsage: 0.9, numWaitingUncachedTokens: 5000 },
      { dpRank: 2, unknown: { reason: "not-reported", message: "no scrape" } }
    ]
    const r = p.route(p.observe(p.init(3), rows, 0), req(0), 0)
    const busiest = 5000 / 2000 + (0.15 * 0.9) / (1 - 0.9)
    expect(r._tag === "Routed" && [r.rank, r.explanation.scores]).toEqual([
      0,
      [100 / 2000 + (0.15 * 0.2) / 0.8, busiest, busiest]
    ])
  })

  it("no healthy rank: AllRanksUnavailable; prefix-hash v1.9.0 without tokenIds or prefixHashes names tokenIds, the head takes the least loaded", () => {
    const p = Smg.makeSmgPolicy("round-robin")
    expect(p.route(p.setStatus(p.init(2), [false, false]), req(0), 0)).toMatchObject({
      reason: "AllRanksUnavailable"
    })
    // v1.9.0: no tokens is upstream's `no_tokens` (None)
    const ph = Smg.makeSmgPolicy("prefix-hash", { prefixHash: { version: "v1.9.0" } })
    expect(ph.route(ph.init(2), req(0), 0)).toMatchObject({
      reason: "AllRanksUnavailable",
      field: "tokenIds"
    })
    expect(ph.route(ph.init(2), req(0, { tokenIds: [], prefixHashes: [] }), 0)).toMatchObject({
      reason: "AllRanksUnavailable",
      field: "tokenIds"
    })
    // the head (#2148): the least-loaded healthy rank, branch no_routing_key
    const head = Smg.makeSmgPolicy("prefix-hash")
    const busy = head.route(head.init(2), req(9, { tokenIds: [1, 2, 3] }), 0)
    if (busy._tag !== "Routed") throw new Error(busy._tag)
    const r = head.route(busy.state, req(0, { tokenIds: [], prefixHashes: [] }), 0)
    expect(r._tag === "Routed" && [r.rank, r.explanation.details?.["branch"]]).toEqual([
      1 - busy.rank,
      "no_routing_key"
    ])
    expect(p.route(p.init(0), req(0), 0)).toMatchObject({ reason: "NoRanks" })
  })

  it("cache-aware over block hashes: a repeated prefix is a hit on the same rank", () => {
    const p = Smg.makeSmgPolicy("cache-aware")
    const { out } = routeAll(p, p.init(4), [
      req(0, { prefixHashes: ["1", "2", "3"] }),
      req(1, { prefixHashes: ["9"] }),
      req(2, { prefixHashes: ["1", "2", "3", "4"] })
    ])
    expect(out).toEqual([0, 1, 0])
  })

  it("dp-min-token: lowest used tokens gets the request's tokens; unhealthy ranks are skipped; no loads -> round robin", () => {
    const p = Smg.makeSmgPolicy("dp-min-token")
    const s = p.observe(
      p.init(3),
      [
        { dpRank: 0, numUsedTokens: 10 },
        { dpRank: 1, numUsedTokens: 3 },
        { dpRank: 2, numTotalTokens: 7 }
      ],
      0
    )
    // 3 + 4 ties 7: (used, rank) gives rank 1 again; 3 + 5 = 8 > 7 moves on to rank 2
    expect(routeAll(p, s, [req(0, { inputLength: 4 }), req(1, { inputLength: 4 })]).out).toEqual([1, 1])
    expect(routeAll(p, s, [req(0, { inputLength: 5 }), req(1, { inputLength: 4 })]).out).toEqual([1, 2])
    expect(routeAll(p, p.setStatus(s, [true, false, true]), [req(0, { inputLength: 1 })]).out).toEqual([2])
    expect(routeAll(p, p.init(3), [req(0), req(1), req(2), req(3)]).out).toEqual([0, 1, 2, 0])
  })

  it("every Routed result explains itself", () => {
    for (const name of [
      "round-robin",
      "random",
      "power-of-two",
      "least-load",
      "cache-aware",
      "consistent-hashing"
    ] as const) {
      const p = Smg.makeSmgPolicy(name)
      const r = p.route(p.init(2), req(0), 0)
      expect(r._tag === "Routed" && typeof r.explanation.tieBreak).toBe("string")
    }
  })
})
