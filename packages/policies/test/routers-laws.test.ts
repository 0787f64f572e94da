import { policyLaws } from "@loadledger/testing"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { findPolicy, type Policy, policyEntries, type RankLoad } from "../src/index.js"

const peers = policyEntries().filter((e) => /^(llm-d|dynamo|aibrix)\//.test(e.name))

/**
 * Peer policies whose decisions do not react to the router's own in-flight requests: upstream scores
 * scraped metrics (or a prefix index, or nothing), so k requests against equal stale snapshots land
 * wherever the picker's random draws put them (burstSpread is broken on purpose: upstream behaviour).
 */
const burstBreakers = new Set([
  "llm-d/profile",
  "llm-d/queue-scorer",
  "llm-d/kv-cache-utilization-scorer",
  "llm-d/running-requests-size-scorer",
  "llm-d/load-aware-scorer",
  "llm-d/prefix-cache-scorer",
  "llm-d/weighted-random-picker",
  "llm-d/utilization-detector",
  "dynamo/kv-t0.5",
  "aibrix/throughput",
  "aibrix/least-kv-cache",
  "aibrix/least-gpu-cache",
  "aibrix/least-busy-time",
  "aibrix/least-latency",
  "aibrix/random",
  // compares only two sampled ranks: a burst can pile onto a pair while a third rank stays idle
  "aibrix/power-of-two"
])

const row = (dpRank: number): RankLoad => ({
  dpRank,
  timestamp: 1,
  numRunningReqs: 2,
  numWaitingReqs: 1,
  numTotalTokens: 100,
  kvCacheUsage: 0.5
})

const burst = (p: Policy<unknown>, dpSize: number, k: number): Array<number> => {
  let s = p.observe(
    p.init(dpSize),
    Array.from({ length: dpSize }, (_, r) => row(r)),
    1
  )
  const counts = new Array<number>(dpSize).fill(0)
  for (let i = 0; i < k; i++) {
    const r = p.route(s, { requestId: `r${i}`, inputLength: 100 }, 1)
    if (r._tag !== "Routed") throw new Error(r.message)
    counts[r.rank]! += 1
    s = r.state
  }
  return counts
}

describe("policy laws over the peer routers (llm-d, Dynamo, AIBrix)", () => {
  it("the registry holds every peer policy", () => {
    expect(peers.map((e) => e.name)).toEqual([
      ...[
        "profile",
        "profile-load-aware",
        "queue-scorer",
        "kv-cache-utilization-scorer",
        "running-requests-size-scorer",
        "load-aware-scorer",
        "active-request-scorer",
        "token-load-scorer",
        "prefix-cache-scorer",
        "weighted-random-picker",
        "utilization-detector"
      ].map((n) => `llm-d/${n}`),
      "dynamo/kv",
      "dynamo/kv-t0.5",
      "dynamo/vllm-style",
      ...[
        "least-request",
        "throughput",
        "least-kv-cache",
        "least-gpu-cache",
        "least-busy-time",
        "least-latency",
        "random",
        "prefix-cache",
        "power-of-two",
        "multi"
      ].map((n) => `aibrix/${n}`)
    ])
  })
  for (const e of peers) {
    it(`${e.name}: valid rank or typed error, deterministic, healthy ranks only, monotone in load`, () => {
      const laws = policyLaws(e.make({ seed: 1 }))
      fc.assert(laws.validRankOrTypedError, { numRuns: 40 })
      fc.assert(laws.deterministic, { numRuns: 25 })
      fc.assert(laws.healthyRanksOnly, { numRuns: 40 })
      fc.assert(laws.monotoneInLoad, { numRuns: 60 })
    })
    it(`${e.name}: burst spread ${burstBreakers.has(e.name) ? "broken on purpose (no in-flight term)" : "holds"}`, () => {
      const laws = policyLaws(e.make({ seed: 1 }))
      expect(fc.check(laws.burstSpread, { numRuns: 60, seed: 42 }).failed).toBe(burstBreakers.has(e.name))
    })
    it(`${e.name}: breaks permutation equivariance on purpose (ties by draws or by candidate order)`, () => {
      const laws = policyLaws(e.make({ seed: 1 }))
      expect(fc.check(laws.permutationEquivariant, { numRuns: 100, seed: 42 }).failed).toBe(true)
    })
  }
})

describe("counterexamples for the laws the peer routers break", () => {
  it("burst: llm-d's queue scorer sends 8 requests against equal stale snapshots by the picker's shuffle only", () => {
    // every request sees the same scores (1.0 each): the max-score picker's shuffle decides alone
    expect(burst(findPolicy("llm-d/queue-scorer")!.make({ seed: 2 }), 2, 8)).toEqual([5, 3])
    expect(burst(findPolicy("llm-d/queue-scorer")!.make({ seed: 6 }), 2, 8)).toEqual([3, 5])
  })
  it("burst: AIBrix least-request spreads the same burst (its running count is the gateway's own)", () => {
    expect(burst(findPolicy("aibrix/least-request")!.make({ seed: 1 }), 2, 8)).toEqual([4, 4])
  })
  it("permutation: on two idle ranks the seeded draw picks the same index whatever the labels", () => {
    for (const name of ["llm-d/profile", "dynamo/kv", "aibrix/least-request"]) {
      const p = findPolicy(name)!.make({ seed: 1 })
      const a = p.route(p.init(2), { requestId: "a", inputLength: 10 }, 0)
      // the scenario relabelled by 0 <-> 1 is the same input, so equivariance would need a.rank !== b.rank
      const b = p.route(p.setStatus(p.init(2), [true, true]), { requestId: "a", inputLength: 10 }, 0)
      expect(a._tag === "Routed" && b._tag === "Routed" && a.rank === b.rank).toBe(true)
    }
  })
  it("permutation: Dynamo's vLLM-style selector starts its scan at rotating index 0 (rank order)", () => {
    const p = findPolicy("dynamo/vllm-style")!.make({})
    const r = p.route(p.init(3), { requestId: "a", inputLength: 10 }, 0)
    expect(r._tag === "Routed" && r.rank).toBe(0)
  })
})
