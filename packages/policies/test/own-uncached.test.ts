import { describe, expect, it } from "vitest"
import { makeUncachedTokens, type RankLoad } from "../src/index.js"

const row = (dpRank: number, t: number, tokens: number, extra: Partial<RankLoad> = {}): RankLoad => ({
  dpRank,
  timestamp: t,
  numRunningReqs: 0,
  numWaitingReqs: 0,
  numTotalTokens: tokens,
  ...extra
})

describe("uncached-tokens", () => {
  const p = makeUncachedTokens()
  const routeOn = (loads: ReadonlyArray<RankLoad>, hashes: ReadonlyArray<string>, sentTo: number) => {
    // rank `sentTo` was sent a request with `hashes` before the snapshot `loads`
    let s = p.observe(
      p.init(loads.length),
      loads.map((l) => ({ ...l, timestamp: 0 })),
      0
    )
    const a = p.route(
      s,
      { requestId: "warm", inputLength: 4000, prefixHashes: hashes, routedDpRank: sentTo },
      0
    )
    if (a._tag !== "Routed") throw new Error(a.message)
    s = p.observe(p.finish(a.state, ["warm"], 1), loads, 1)
    return p.route(s, { requestId: "q", inputLength: 4000, prefixHashes: [...hashes.slice(0, 3), "new"] }, 1)
  }
  it("a holder of 3 of 4 blocks wins while its load gap is below the 3000 cached tokens", () => {
    const r = routeOn([row(0, 1, 2000), row(1, 1, 0)], ["a", "b", "c", "d"], 0)
    expect(r._tag === "Routed" && r.rank).toBe(0)
    expect(r._tag === "Routed" && r.explanation.scores).toEqual([2000 + 1000, 0 + 4000])
  })
  it("and loses once the gap exceeds them (no herding)", () => {
    const r = routeOn([row(0, 1, 3500), row(1, 1, 0)], ["a", "b", "c", "d"], 0)
    expect(r._tag === "Routed" && r.rank).toBe(1)
  })
  it("numWaitingUncachedTokens counts; absent on one rank takes the highest reported", () => {
    const s = p.observe(
      p.init(3),
      [
        row(0, 1, 0, { numWaitingUncachedTokens: 500 }),
        row(1, 1, 0),
        row(2, 1, 0, { numWaitingUncachedTokens: 100 })
      ],
      1
    )
    const r = p.route(s, { requestId: "q", inputLength: 10 }, 1)
    expect(r._tag === "Routed" && r.explanation.scores).toEqual([510, 510, 110])
    expect(r._tag === "Routed" && r.rank).toBe(2)
  })
  it("a prompt that fits only on rank 1's free KV goes there", () => {
    const s = p.observe(
      p.init(2),
      [row(0, 1, 0, { kvAvailableTokens: 100 }), row(1, 1, 9000, { kvAvailableTokens: 5000 })],
      1
    )
    const r = p.route(s, { requestId: "q", inputLength: 1000 }, 1)
    expect(r._tag === "Routed" && r.rank).toBe(1)
  })
  it("in-flight floor: a snapshot that does not show an unfinished request cannot hide it; finish releases it", () => {
    const zero = [row(0, 2, 0), row(1, 2, 0)]
    const a = p.route(
      p.observe(
        p.init(2),
        zero.map((l) => ({ ...l, timestamp: 1 })),
        1
      ),
      { requestId: "a", inputLength: 1000 },
      1
    )
    if (a._tag !== "Routed") throw new Error(a.message)
    expect(a.rank).toBe(0)
    const s = p.observe(a.state, zero, 2) // stamped after the route: the charge is dropped
    const b = p.route(s, { requestId: "b", inputLength: 10 }, 2)
    expect(b._tag === "Routed" && b.explanation.scores).toEqual([1010, 10])
    const c = p.route(p.finish(s, ["a"], 2), { requestId: "c", inputLength: 10 }, 2)
    expect(c._tag === "Routed" && c.explanation.scores).toEqual([10, 10])
  })
  it("typed errors", () => {
    expect(p.route(p.init(0), { requestId: "q", inputLength: 1 }, 0)._tag).toBe("PolicyError")
    const e = p.route(p.init(2), { requestId: "q", inputLength: Number.NaN }, 0)
    expect(e._tag === "PolicyError" && e.field).toBe("inputLength")
    const f = p.route(p.init(2), { requestId: "q", inputLength: 1, routedDpRank: 5 }, 0)
    expect(f._tag === "PolicyError" && f.reason).toBe("InvalidRoutedRank")
  })
})
