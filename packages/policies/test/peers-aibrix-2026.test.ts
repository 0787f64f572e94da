import { Aibrix, findPolicy } from "@loadledger/policies"
import { describe, expect, it } from "vitest"

const pod = (id: string, running?: number, drain?: number): Aibrix.AibrixPod => ({
  id,
  metrics: {
    ...(running === undefined ? {} : { realtime_num_requests_running: running }),
    ...(drain === undefined ? {} : { realtime_running_requests_drain_rate_1m: drain })
  }
})

describe("aibrix/load-balance (proposed, vllm-project/aibrix#2365)", () => {
  it("is registered as the proposal of #2365", () => {
    const e = findPolicy("aibrix/load-balance")!
    expect([e.reference, e.proposed, e.engine]).toEqual([true, "vllm-project/aibrix#2365", "any"])
  })
  it("pending time divides by the drain rate, 0 and missing rates count as capacity 1", () => {
    expect(Aibrix.strategyScores("load-balance", [pod("a", 8, 4), pod("b", 3, 0), pod("c")])).toEqual([
      2, 3, 0
    ])
  })
  it("a NaN pending time is never a candidate; a list of only NaN is an error, not a random pick", () => {
    const r = Aibrix.routeStrategy("load-balance", [pod("a", Number.NaN), pod("b", 2)], [0])
    expect(r._tag === "AibrixRouted" && r.index).toBe(1)
    expect(Aibrix.routeStrategy("load-balance", [pod("a", Number.NaN)], [0])._tag).toBe("AibrixNoPods")
  })
  it("scores in a weighted mix with the least polarity", () => {
    const s = Aibrix.aibrixScorer(
      "load-balance",
      [pod("a", 4, 2), pod("b", 1)],
      [],
      Aibrix.aibrixPrefixIndex()
    )
    expect(s).toEqual({ polarity: "least", scores: [2, 1] })
  })
  it("the adapter balances in-flight requests: four requests on two idle ranks go two and two", () => {
    const p = findPolicy("aibrix/load-balance")!.make({ seed: 5 })
    let s = p.init(2)
    const picks: Array<number> = []
    for (const id of ["a", "b", "c", "d"]) {
      const r = p.route(s, { requestId: id, inputLength: 10 }, 0)
      if (r._tag !== "Routed") throw new Error(r._tag)
      s = r.state
      picks.push(r.rank)
    }
    expect([picks.filter((x) => x === 0).length, picks.filter((x) => x === 1).length]).toEqual([2, 2])
  })
})
