/**
 * ns per `route` (+ the matching `finish`) of the TensorRT-LLM attention-DP routers in the registry
 * (`trtllm/default`, `trtllm/kv-cache-aware`, `trtllm/conversation-affinity`) at 8 and 64 ranks
 * (attention DP 8 is the blog's deployment, 64 a large NVL72 group), next to a floor: a bare argmin
 * of (active tokens, active requests) over plain mutable arrays, charging the chosen rank in place
 * and tracking the in-flight charges in a mutable Map (what the default router at least does per
 * request).
 *
 * Each step routes request k and finishes request k - 512 (about 512 in flight). Requests carry two
 * prefix-block hashes (a shared system prompt out of 8, a per-request block) and a session out of
 * 256, so the KV-cache-aware router matches prefixes and the conversation router pins sessions.
 * Timing as in `peers.ts`: each policy in a process of its own with its floor, interleaved rounds,
 * fastest round.
 *
 * @since 0.7.0
 */
import { findPolicy, type Policy, type RouteRequest } from "@loadledger/policies"
import {
  type Benchmark,
  type Candidate,
  consume,
  iterationsFor,
  nsPerOpInterleaved,
  prng,
  randomLoads,
  routeStep
} from "./harness.js"
import { policyTable, type Row } from "./table.js"

/** The measured policies, as registered. */
const names = ["trtllm/default", "trtllm/kv-cache-aware", "trtllm/conversation-affinity"] as const

/** The rank counts of this table. */
const trtllmSizes = [8, 64] as const

const requests: ReadonlyArray<RouteRequest> = (() => {
  const rnd = prng(17)
  return Array.from({ length: 1024 }, (_, i) => ({
    requestId: `r${i}`,
    inputLength: 1 + Math.floor(rnd() * 8192),
    prefixHashes: [`${1000 + (i & 7)}`, `${i}`],
    sessionId: `s${Math.floor(rnd() * 256)}`
  }))
})()
const finishLists = Array.from({ length: 1024 }, (_, i) => [`r${i}`])

/** Argmin of (tokens, requests) over plain arrays, charge in place, in-flight Map. */
const floor = (n: number): Candidate => {
  const tokens = new Array<number>(n).fill(0)
  const reqs = new Array<number>(n).fill(0)
  const inFlight = new Map<string, number>()
  return {
    iterations: iterationsFor(4 * n + 200),
    step: (k) => {
      let best = 0
      for (let i = 1; i < n; i++)
        if (tokens[i]! < tokens[best]! || (tokens[i] === tokens[best] && reqs[i]! < reqs[best]!)) best = i
      const r = requests[k & 1023]!
      tokens[best]! += r.inputLength
      reqs[best]! += 1
      inFlight.set(r.requestId, best)
      const old = requests[(k + 512) & 1023]!
      const e = inFlight.get(old.requestId)
      if (e !== undefined) {
        inFlight.delete(old.requestId)
        tokens[e]! -= old.inputLength
        reqs[e]! -= 1
      }
      consume(best)
    }
  }
}

/**
 * Rows for one TensorRT-LLM policy (a registry name), measured in this process next to its floor.
 *
 * @since 0.7.0
 */
export const measureTrtllm = (name: string): Array<Row> => {
  const policy = findPolicy(name)!.make({ seed: 1 }) as Policy<unknown>
  return trtllmSizes.map((n): Row => {
    const loads = randomLoads(n, { kvMax: 0.8 })
    const cand: Candidate = {
      iterations: iterationsFor(60 * n + 4000),
      step: routeStep(policy, policy.observe(policy.init(n), loads, 1), requests, 1, finishLists)
    }
    const [f, ns] = nsPerOpInterleaved([floor(n), cand])
    return [n, ns!, f!]
  })
}

/**
 * The TensorRT-LLM router benchmark, registered in `bench/registry.ts`: each policy in a process
 * of its own next to its floor, in the modes of the run (tsx, `--built`, `--compare`).
 *
 * @since 0.7.0
 */
export const trtllmPolicyBench: Benchmark = {
  name: "TensorRT-LLM ADP routers: ns per route+finish vs a bare (tokens, requests) argmin floor",
  run: () => {
    policyTable(import.meta.url, "measureTrtllm", names, undefined, trtllmSizes)
  }
}
