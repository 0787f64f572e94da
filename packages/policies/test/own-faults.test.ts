import { describe, expect, it } from "vitest"
import { ledgerBalanced, makeCacheAffinity, type Policy, policyEntries, type RankLoad } from "../src/index.js"

const idle = (dpRank: number, timestamp: number): RankLoad => ({
  dpRank,
  timestamp,
  numRunningReqs: 0,
  numWaitingReqs: 0,
  numTotalTokens: 0,
  kvCacheUsage: 0
})

/** `rounds` tied snapshots (all ranks idle, stamped after the previous routes), `perRound` requests after each. */
const tiedRounds = <S>(p: Policy<S>, n: number, rounds: number, perRound: number, prefix?: string) => {
  const counts = new Array<number>(n).fill(0)
  let s = p.init(n)
  let k = 0
  for (let round = 0; round < rounds; round++) {
    const t = 1 + round
    s = p.observe(
      s,
      Array.from({ length: n }, (_, r) => idle(r, t)),
      t
    )
    for (let i = 0; i < perRound; i++) {
      const out = p.route(
        s,
        { requestId: `q${k++}`, inputLength: 100, prefixHashes: prefix === undefined ? undefined : [prefix] },
        t + 0.001 * (i + 1)
      )
      if (out._tag !== "Routed") throw new Error(out.message)
      counts[out.rank]! += 1
      s = out.state
    }
  }
  return counts
}

describe("fault: ledger-balanced sent every tie to the same ranks", () => {
  it("10 tied snapshots with 3 requests between them spread 30 requests 4/4/4/4/4/4/3/3 over 8 ranks (was 10/10/10/0/0/0/0/0)", () => {
    const counts = tiedRounds(ledgerBalanced, 8, 10, 3)
    expect(counts).toEqual([4, 4, 4, 4, 4, 4, 3, 3])
  })
})

describe("fault: cache-affinity herded streams sharing one prompt onto one rank", () => {
  it("8 concurrent streams sharing one prompt reach all 8 ranks (was 8/0/0/0/0/0/0/0)", () => {
    const counts = tiedRounds(makeCacheAffinity(), 8, 1, 8, "system-prompt")
    expect(counts).toEqual([1, 1, 1, 1, 1, 1, 1, 1])
  })
  it("two groups of 16 rollouts (one prompt each) over 8 ranks: 4 per rank", () => {
    const p = makeCacheAffinity()
    let s = p.observe(
      p.init(8),
      Array.from({ length: 8 }, (_, r) => idle(r, 1)),
      1
    )
    const counts = new Array<number>(8).fill(0)
    for (let i = 0; i < 32; i++) {
      const out = p.route(
        s,
        { requestId: `g${i}`, inputLength: 4000, prefixHashes: [`g${i % 2}`, "x"] },
        1.001
      )
      if (out._tag !== "Routed") throw new Error(out.message)
      counts[out.rank]! += 1
      s = out.state
    }
    expect(counts).toEqual([4, 4, 4, 4, 4, 4, 4, 4])
  })
  it("a loaded rank still keeps its prefix when within the bound of the least loaded", () => {
    const p = makeCacheAffinity()
    const loads = [40, 36, 44, 50].map(
      (q, r): RankLoad => ({ ...idle(r, 1), numRunningReqs: q, numTotalTokens: q * 1000 })
    )
    let s = p.observe(p.init(4), loads, 1)
    const a = p.route(s, { requestId: "a", inputLength: 10, prefixHashes: ["p"] }, 1)
    if (a._tag !== "Routed") throw new Error(a.message)
    expect(a.rank).toBe(1) // miss: the least loaded
    s = p.observe(
      a.state,
      loads.map((l, r) => (r === 0 ? l : { ...l, timestamp: 2 })),
      2
    )
    // rank 1 (37 with the charge) is within floor(0.25 * 36) = 9 of the least loaded (36 on rank 1 itself)
    const b = p.route(s, { requestId: "b", inputLength: 10, prefixHashes: ["p"] }, 2)
    expect(b._tag === "Routed" && b.rank).toBe(1)
  })
})

describe("an id routed again while in flight: refused, and no phantom charge is left (fresh-user trial)", () => {
  // before: ledger-balanced charged "a" twice, finish("a") took one charge back, and the other
  // stayed on rank 0 for good (no snapshot includes a request that never reached an engine)
  const own = policyEntries().filter((e) => !e.reference)
  const rows = (n: number): ReadonlyArray<RankLoad> =>
    Array.from({ length: n }, (_, r) => ({ dpRank: r, numRunningReqs: 0, numWaitingReqs: 0 }))
  const probes = <S>(p: Policy<S>, s: S): Array<number> => {
    const out: Array<number> = []
    let st = s
    for (let i = 0; i < 8; i++) {
      const r = p.route(st, { requestId: `p${i}`, inputLength: 1000 }, 2)
      if (r._tag !== "Routed") throw new Error(r.message)
      out.push(r.rank)
      st = r.state
    }
    return out
  }
  for (const e of own)
    for (const clientCount of [1, 2]) {
      it(`${e.name}, ${clientCount} front end(s)`, () => {
        const p = e.make({ clientCount, clientIndex: 0 })
        const s0 = p.observe(p.init(4), rows(4), 1)
        const a = p.route(s0, { requestId: "a", inputLength: 1000 }, 1)
        if (a._tag !== "Routed") throw new Error(a.message)
        const again = p.route(a.state, { requestId: "a", inputLength: 1000 }, 1.1)
        if (again._tag === "Routed") {
          // a policy that keeps no charge per id may route it again (its cursor moves on); once
          // finished, no rank is left with a phantom load: the probes spread evenly as without it
          const twice = p.finish(p.finish(again.state, ["a"], 1.5), ["a"], 1.5)
          const spread = (xs: Array<number>) => [...xs].sort((x, y) => x - y)
          expect(spread(probes(p, twice))).toEqual(spread(probes(p, p.finish(a.state, ["a"], 1.5))))
          return
        }
        expect([again.reason, again.field]).toEqual(["InvalidInput", "requestId"])
        expect(again.message).toBe(
          'requestId "a" is already in flight (routed, not finished): finish it first or give the new request its own id'
        )
        // once finished, the id may be used again, and nothing of it is left
        const done = p.finish(a.state, ["a"], 1.5)
        const reuse = p.route(done, { requestId: "a", inputLength: 1000 }, 1.2)
        expect(reuse._tag).toBe("Routed")
        expect(probes(p, done)).toEqual(probes(p, p.finish(a.state, ["a"], 1.5)))
      })
    }
})
