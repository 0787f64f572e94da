/**
 * ns per `route` (+ the matching `finish`) of the peer routers' policies (llm-d, Dynamo, AIBrix, by
 * their registry names) at 8, 64 and 1024 ranks, next to a floor: a bare argmin of
 * waiting + running over plain mutable arrays, charging the chosen rank in place and tracking the
 * in-flight charges in a mutable Map.
 *
 * Each step routes request k and finishes request k - 512 (about 512 in flight). Requests carry two
 * prefix-block hashes (a shared system prompt out of 8, a per-request block) so the prefix scorers
 * and indexes do their work. Timing as `ownPolicies.ts`: each policy in a process of its own with
 * its floor, interleaved rounds, fastest round.
 *
 * @since 0.2.0
 */
import { findPolicy, type Policy, type RankLoad, type RouteRequest } from "@loadledger/policies"
import {
  type Benchmark,
  type Candidate,
  consume,
  inChild,
  iterationsFor,
  nsPerOpInterleaved,
  prng,
  randomLoads,
  routeStep,
  sizes
} from "./harness.js"
import { printRatioTable, type Row } from "./table.js"

const names = [
  "llm-d/profile",
  "llm-d/profile-load-aware",
  "llm-d/queue-scorer",
  "llm-d/kv-cache-utilization-scorer",
  "llm-d/running-requests-size-scorer",
  "llm-d/load-aware-scorer",
  "llm-d/active-request-scorer",
  "llm-d/token-load-scorer",
  "llm-d/prefix-cache-scorer",
  "llm-d/weighted-random-picker",
  "llm-d/utilization-detector",
  "dynamo/kv",
  "dynamo/kv-t0.5",
  "dynamo/vllm-style",
  "aibrix/least-request",
  "aibrix/throughput",
  "aibrix/least-kv-cache",
  "aibrix/least-gpu-cache",
  "aibrix/least-busy-time",
  "aibrix/least-latency",
  "aibrix/random",
  "aibrix/prefix-cache",
  "aibrix/multi"
]

const requests: ReadonlyArray<RouteRequest> = (() => {
  const rnd = prng(13)
  return Array.from({ length: 1024 }, (_, i) => ({
    requestId: `r${i}`,
    inputLength: 1 + Math.floor(rnd() * 8192),
    prefixHashes: [`sys${i & 7}`, `u${i}`]
  }))
})()
const finishLists = Array.from({ length: 1024 }, (_, i) => [`r${i}`])

const floor = (loads: ReadonlyArray<RankLoad>): Candidate => {
  const n = loads.length
  const q = loads.map((l) => l.numRunningReqs! + l.numWaitingReqs!) // randomLoads fills every count
  const inFlight = new Map<string, number>()
  return {
    iterations: iterationsFor(4 * n + 200),
    step: (k) => {
      let best = 0
      let bestQ = q[0]!
      for (let i = 1; i < n; i++)
        if (q[i]! < bestQ) {
          bestQ = q[i]!
          best = i
        }
      const r = requests[k & 1023]!
      q[best]! += 1
      inFlight.set(r.requestId, best)
      const old = requests[(k + 512) & 1023]!
      const e = inFlight.get(old.requestId)
      if (e !== undefined) {
        inFlight.delete(old.requestId)
        q[e]! -= 1
      }
      consume(best)
    }
  }
}

/**
 * Rows for one peer policy (a registry name), measured in this process next to its floor.
 *
 * @since 0.2.0
 */
export const measurePeer = (name: string): Array<Row> => {
  const policy = findPolicy(name)!.make({ seed: 1 }) as Policy<unknown>
  return sizes.map((n): Row => {
    const loads = randomLoads(n, { kvMax: 0.8 })
    const cand: Candidate = {
      iterations: iterationsFor(60 * n + 4000),
      step: routeStep(policy, policy.observe(policy.init(n), loads, 1), requests, 1, finishLists)
    }
    const [f, ns] = nsPerOpInterleaved([floor(loads), cand])
    return [n, ns!, f!]
  })
}

/**
 * The peer-router benchmark, registered in `bench/registry.ts`.
 *
 * @since 0.2.0
 */
export const peerRouterBench: Benchmark = {
  name: "peer routers (llm-d, Dynamo, AIBrix): ns per route+finish vs a bare argmin floor",
  run: () => {
    // one table per policy, printed as soon as it is measured (23 policies take minutes at 1024 ranks)
    for (const name of names)
      printRatioTable([name], [inChild<Array<Row>>(import.meta.url, "measurePeer", name)])
  }
}
