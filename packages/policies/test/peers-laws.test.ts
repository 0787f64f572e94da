import { findPolicy, type Policy, type RouteRequest } from "@loadledger/policies"
import { describe, expect, it } from "vitest"

// The laws themselves run over every registered policy in packages/testing/test/RegistryLaws.test.ts;
// the SMG and production-stack policies' law breaks are rows of packages/testing/src/LawExceptionsPeers.ts,
// each checked at its counterexample. Here: the upstream behaviour behind those rows, rank by rank.

const ranks = (
  p: Policy<unknown>,
  n: number,
  reqs: ReadonlyArray<Partial<RouteRequest>>,
  status?: boolean[]
) => {
  let s = p.init(n)
  if (status !== undefined) s = p.setStatus(s, status)
  return reqs.map((r, i) => {
    const x = p.route(s, { requestId: `r${i}`, inputLength: 100, ...r }, 0)
    if (x._tag !== "Routed") return x.reason
    s = x.state
    return x.rank
  })
}
const make = (name: string, seed = 0) => findPolicy(name)!.make({ seed })

describe("the upstream behaviour behind the SMG and production-stack law exceptions", () => {
  it("ties: two idle ranks, one request goes to rank 0 under either labelling", () => {
    for (const name of [
      "smg/least-load",
      "smg/cache-aware",
      "smg/dp-min-token",
      "production-stack/roundrobin"
    ])
      expect([name, ranks(make(name), 2, [{}])]).toEqual([name, [0]])
  })

  it("round robin counts positions: healthy {1, 2} of 3 get 1, 2, 1; relabelled healthy {0, 1} get 0, 1, 0", () => {
    expect(ranks(make("smg/round-robin"), 3, [{}, {}, {}], [false, true, true])).toEqual([1, 2, 1])
    expect(ranks(make("smg/round-robin"), 3, [{}, {}, {}], [true, true, false])).toEqual([0, 1, 0])
  })

  it("rings: session s1 lands on the same rank label whatever the relabelling", () => {
    expect(ranks(make("smg/consistent-hashing"), 2, [{ sessionId: "s1" }, { sessionId: "s1" }])).toEqual([
      1, 1
    ])
    expect(ranks(make("production-stack/session"), 2, [{ sessionId: "s1" }, { sessionId: "s1" }])).toEqual([
      0, 0
    ])
    expect(ranks(make("smg/prefix-hash"), 2, [{ prefixHashes: ["1", "2"] }])).toEqual([0])
  })

  it("draws: seed 1 puts 3 requests on 3 idle ranks as 1, 0, 1 (smg/random); seed 6 as 1, 0, 0 (smg/power-of-two)", () => {
    expect(ranks(make("smg/random", 1), 3, [{}, {}, {}])).toEqual([1, 0, 1])
    expect(ranks(make("smg/power-of-two", 6), 3, [{}, {}, {}])).toEqual([1, 0, 0])
  })

  it("prefixaware: six requests with one prefix all go to the endpoint that first served it", () => {
    expect(
      ranks(make("production-stack/prefixaware", 1), 4, new Array(6).fill({ prefixHashes: ["7", "8"] }))
    ).toEqual([2, 2, 2, 2, 2, 2])
  })
})
