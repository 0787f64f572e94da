/**
 * ns per `route` (+ the matching `finish`) of the routers' policies (`smg/*`,
 * `production-stack/*`) at 8, 64 and 1024 ranks, next to a floor: a bare argmin of in-flight
 * counts over a plain mutable array, charging the chosen rank in place and tracking the charges in
 * a mutable Map (what every one of these policies must at least do).
 *
 * Each step routes request k and finishes request k - 512 (about 512 in flight). Requests carry
 * two prefix-block hashes (a shared system prompt out of 8, a per-request block) and a session out
 * of 256; ranks report KV usage and waiting uncached tokens, so the load-reading policies take
 * their report paths. Timing as in `ownPolicies.ts`: each policy in a process of its own with its
 * floor, interleaved rounds, fastest round.
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

const names = [
  "smg/round-robin",
  "smg/random",
  "smg/power-of-two",
  "smg/least-load",
  "smg/cache-aware",
  "smg/prefix-hash",
  "smg/consistent-hashing",
  "smg/dp-min-token",
  "production-stack/roundrobin",
  "production-stack/session",
  "production-stack/prefixaware"
] as const

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

/** Argmin of in-flight counts over a plain array, charge in place, in-flight Map. */
const floor = (n: number): Candidate => {
  const inflight = new Array<number>(n).fill(0)
  const owner = new Map<string, number>()
  return {
    iterations: iterationsFor(2 * n + 200),
    step: (k) => {
      let best = 0
      for (let i = 1; i < n; i++) if (inflight[i]! < inflight[best]!) best = i
      const r = requests[k & 1023]!
      inflight[best]! += 1
      owner.set(r.requestId, best)
      const old = requests[(k + 512) & 1023]!.requestId
      const e = owner.get(old)
      if (e !== undefined) {
        owner.delete(old)
        inflight[e]! -= 1
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
      iterations: 1000,
      step: routeStep(policy, policy.observe(policy.init(n), loads, 1), requests, 1, finishLists)
    }
    const [f, ns] = nsPerOpInterleaved([floor(n), cand])
    return [n, ns!, f!]
  })
}

/**
 * The peer-router benchmark, registered in `bench/registry.ts`; each policy runs in a process of
 * its own next to its floor.
 *
 * @since 0.2.0
 */
export const peerPolicyBench: Benchmark = {
  name: "peer routers (SMG, production-stack): ns per route+finish vs a bare in-flight argmin floor",
  run: () => {
    policyTable(import.meta.url, "measurePeer", [...names])
  }
}
