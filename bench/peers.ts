/**
 * ns per `route` (+ the matching `finish`) of every peer router's policies in the registry (SMG,
 * vLLM production-stack, llm-d, Dynamo, AIBrix) at 8, 64 and 1024 ranks, next to a floor: a bare
 * argmin of waiting + running + routed over plain mutable arrays, charging the chosen rank in
 * place and tracking the in-flight charges in a mutable Map (what every one of these policies must
 * at least do).
 *
 * Each step routes request k and finishes request k - 512 (about 512 in flight). Requests carry two
 * prefix-block hashes (a shared system prompt out of 8, a per-request block; decimal, so SMG's
 * prefix hash takes them as token ids) and a session out of 256; ranks report KV usage, waiting
 * uncached tokens and throughput, so the load-reading policies take their report paths and the
 * prefix scorers and indexes do their work. Timing as in `ownPolicies.ts`: each policy in a process
 * of its own with its floor, interleaved rounds, fastest round; one table per system, printed as
 * soon as it is measured (the whole set takes minutes at 1024 ranks).
 *
 * @since 0.2.0
 */
import { findPolicy, type Policy, type RankLoad, type RouteRequest } from "@loadledger/policies"
import {
  type Benchmark,
  type Candidate,
  consume,
  iterationsFor,
  nsPerOpInterleaved,
  prng,
  randomLoads,
  routeStep,
  sizes
} from "./harness.js"
import { policyTable, type Row } from "./table.js"

/** The measured policies by system, as registered. */
const systems: ReadonlyArray<readonly [system: string, names: ReadonlyArray<string>]> = [
  [
    "SMG",
    [
      "smg/round-robin",
      "smg/random",
      "smg/power-of-two",
      "smg/least-load",
      "smg/cache-aware",
      "smg/prefix-hash",
      "smg/consistent-hashing",
      "smg/dp-min-token"
    ]
  ],
  [
    "production-stack",
    ["production-stack/roundrobin", "production-stack/session", "production-stack/prefixaware"]
  ],
  [
    "llm-d",
    [
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
      "llm-d/utilization-detector"
    ]
  ],
  ["Dynamo", ["dynamo/kv", "dynamo/kv-t0.5", "dynamo/vllm-style"]],
  [
    "AIBrix",
    [
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
  ]
]

const loadsFor = (n: number): ReadonlyArray<RankLoad> => {
  const rnd = prng(n + 1)
  return randomLoads(n, { kvMax: 0.8 }).map((l) => ({
    ...l,
    numWaitingUncachedTokens: Math.floor(rnd() * 20_000),
    genThroughput: 1000 + Math.floor(rnd() * 3000)
  }))
}

const requests: ReadonlyArray<RouteRequest> = (() => {
  const rnd = prng(13)
  return Array.from({ length: 1024 }, (_, i) => ({
    requestId: `r${i}`,
    inputLength: 1 + Math.floor(rnd() * 8192),
    prefixHashes: [`${1000 + (i & 7)}`, `${i}`],
    sessionId: `s${Math.floor(rnd() * 256)}`
  }))
})()
const finishLists = Array.from({ length: 1024 }, (_, i) => [`r${i}`])

/** Argmin of waiting + running + routed over a plain array, charge in place, in-flight Map. */
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
    const loads = loadsFor(n)
    const cand: Candidate = {
      iterations: iterationsFor(60 * n + 4000),
      step: routeStep(policy, policy.observe(policy.init(n), loads, 1), requests, 1, finishLists)
    }
    const [f, ns] = nsPerOpInterleaved([floor(loads), cand])
    return [n, ns!, f!]
  })
}

/**
 * The peer-router benchmark, registered in `bench/registry.ts`: one table per system, each policy
 * in a process of its own next to its floor, in the modes of the run (tsx, `--built`, `--compare`).
 *
 * @since 0.2.0
 */
export const peerPolicyBench: Benchmark = {
  name: "peer routers (SMG, production-stack, llm-d, Dynamo, AIBrix): ns per route+finish vs a bare argmin floor",
  run: () => {
    for (const [system, names] of systems) {
      process.stdout.write(`\n### ${system}\n`)
      policyTable(import.meta.url, "measurePeer", names)
    }
  }
}
