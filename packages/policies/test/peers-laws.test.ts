import { findPolicy, type Policy, type RouteRequest } from "@loadledger/policies"
import { type PolicyLaws, policyLaws } from "@loadledger/testing"
import fc from "fast-check"
import { describe, expect, it } from "vitest"

// Requests that carry what the peer policies read: block hashes from a small alphabet (so prefixes
// are shared and matched) and, half the time, a session id.
const request: fc.Arbitrary<RouteRequest> = fc.record({
  requestId: fc.uuid(),
  inputLength: fc.integer({ min: 1, max: 8192 }),
  prefixHashes: fc.array(fc.constantFrom("1", "2", "3", "4", "5"), { minLength: 1, maxLength: 6 }),
  sessionId: fc.option(fc.constantFrom("s1", "s2", "s3"), { nil: undefined })
})
const kvLoad = (dpRank: number) =>
  fc.record({
    dpRank: fc.constant(dpRank),
    timestamp: fc.integer({ min: 1000, max: 1_000_000 }).map((ms) => ms / 1000),
    numRunningReqs: fc.nat({ max: 64 }),
    numWaitingReqs: fc.nat({ max: 64 }),
    numTotalTokens: fc.nat({ max: 200_000 }),
    kvCacheUsage: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
    numWaitingUncachedTokens: fc.option(fc.nat({ max: 50_000 }), { nil: undefined })
  })

type Law = keyof PolicyLaws
const ALL: ReadonlyArray<Law> = [
  "validRankOrTypedError",
  "deterministic",
  "healthyRanksOnly",
  "burstSpread",
  "permutationEquivariant",
  "monotoneInLoad"
]

// What each policy breaks on purpose (upstream behaviour), and why.
const TIES =
  "ties go to the lowest rank (or the sorted url list), so relabelling ranks does not relabel the choice"
const RING = "the ring hashes the ranks' urls, so relabelling ranks does not relabel the choice"
const DRAWS = "seeded random draws can put two of k equal requests on one rank while another gets none"
const broken: Record<string, Partial<Record<Law, string>>> = {
  "smg/round-robin": {
    permutationEquivariant: "a global counter modulo the healthy count picks by position"
  },
  "smg/random": { burstSpread: DRAWS, permutationEquivariant: "draws index the healthy ranks by position" },
  "smg/power-of-two": {
    burstSpread: DRAWS,
    permutationEquivariant: "draws index the healthy ranks by position"
  },
  "smg/least-load": { permutationEquivariant: TIES },
  "smg/cache-aware": {
    permutationEquivariant: TIES,
    burstSpread: "a prefix hit goes to the tree's tenant until the count gate (32 requests) trips"
  },
  "smg/prefix-hash": {
    permutationEquivariant: RING,
    burstSpread: "equal prefixes map to one ring position until its load passes 1.25 x the mean"
  },
  "smg/consistent-hashing": {
    permutationEquivariant: RING,
    burstSpread: "one session id always maps to one rank"
  },
  "smg/dp-min-token": { permutationEquivariant: TIES },
  "production-stack/roundrobin": { permutationEquivariant: TIES },
  "production-stack/session": {
    permutationEquivariant: RING,
    burstSpread: "one session id always maps to one rank"
  },
  "production-stack/prefixaware": {
    permutationEquivariant: "the draw indexes the candidates by position",
    burstSpread: "a matched prefix goes only to the endpoints holding it, with no load bound"
  }
}

const params = { numRuns: 40, seed: 20261201 }

describe("policyLaws for the SMG and production-stack policies", () => {
  for (const [name, breaks] of Object.entries(broken)) {
    describe(name, () => {
      const laws = policyLaws(findPolicy(name)!.make({ seed: 7 }), { request, load: kvLoad })
      for (const law of ALL) {
        const why = breaks[law]
        if (why === undefined) it(law, () => fc.assert(laws[law] as fc.IProperty<unknown[]>, params))
        else
          it(`${law} is broken on purpose: ${why}`, () => {
            expect(fc.check(laws[law] as fc.IProperty<unknown[]>, { ...params, numRuns: 200 }).failed).toBe(
              true
            )
          })
      }
    })
  }
})

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

describe("the counterexamples, concretely", () => {
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
