import { describe, expect, it } from "vitest"
import { findPolicy, type Policy, policyEntries, type RankLoad } from "../src/index.js"

const peers = policyEntries().filter((e) => /^(llm-d|dynamo|aibrix)\//.test(e.name))

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

// The laws themselves run over every registered policy in packages/testing/test/RegistryLaws.test.ts;
// the peer routers' law breaks are rows of packages/testing/src/LawExceptionsPeers.ts, each checked at
// its counterexample. Here: the registry holds the peers, and the upstream behaviour behind the rows.
describe("the peer routers in the registry (llm-d, Dynamo, AIBrix)", () => {
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
        "least-utilization",
        "slo",
        "slo-least-load-pulling",
        "slo-least-load",
        "slo-pack-load",
        "load-balance",
        "multi"
      ].map((n) => `aibrix/${n}`)
    ])
  })
})

describe("the upstream behaviour behind the peer routers' law exceptions", () => {
  it("burst: llm-d's queue scorer sends 8 requests against equal stale snapshots by the picker's shuffle only", () => {
    // every request sees the same scores (1.0 each): the max-score picker's shuffle decides alone
    expect(burst(findPolicy("llm-d/queue-scorer")!.make({ seed: 2 }), 2, 8)).toEqual([5, 3])
    expect(burst(findPolicy("llm-d/queue-scorer")!.make({ seed: 6 }), 2, 8)).toEqual([3, 5])
  })
  it("burst: AIBrix least-request spreads the same burst (its running count is the gateway's own)", () => {
    expect(burst(findPolicy("aibrix/least-request")!.make({ seed: 1 }), 2, 8)).toEqual([4, 4])
  })
  it("permutation: Dynamo's vLLM-style selector starts its scan at rotating index 0 (rank order)", () => {
    const p = findPolicy("dynamo/vllm-style")!.make({})
    const r = p.route(p.init(3), { requestId: "a", inputLength: 10 }, 0)
    expect(r._tag === "Routed" && r.rank).toBe(0)
  })
})
