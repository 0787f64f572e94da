/**
 * ns per `route` (+ the matching `finish`) of vLLM's DP balancer (`vllmKvPressure`, upstream exact,
 * and with the opt-in staleness + KV guard) at 8, 64 and 1024 engines, next to the floor: a bare
 * loop over plain mutable arrays doing the same score, strict-< scan from a rotating start, local
 * bump and in-flight bookkeeping (a mutable Map for request ids).
 *
 * Each step routes request k and finishes request k - 512, so about 512 requests stay in flight;
 * every `route` builds a new immutable state (persistent hash map for the ids) and an explanation.
 * Timing: each policy in a process of its own with the floor, interleaved rounds, each candidate in
 * its own compiled loop and step, fastest round.
 *
 * @since 0.1.0
 */
import { makeVllmLb, type Policy, type RankLoad, vllmKvPressure } from "@loadledger/policies"
import {
  type BenchLoad,
  type Benchmark,
  type Candidate,
  consume,
  iterationsFor,
  nsPerOpInterleaved,
  randomLoads,
  routeStep,
  sizes
} from "./harness.js"
import { policyTable, type Row } from "./table.js"

const loadsFor = (n: number): ReadonlyArray<BenchLoad> => randomLoads(n, { tokens: false, kvMax: 1 })

const ids = Array.from({ length: 1024 }, (_, i) => `r${i}`)
const reqs = ids.map((requestId) => ({ requestId, inputLength: 16 }))
const finishLists = ids.map((id) => [id])

const floor = (loads: ReadonlyArray<BenchLoad>): Candidate => {
  const n = loads.length
  const waiting = loads.map((l) => l.numWaitingReqs)
  const running = loads.map((l) => l.numRunningReqs)
  const kv = loads.map((l) => l.kvCacheUsage)
  const inflight = loads.map(() => 0)
  const inFlight = new Map<string, number>()
  let start = 0
  return {
    iterations: iterationsFor(4 * n + 100),
    step: (k) => {
      let best = 0
      let min = Number.POSITIVE_INFINITY
      for (let i = 0; i < n; i++) {
        const idx = (start + i) % n
        const w = waiting[idx]!
        let score = Math.max(inflight[idx]!, w + running[idx]!)
        const usage = kv[idx]
        if (w !== 0 && usage !== undefined) score = score + w * 6.0 * Math.max(0, usage - 0.5)
        if (score < min) {
          min = score
          best = idx
        }
      }
      waiting[best]! += 1
      start = (start + 1) % n
      inflight[best]! += 1
      inFlight.set(ids[k & 1023]!, best)
      const old = ids[(k + 512) & 1023]!
      const e = inFlight.get(old)
      if (e !== undefined) {
        inFlight.delete(old)
        inflight[e]! -= 1
      }
      consume(best)
    }
  }
}

const routeCandidate = <S>(policy: Policy<S>, loads: ReadonlyArray<RankLoad>): Candidate => ({
  iterations: iterationsFor(8 * loads.length + 400),
  step: routeStep(policy, policy.observe(policy.init(loads.length), loads, 1), reqs, 1, finishLists)
})

const policies: Record<string, () => Policy<unknown>> = {
  "vllm-kv-pressure": () => vllmKvPressure as Policy<unknown>,
  "vllm-kv-pressure-kv-guard-stale": () =>
    makeVllmLb({ staleAfterSeconds: 1, kvSaturationGuard: true }) as Policy<unknown>
}

/**
 * Rows for one vLLM policy (a key of the table above), measured in this process next to the floor.
 *
 * @since 0.1.0
 */
export const measureVllm = (name: string): Array<Row> => {
  const policy = policies[name]!()
  return sizes.map((n): Row => {
    const loads = loadsFor(n)
    const [f, ns] = nsPerOpInterleaved([floor(loads), routeCandidate(policy, loads)])
    return [n, ns!, f!]
  })
}

const _cell = (x: string, w: number) => x.padStart(w)

/**
 * The vLLM balancer benchmark, registered in `bench/registry.ts`; each policy runs in a process of
 * its own next to its floor.
 *
 * @since 0.1.0
 */
export const vllmPolicyBench: Benchmark = {
  name: "vLLM DP balancer: ns per route+finish vs a bare scan floor",
  run: () => {
    const names = Object.keys(policies)
    policyTable(import.meta.url, "measureVllm", names)
  }
}
