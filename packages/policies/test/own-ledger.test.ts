import { describe, expect, it } from "vitest"
import { isPolicyError, ledgerBalanced, makeLedgerBalanced, type RankLoad } from "../src/index.js"
import { routed } from "./support/routed.js"

const spread = (xs: ReadonlyArray<number>) => Math.max(...xs) - Math.min(...xs)
const load = (
  dpRank: number,
  timestamp: number,
  running: number,
  waiting: number,
  tokens: number,
  kv?: number
) =>
  ({
    dpRank,
    timestamp,
    numRunningReqs: running,
    numWaitingReqs: waiting,
    numTotalTokens: tokens,
    kvCacheUsage: kv
  }) satisfies RankLoad

// ---------------------------------------------------------------------------------------------
// S02: DP=8, 256 requests at t_i = i*300/256 ms from client i mod 2; snapshots at 100/200/300 ms
// report waiting = requests routed (by either client) before T - 30 ms, running = 0, and overwrite.
const S02 = { dp: 8, count: 256, snapshotsMs: [100, 200, 300], lagMs: 30 }

/** Buggy reference: vLLM-style client view overwritten by each snapshot, score waiting*4+running,
 * strict < scan from index 0, local waiting bump of `bump`. */
const s02Reference = (bump: number): Array<number> => {
  const n = S02.dp
  const views = [0, 1].map(() => Array.from({ length: n }, () => ({ waiting: 0, running: 0 })))
  const log: Array<{ t: number; r: number }> = []
  let si = 0
  for (let i = 0; i < S02.count; i++) {
    const t = (i * 300) / 256
    while (si < S02.snapshotsMs.length && S02.snapshotsMs[si]! <= t) {
      const T = S02.snapshotsMs[si++]!
      for (const v of views)
        for (let r = 0; r < n; r++)
          v[r] = { waiting: log.filter((x) => x.r === r && x.t < T - S02.lagMs).length, running: 0 }
    }
    const v = views[i % 2]!
    let best = 0
    let min = Number.POSITIVE_INFINITY
    for (let r = 0; r < n; r++) {
      const score = v[r]!.waiting * 4 + v[r]!.running
      if (score < min) {
        min = score
        best = r
      }
    }
    v[best] = { ...v[best]!, waiting: v[best]!.waiting + bump }
    log.push({ t, r: best })
  }
  return Array.from({ length: n }, (_, r) => log.filter((x) => x.r === r).length)
}

/** The same world with two `ledger-balanced` clients; a snapshot published at T is stamped T - 30 ms
 * (the step boundary its counts were measured at). */
const s02Ledger = (chargeScale?: number): Array<number> => {
  const n = S02.dp
  const ps = [0, 1].map((c) => makeLedgerBalanced({ clientCount: 2, clientIndex: c, chargeScale }))
  let ss = ps.map((p) => p.init(n))
  const log: Array<{ t: number; r: number }> = []
  let si = 0
  for (let i = 0; i < S02.count; i++) {
    const t = (i * 300) / 256
    while (si < S02.snapshotsMs.length && S02.snapshotsMs[si]! <= t) {
      const T = S02.snapshotsMs[si++]!
      const loads = Array.from({ length: n }, (_, r) => {
        const w = log.filter((x) => x.r === r && x.t < T - S02.lagMs).length
        return load(r, (T - S02.lagMs) / 1000, 0, w, w * 1024)
      })
      ss = ss.map((s, c) => ps[c]!.observe(s, loads, T / 1000))
    }
    const c = i % 2
    const out = routed(ps[c]!.route(ss[c]!, { requestId: `r${i}`, inputLength: 1024 }, t / 1000))
    ss[c] = out.state
    log.push({ t, r: out.rank })
  }
  return Array.from({ length: n }, (_, r) => log.filter((x) => x.r === r).length)
}

describe("S02 burst longer than the coordinator interval", () => {
  it("S02 buggy reference: plain bump 28-36 (spread 8), scaled bump 31-33 (spread 2)", () => {
    const plain = s02Reference(1)
    const scaled = s02Reference(2)
    expect([Math.min(...plain), Math.max(...plain), spread(plain)]).toEqual([28, 36, 8])
    expect([Math.min(...scaled), Math.max(...scaled), spread(scaled)]).toEqual([31, 33, 2])
    expect(spread(scaled)).toBeLessThan(spread(plain))
    // the case's assertion fails on the plain reference
    expect(plain.every((k) => k >= 31 && k <= 33)).toBe(false)
  })
  it("S02 ledger-balanced: every rank ends with 31-33 requests, scaled charge no worse than plain", () => {
    const scaled = s02Ledger()
    const plain = s02Ledger(1)
    for (const totals of [scaled, plain]) {
      expect(totals.reduce((a, b) => a + b, 0)).toBe(256)
      for (const k of totals) {
        expect(k).toBeGreaterThanOrEqual(31)
        expect(k).toBeLessThanOrEqual(33)
      }
    }
    expect(spread(scaled)).toBeLessThanOrEqual(spread(plain))
    expect(spread(scaled)).toBeLessThanOrEqual(spread(s02Reference(2)))
  })
})

// ---------------------------------------------------------------------------------------------
// S03: DP=2; rank 0 runs a 32,768-token prefill step 0..2000 ms, last published (w0, r1) at t=0;
// rank 1 runs 30 ms decode steps with one 2,048-token request and publishes after every step;
// broadcast every 100 ms; 20 requests of 1,024 tokens at 50 + 100 j ms.
const rank0Row = load(0, 0, 1, 0, 32768)
/** Rank 1's latest publish at or before T: a request routed at t joins the step starting at the next
 * 30 ms boundary b and shows in the publish at b + 30; tokens grow by one per step per request. */
const rank1Row = (sentAtMs: ReadonlyArray<number>, T: number) => {
  const p = Math.floor(T / 30) * 30
  const admitted = sentAtMs.map((t) => Math.ceil(t / 30) * 30).filter((b) => b <= p - 30)
  let tokens = 2048 + p / 30
  for (const b of admitted) tokens += 1024 + (p - b) / 30
  return load(1, p / 1000, 1 + admitted.length, 0, tokens)
}

const s03Ledger = (metric: "tokens" | "requests") => {
  const p = makeLedgerBalanced({ metric })
  let s = p.observe(p.init(2), [rank0Row, rank1Row([], 0)], 0)
  const to1: Array<number> = []
  const counts = [0, 0]
  const chargeGap: Array<number> = [] // policy view of rank 0 minus (published + k), after each broadcast
  for (let j = 0; j < 20; j++) {
    const T = 100 * j
    if (T > 0) s = p.observe(s, [rank0Row, rank1Row(to1, T)], T / 1000)
    chargeGap.push(p.view(s, T / 1000)[0]!.requests - (1 + counts[0]!))
    const t = 50 + 100 * j
    const out = routed(p.route(s, { requestId: `q${j}`, inputLength: 1024 }, t / 1000))
    s = out.state
    counts[out.rank]! += 1
    if (out.rank === 1) to1.push(t)
  }
  return { counts, chargeGap }
}

/** Buggy reference: publish after step, view overwritten by each broadcast, waiting*4+running,
 * local bump 1; fixed (index 0) or rotating start index. Returns counts and rank 0's view gap. */
const s03Reference = (rotate: boolean) => {
  let view = [
    { w: 0, r: 1 },
    { w: 0, r: 1 }
  ]
  const to1: Array<number> = []
  const counts = [0, 0]
  const chargeGap: Array<number> = []
  let start = 0
  for (let j = 0; j < 20; j++) {
    const T = 100 * j
    if (T > 0) {
      const r1 = rank1Row(to1, T)
      view = [
        { w: 0, r: 1 },
        { w: r1.numWaitingReqs, r: r1.numRunningReqs }
      ]
    }
    chargeGap.push(view[0]!.w + view[0]!.r - (1 + counts[0]!))
    let best = 0
    let min = Number.POSITIVE_INFINITY
    for (let i = 0; i < 2; i++) {
      const r = (start + i) % 2
      const score = view[r]!.w * 4 + view[r]!.r
      if (score < min) {
        min = score
        best = r
      }
    }
    view[best] = { ...view[best]!, w: view[best]!.w + 1 }
    if (rotate) start = (start + 1) % 2
    counts[best]! += 1
    if (best === 1) to1.push(50 + 100 * j)
  }
  return { counts, chargeGap }
}

describe("S03 loads published only after a long GPU step", () => {
  it("S03 buggy reference: 20/0 with fixed tie-break, 19/1 with rotating; broadcasts erase charges", () => {
    expect(s03Reference(false).counts).toEqual([20, 0])
    expect(s03Reference(true).counts).toEqual([19, 1])
    expect(Math.min(...s03Reference(false).chargeGap)).toBeLessThan(0)
  })
  it("S03 (a) ledger-balanced sends >= 15 of 20 to rank 1 (tokens: all 20; requests via staleness: 15)", () => {
    expect(s03Ledger("tokens").counts).toEqual([0, 20])
    const byCount = s03Ledger("requests").counts
    expect(byCount[1]).toBeGreaterThanOrEqual(15)
  })
  it("S03 (b) after k dispatches to rank 0, its view stays >= published + k across broadcasts", () => {
    const r = s03Ledger("requests")
    expect(r.counts[0]).toBeGreaterThan(0) // rank 0 did get dispatches, so the check bites
    for (const gap of r.chargeGap) expect(gap).toBeGreaterThanOrEqual(0)
  })
  it("S03 rank 0 is flagged stale once its snapshot is older than 1 s, and then never looks idle", () => {
    const p = makeLedgerBalanced({ metric: "requests" })
    const s = p.observe(p.init(2), [rank0Row, rank1Row([], 1200)], 1.2)
    const out = routed(p.route(s, { requestId: "x", inputLength: 1 }, 1.25))
    expect(out.explanation.stale).toEqual([0])
    const v = p.view(s, 1.25)
    expect(v[0]!.stale).toBe(true)
    expect(v[0]!.requests).toBeGreaterThanOrEqual(v[1]!.requests)
    expect(out.rank).toBe(1)
  })
})

// ---------------------------------------------------------------------------------------------
describe("S05 total_tokens DP budget stale during a burst (class covered by the ledger)", () => {
  const snap = [0, 1, 2, 3].map((r) => load(r, 1, 0, 0, 10000))
  it("S05 16 x 4096-token requests within 5 ms land 4/4/4/4; rank r carries 10000 + 4096 k", () => {
    const p = ledgerBalanced
    let s = p.observe(p.init(4), snap, 1)
    const counts = [0, 0, 0, 0]
    for (let i = 0; i < 16; i++) {
      const out = routed(p.route(s, { requestId: `b${i}`, inputLength: 4096 }, 1 + (i * 0.005) / 16))
      s = out.state
      counts[out.rank]! += 1
      expect(p.view(s, 1.005)[out.rank]!.tokens).toBe(10000 + 4096 * counts[out.rank]!)
    }
    expect(counts).toEqual([4, 4, 4, 4])
  })
  it("S05 buggy reference (no charge between snapshots) gives 16/0/0/0", () => {
    const tokens = [10000, 10000, 10000, 10000]
    const counts = [0, 0, 0, 0]
    for (let i = 0; i < 16; i++) counts[tokens.indexOf(Math.min(...tokens))]! += 1
    expect(counts).toEqual([16, 0, 0, 0])
  })
})

// ---------------------------------------------------------------------------------------------
// S07: r0 (w117 r51 kv1.0), r1 (w108 r31 kv0.986), r2..r7 (w10 r60 kv0.8); case B r0/r1 waiting 1.
const s07Loads = (caseB: boolean) => [
  load(0, 0, 51, caseB ? 1 : 117, 0, 1.0),
  load(1, 0, 31, caseB ? 1 : 108, 0, 0.986),
  ...[2, 3, 4, 5, 6, 7].map((r) => load(r, 0, 60, 10, 0, 0.8))
]
const s07Ledger = (caseB: boolean) => {
  const p = makeLedgerBalanced({ metric: "requests" })
  let s = p.init(8)
  const counts = new Array<number>(8).fill(0)
  for (let i = 0; i < 200; i++) {
    const now = 1 + i / 200
    if (i % 20 === 0) s = p.observe(s, s07Loads(caseB), now)
    const out = routed(p.route(s, { requestId: `k${i}`, inputLength: 512 }, now))
    s = out.state
    counts[out.rank]! += 1
  }
  return counts
}
describe("S07 KV-pressure guard", () => {
  it("S07 ledger-balanced sends 0 of 200 to r0 in both cases, and >= 100 to r2..r7 in case B", () => {
    const a = s07Ledger(false)
    const b = s07Ledger(true)
    expect(a[0]).toBe(0)
    expect(b[0]).toBe(0)
    expect(b.slice(2).reduce((x, y) => x + y, 0)).toBeGreaterThanOrEqual(100)
  })
  it("S07 buggy reference, case B plain score: r0 80, r1 120, r2..r7 0", () => {
    let view: Array<{ w: number; r: number }> = []
    const counts = new Array<number>(8).fill(0)
    for (let i = 0; i < 200; i++) {
      if (i % 20 === 0) view = s07Loads(true).map((l) => ({ w: l.numWaitingReqs, r: l.numRunningReqs }))
      let best = 0
      let min = Number.POSITIVE_INFINITY
      view.forEach((x, r) => {
        if (x.w * 4 + x.r < min) {
          min = x.w * 4 + x.r
          best = r
        }
      })
      view[best]!.w += 1
      counts[best]! += 1
    }
    expect(counts).toEqual([80, 120, 0, 0, 0, 0, 0, 0])
  })
})

// ---------------------------------------------------------------------------------------------
describe("ledger-balanced mechanics", () => {
  it("S01 class: with no snapshot ever received a 32-request burst spreads 8/8/8/8", () => {
    let s = ledgerBalanced.init(4)
    const counts = [0, 0, 0, 0]
    for (let i = 0; i < 32; i++) {
      const out = routed(ledgerBalanced.route(s, { requestId: `s${i}`, inputLength: 100 }, i * 0.0015))
      s = out.state
      counts[out.rank]! += 1
    }
    expect(counts).toEqual([8, 8, 8, 8])
  })
  it("an older snapshot never overwrites a newer one; an equal or newer one drops only included charges", () => {
    const p = makeLedgerBalanced({ metric: "requests" })
    let s = p.observe(p.init(1), [load(0, 10, 2, 0, 0)], 10)
    s = routed(p.route(s, { requestId: "a", inputLength: 1 }, 10.5)).state
    s = routed(p.route(s, { requestId: "b", inputLength: 1 }, 11.5)).state
    expect(p.view(s, 12)[0]!.requests).toBe(4)
    s = p.observe(s, [load(0, 9, 0, 0, 0)], 12) // older: ignored
    expect(p.view(s, 12)[0]!.requests).toBe(4)
    s = p.observe(s, [load(0, 11, 3, 0, 0)], 12) // includes "a" (routed 10.5 < 11), not "b"
    expect(p.view(s, 12)[0]!.requests).toBe(4)
    s = p.finish(s, ["b", "unknown"], 12)
    expect(p.view(s, 12)[0]!.requests).toBe(3)
  })
  it("pinned requests are charged; errors are typed values", () => {
    const p = ledgerBalanced
    const s = p.init(2)
    const pinned = routed(p.route(s, { requestId: "p", inputLength: 7, routedDpRank: 1 }, 0))
    expect(pinned.rank).toBe(1)
    expect(p.view(pinned.state, 0)[1]!.tokens).toBe(7)
    const bad = p.route(s, { requestId: "p", inputLength: 7, routedDpRank: 2 }, 0)
    expect(isPolicyError(bad) && bad.reason).toBe("InvalidRoutedRank")
    const nan = p.route(s, { requestId: "p", inputLength: Number.NaN }, 0)
    expect(isPolicyError(nan) && nan.field).toBe("inputLength")
    const down = p.route(p.setStatus(s, [false, false]), { requestId: "p", inputLength: 1 }, 0)
    expect(isPolicyError(down) && down.reason).toBe("AllRanksUnavailable")
    const none = p.route(p.init(0), { requestId: "p", inputLength: 1 }, 0)
    expect(isPolicyError(none) && none.reason).toBe("NoRanks")
  })
  it("docstring examples", () => {
    const p = makeLedgerBalanced({})
    const s = p.observe(p.init(2), [load(0, 0, 0, 0, 100), load(1, 0, 0, 0, 100)], 0)
    const a = routed(p.route(s, { requestId: "a", inputLength: 50 }, 0.001))
    expect(a.rank).toBe(0)
    expect(routed(p.route(a.state, { requestId: "b", inputLength: 50 }, 0.002)).rank).toBe(1)
    expect(
      routed(ledgerBalanced.route(ledgerBalanced.init(4), { requestId: "a", inputLength: 10 }, 0)).rank
    ).toBe(0)
    const v = p.view(p.init(2), 0)
    expect(v[0]!.unknown && v[0]!.requests === 0).toBe(true)
  })
})

// ---------------------------------------------------------------------------------------------
// S04: DP=4, arrivals at t = 0..39 s in the pattern L,S,S,S (L = 100k in, occupies its rank 100 s;
// S = 2k in, 5 s). Frozen: every snapshot (w0, r0) stamped 0. Fresh: true running counts at the
// last boundary, stamped then. Staleness limit 1 s. The router sees its requests finish.
const s04 = (frozen: boolean) => {
  const p = makeLedgerBalanced({ metric: "requests", staleAfterSeconds: 1 })
  let s = p.init(4)
  const reqs: Array<{ id: string; rank: number; end: number; tokens: number }> = []
  const longs = [0, 0, 0, 0]
  const runningSpread: Array<number> = []
  const flaggedAt: Array<number> = []
  for (let t = 0; t < 40; t++) {
    s = p.finish(
      s,
      reqs.filter((r) => r.end <= t).map((r) => r.id),
      t
    )
    const live = [0, 1, 2, 3].map((k) => reqs.filter((r) => r.rank === k && r.end > t))
    s = p.observe(
      s,
      live.map((rs, k) =>
        frozen
          ? load(k, 0, 0, 0, 0)
          : load(
              k,
              t,
              rs.length,
              0,
              rs.reduce((a, r) => a + r.tokens, 0)
            )
      ),
      t
    )
    runningSpread.push(Math.max(...live.map((x) => x.length)) - Math.min(...live.map((x) => x.length)))
    const long = t % 4 === 0
    const out = routed(p.route(s, { requestId: `q${t}`, inputLength: long ? 100_000 : 2_000 }, t))
    if ((out.explanation.stale ?? []).length > 0) flaggedAt.push(t)
    s = out.state
    if (long) longs[out.rank]! += 1
    reqs.push({ id: `q${t}`, rank: out.rank, end: t + (long ? 100 : 5), tokens: long ? 100_000 : 2_000 })
  }
  return { longs, runningSpread, flaggedAt }
}

describe("S04 frozen per-engine stats", () => {
  it("S04 buggy reference (frozen view, bumps never decremented): longs 10/0/0/0, running 10/1/1/2 at 39 s", () => {
    const bumps = [0, 0, 0, 0]
    const placed: Array<{ rank: number; end: number; long: boolean }> = []
    for (let t = 0; t < 40; t++) {
      const rank = bumps.indexOf(Math.min(...bumps))
      bumps[rank]! += 1
      placed.push({ rank, end: t + (t % 4 === 0 ? 100 : 5), long: t % 4 === 0 })
    }
    expect([0, 1, 2, 3].map((k) => placed.filter((x) => x.rank === k && x.long).length)).toEqual([
      10, 0, 0, 0
    ])
    expect([0, 1, 2, 3].map((k) => placed.filter((x) => x.rank === k && x.end > 39).length)).toEqual([
      10, 1, 1, 2
    ])
  })
  for (const frozen of [false, true])
    it(`S04 ledger-balanced (${frozen ? "frozen" : "fresh"}): <= 3 of 10 long per rank, running spread <= 2`, () => {
      const r = s04(frozen)
      for (const k of r.longs) expect(k).toBeLessThanOrEqual(3)
      expect(r.longs.reduce((a, b) => a + b, 0)).toBe(10)
      for (const d of r.runningSpread) expect(d).toBeLessThanOrEqual(2)
      // staleness: the frozen snapshot is flagged from the arrival at t = 2 s on; fresh ones never
      expect(r.flaggedAt).toEqual(frozen ? Array.from({ length: 38 }, (_, i) => i + 2) : [])
    })
})
