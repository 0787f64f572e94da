import { describe, expect, it } from "vitest"
import {
  type CacheAffinityState,
  cacheAffinity,
  isPolicyError,
  makeCacheAffinity,
  type RankLoad
} from "../src/index.js"
import { routed } from "./support/routed.js"

const load = (dpRank: number, timestamp: number, running: number, kv?: number): RankLoad => ({
  dpRank,
  timestamp,
  numRunningReqs: running,
  numWaitingReqs: 0,
  numTotalTokens: 0,
  kvCacheUsage: kv
})

// ---------------------------------------------------------------------------------------------
// Buggy reference for S12/S13/S14: SGLang's cache-aware router as the cases describe it. A worker's
// tree size in chars, local in-flight counts, gate max - min > 64 && max > 1.5 min on local counts;
// hit (match ratio >= threshold) -> matched worker; miss -> smallest tree; gate tripped -> least
// in-flight; ties -> lowest index.
interface RefWorker {
  treeChars: number
  inFlight: number
  prefixes: Set<string>
}
const refRoute = (
  ws: Array<RefWorker>,
  prefix: ReadonlyArray<string>,
  chars: number,
  threshold = 0.5
): number => {
  const loads = ws.map((w) => w.inFlight)
  const max = Math.max(...loads)
  const min = Math.min(...loads)
  const argmin = (xs: ReadonlyArray<number>) => xs.indexOf(Math.min(...xs))
  let pick: number
  if (max - min > 64 && max > 1.5 * min) pick = argmin(loads)
  else {
    const match = ws.map((w) => {
      let k = 0
      while (k < prefix.length && w.prefixes.has(prefix[k]!)) k++
      return prefix.length === 0 ? 0 : k / prefix.length
    })
    const best = match.indexOf(Math.max(...match))
    pick = match[best]! >= threshold ? best : argmin(ws.map((w) => w.treeChars))
  }
  const w = ws[pick]!
  w.inFlight += 1
  w.treeChars += chars
  for (const h of prefix) w.prefixes.add(h)
  return pick
}

// ---------------------------------------------------------------------------------------------
describe("S12 cache-aware miss path picks the smallest prefix tree and ignores load", () => {
  it("S12 buggy reference: first 5 go to A, 7 of 10 overall", () => {
    const ws: Array<RefWorker> = [
      { treeChars: 1000, inFlight: 60, prefixes: new Set() },
      { treeChars: 50000, inFlight: 0, prefixes: new Set() }
    ]
    const picks = Array.from({ length: 10 }, (_, i) => refRoute(ws, [`u${i}`], 1000))
    expect(picks.slice(0, 5)).toEqual([0, 0, 0, 0, 0])
    expect(picks.filter((p) => p === 0).length).toBe(7)
  })
  it("S12 cache-affinity: first request and all 10 go to B (B stays below A's 60)", () => {
    const p = cacheAffinity
    let s = p.init(2)
    // A (rank 0): 60 in flight, small tree; B (rank 1): large tree (50 finished 1,000-char prompts), idle
    for (let i = 0; i < 60; i++)
      s = routed(
        p.route(s, { requestId: `a${i}`, inputLength: 250, routedDpRank: 0, prefixHashes: [`a${i}`] }, 0)
      ).state
    for (let i = 0; i < 50; i++) {
      s = routed(
        p.route(
          s,
          { requestId: `b${i}`, inputLength: 250, routedDpRank: 1, prefixHashes: ["sys", `b${i}`] },
          0
        )
      ).state
      s = p.finish(s, [`b${i}`], 0)
    }
    const picks: Array<number> = []
    for (let i = 0; i < 10; i++) {
      const out = routed(
        p.route(s, { requestId: `u${i}`, inputLength: 250, prefixHashes: [`u${i}`] }, 1 + i * 0.01)
      )
      expect(out.explanation.details?.["reason"]).toBe("cache-miss")
      picks.push(out.rank)
      s = out.state
    }
    expect(picks[0]).toBe(1)
    expect(picks).toEqual(new Array(10).fill(1))
  })
})

// ---------------------------------------------------------------------------------------------
const cachedPrefix = Array.from({ length: 100 }, (_, i) => `doc-${i}`) // 100 blocks of 1,000 tokens
describe("S13 count-based imbalance gate blind to KV saturation and diluted by router replicas", () => {
  it("S13 buggy reference: case 1 keeps worker 0; case 2 each replica (local [22,0,0,0]) keeps worker 0", () => {
    const case1: Array<RefWorker> = [8, 6, 6, 6].map((k) => ({
      treeChars: 0,
      inFlight: k,
      prefixes: new Set()
    }))
    for (const h of cachedPrefix) case1[0]!.prefixes.add(h)
    expect(refRoute(case1, [...cachedPrefix, "q"], 100_000)).toBe(0)
    for (let replica = 0; replica < 3; replica++) {
      const ws: Array<RefWorker> = [22, 0, 0, 0].map((k) => ({
        treeChars: 0,
        inFlight: k,
        prefixes: new Set()
      }))
      for (const h of cachedPrefix) ws[0]!.prefixes.add(h)
      expect(refRoute(ws, [...cachedPrefix, "q"], 100_000)).toBe(0)
    }
  })
  it("S13 case 1: worker 0 at token_usage 0.98 loses the cached 100k request to worker 1, 2 or 3", () => {
    const p = cacheAffinity
    let s = p.init(4)
    s = routed(
      p.route(s, { requestId: "warm", inputLength: 100_000, routedDpRank: 0, prefixHashes: cachedPrefix }, 0)
    ).state
    s = p.finish(s, ["warm"], 0.5)
    s = p.observe(s, [load(0, 1, 8, 0.98), load(1, 1, 6, 0.2), load(2, 1, 6, 0.2), load(3, 1, 6, 0.2)], 1)
    const out = routed(
      p.route(s, { requestId: "big", inputLength: 100_000, prefixHashes: [...cachedPrefix, "q"] }, 1.1)
    )
    expect([1, 2, 3]).toContain(out.rank)
    expect(out.explanation.details?.["reason"]).toBe("kv-overloaded")
  })
  it("S13 case 2: with engine-reported running [66,0,0,0] each of 3 replicas routes to worker 1, 2 or 3", () => {
    const p = cacheAffinity
    for (let replica = 0; replica < 3; replica++) {
      let s = p.init(4)
      for (let i = 0; i < 22; i++)
        s = routed(
          p.route(
            s,
            {
              requestId: `r${replica}-${i}`,
              inputLength: 1000,
              prefixHashes: [...cachedPrefix, `t${i}`],
              routedDpRank: 0
            },
            0.5
          )
        ).state
      expect(p.view(s, 0.9).map((v) => v.requests)).toEqual([22, 0, 0, 0]) // local view only
      s = p.observe(s, [load(0, 1, 66), load(1, 1, 0), load(2, 1, 0), load(3, 1, 0)], 1)
      const out = routed(
        p.route(s, { requestId: `n${replica}`, inputLength: 1000, prefixHashes: [...cachedPrefix, "q"] }, 1.1)
      )
      expect([1, 2, 3]).toContain(out.rank)
      expect(out.explanation.details?.["reason"]).toBe("imbalanced")
    }
  })
})

// ---------------------------------------------------------------------------------------------
// S14: 3 prefill workers, 30 new sessions below the cache threshold, then 5 follow-up turns each,
// one request at a time, each completing before the next.
const s14 = (useSessionId: boolean) => {
  const p = cacheAffinity
  let s = p.init(3)
  const totals = [0, 0, 0]
  const home: Array<number> = []
  const send = (sess: number, turn: number) => {
    const prefixHashes = Array.from({ length: turn + 1 }, (_, k) => `s${sess}-t${k}`)
    const id = `s${sess}-${turn}`
    const req = {
      requestId: id,
      inputLength: 2000,
      prefixHashes,
      sessionId: useSessionId ? `s${sess}` : undefined
    }
    const out = routed(p.route(s, req, sess * 0.01 + turn))
    s = p.finish(out.state, [id], sess * 0.01 + turn + 0.005)
    totals[out.rank]! += 1
    return out.rank
  }
  for (let sess = 0; sess < 30; sess++) home.push(send(sess, 0))
  let sticky = true
  for (let turn = 1; turn <= 5; turn++)
    for (let sess = 0; sess < 30; sess++) sticky &&= send(sess, turn) === home[sess]
  return { home, totals, sticky }
}
describe("S14 throwaway worker objects: ties to the first worker, prefix tree locks it in", () => {
  it("S14 buggy reference (loads always 0, ties to index 0, prefix lock-in): 180/0/0", () => {
    const ws: Array<RefWorker> = [0, 1, 2].map(() => ({ treeChars: 0, inFlight: 0, prefixes: new Set() }))
    const totals = [0, 0, 0]
    const argmin0 = () => 0 // every worker reports load 0 and ties resolve to the first
    for (let sess = 0; sess < 30; sess++) {
      const pick = argmin0()
      totals[pick]! += 1
      ws[pick]!.prefixes.add(`s${sess}-t0`)
    }
    for (let turn = 1; turn <= 5; turn++)
      for (let sess = 0; sess < 30; sess++) {
        const pick = ws.findIndex((w) => w.prefixes.has(`s${sess}-t0`))
        totals[pick]! += 1
      }
    expect(totals).toEqual([180, 0, 0])
  })
  for (const useSessionId of [true, false])
    it(`S14 cache-affinity (${useSessionId ? "session ids" : "prefix hashes only"}): session s -> worker s mod 3, 60/60/60`, () => {
      const r = s14(useSessionId)
      expect(r.home).toEqual(Array.from({ length: 30 }, (_, s) => s % 3))
      expect(r.sticky).toBe(true)
      expect(r.totals).toEqual([60, 60, 60])
    })
})

// ---------------------------------------------------------------------------------------------
// S15: 4 engines of 524,288 KV tokens; 40 sessions hashed 8/8/16/8; 10 synchronous turns of +4,096
// tokens; routing sees the previous turn's KV usage; a turn's prefix hits iff it goes to the engine
// holding the session's context and that engine's demand that turn fits.
const S15 = { engines: 4, capacity: 524_288, perTurn: 4096, turns: 10 }
const hashPlacement = (sess: number) => (sess < 8 ? 0 : sess < 16 ? 1 : sess < 32 ? 2 : 3)
type Router = (sess: number, turn: number) => number
const s15World = (
  makeRouter: (observeKv: (fn: (kv: ReadonlyArray<number>, turn: number) => void) => void) => Router
) => {
  let onKv: (kv: ReadonlyArray<number>, turn: number) => void = () => {}
  const router = makeRouter((fn) => {
    onKv = fn
  })
  const holder: Array<number | undefined> = new Array(40).fill(undefined)
  const placements: Array<Array<number>> = []
  const kvAfter: Array<Array<number>> = []
  const overCapacity: Array<number> = []
  let hitTokens = 0
  let prefixTokens = 0
  for (let turn = 1; turn <= S15.turns; turn++) {
    const place = Array.from({ length: 40 }, (_, sess) => router(sess, turn))
    const demand = new Array<number>(S15.engines).fill(0)
    place.forEach((e) => {
      demand[e]! += S15.perTurn * turn
    })
    if (demand.some((d) => d > S15.capacity)) overCapacity.push(turn)
    if (turn >= 2)
      place.forEach((e, sess) => {
        prefixTokens += S15.perTurn * (turn - 1)
        if (holder[sess] === e && demand[e]! <= S15.capacity) hitTokens += S15.perTurn * (turn - 1)
      })
    place.forEach((e, sess) => {
      holder[sess] = e
    })
    const kv = demand.map((d) => Math.min(1, d / S15.capacity))
    placements.push(place)
    kvAfter.push(kv)
    onKv(kv, turn)
  }
  return { placements, kvAfter, overCapacity, hitRate: hitTokens / prefixTokens }
}

describe("S15 consistent-hash session affinity pins sessions to a KV-saturated engine", () => {
  it("S15 consistent-hash baseline: engine 2 at 1.00 after turn 8, over capacity on turns 9-10, hit rate 0.849", () => {
    const w = s15World(() => (sess) => hashPlacement(sess))
    expect(w.kvAfter[7]![2]).toBe(1)
    expect(w.overCapacity).toEqual([9, 10])
    expect(w.hitRate).toBeCloseTo(0.849, 3)
  })
  it("S15 cache-affinity moves >= 4 sessions off engine 2 before turn 9, nothing overflows, hit rate >= 0.95", () => {
    const p = makeCacheAffinity()
    let s: CacheAffinityState = p.init(S15.engines)
    let pending: Array<string> = []
    const w = s15World((observeKv) => {
      observeKv((kv, turn) => {
        s = p.finish(s, pending, turn)
        pending = []
        s = p.observe(
          s,
          kv.map((u, e) => load(e, turn, 0, u)),
          turn
        )
      })
      return (sess, turn) => {
        const id = `s${sess}-t${turn}`
        pending.push(id)
        const req = {
          requestId: id,
          inputLength: S15.perTurn * turn,
          sessionId: `s${sess}`,
          prefixHashes: Array.from({ length: turn }, (_, k) => `s${sess}-b${k}`),
          routedDpRank: turn === 1 ? hashPlacement(sess) : undefined // inherited hash placement
        }
        const out = routed(p.route(s, req, turn - 0.5 + sess * 1e-4))
        s = out.state
        return out.rank
      }
    })
    const moved = w.placements[8]!.flatMap((e, sess) => (e !== w.placements[7]![sess] ? [sess] : []))
    expect(moved.length).toBeGreaterThanOrEqual(4)
    for (const sess of moved) expect(w.placements[7]![sess]).toBe(2)
    expect(w.overCapacity).toEqual([])
    for (let turn = 9; turn <= 10; turn++) expect(w.kvAfter[turn - 1]![2]).toBeLessThanOrEqual(0.95)
    for (const sess of moved) expect(w.placements[9]![sess]).toBe(w.placements[8]![sess])
    expect(w.hitRate).toBeGreaterThanOrEqual(0.95)
    // moving exactly 4 sessions gives the case's 0.982
    expect(moved.length).toBe(4)
    expect(w.hitRate).toBeCloseTo(0.982, 3)
    // turns 2..8 never moved a session
    for (let t = 1; t < 8; t++) expect(w.placements[t]).toEqual(w.placements[0])
  })
})

// ---------------------------------------------------------------------------------------------
describe("cache-affinity mechanics", () => {
  it("errors are typed values", () => {
    const p = cacheAffinity
    const s = p.init(2)
    const bad = p.route(s, { requestId: "x", inputLength: 1, routedDpRank: -1 }, 0)
    expect(isPolicyError(bad) && bad.reason).toBe("InvalidRoutedRank")
    const neg = p.route(s, { requestId: "x", inputLength: -1 }, 0)
    expect(isPolicyError(neg) && neg.field).toBe("inputLength")
    const down = p.route(p.setStatus(s, [false, false]), { requestId: "x", inputLength: 1 }, 0)
    expect(isPolicyError(down) && down.reason).toBe("AllRanksUnavailable")
    expect(isPolicyError(p.route(p.init(0), { requestId: "x", inputLength: 1 }, 0))).toBe(true)
  })
  it("a session on an unhealthy worker moves to a healthy one", () => {
    const p = cacheAffinity
    let s = routed(p.route(p.init(2), { requestId: "a", inputLength: 1, sessionId: "S" }, 0)).state
    expect(p.sessionRank(s, "S")).toBe(0)
    s = p.setStatus(s, [false, true])
    const out = routed(p.route(s, { requestId: "b", inputLength: 1, sessionId: "S" }, 1))
    expect(out.rank).toBe(1)
    expect(p.sessionRank(out.state, "S")).toBe(1)
  })
  it("docstring examples", () => {
    const p = makeCacheAffinity({})
    expect(
      routed(p.route(p.init(2), { requestId: "a", inputLength: 8, prefixHashes: ["sys", "u1"] }, 0)).rank
    ).toBe(0)
    expect(
      routed(cacheAffinity.route(cacheAffinity.init(3), { requestId: "a", inputLength: 10 }, 0)).rank
    ).toBe(0)
  })
})
