/**
 * AIBrix gateway strategies as loadledger `Policy` values over DP ranks.
 *
 * @since 0.2.0
 */
import type { Explanation, Policy } from "../../Policy.js"
import { policyError } from "../../Policy.js"
import { type PeerLedger, type PeerState, peerPolicy } from "../internal/PeerLedger.js"
import { shuffle } from "./internal/shuffle.js"
import { type AibrixMixItem, aibrixScorer, parseAibrixMix, routeAibrixMix } from "./Multi.js"
import type { AibrixPod } from "./Pods.js"
import { powerOfTwo } from "./PowerOfTwo.js"
import {
  type AibrixPrefixIndex,
  aibrixAddPrefix,
  aibrixPrefixIndex,
  routePrefixCache
} from "./PrefixCache.js"
import { type AibrixStrategy, routeStrategy } from "./Strategies.js"

/** The pods AIBrix sees for the healthy ranks, in rank order, with the metrics a RankLoad carries. */
const podsOf = (l: PeerLedger): Array<AibrixPod> => {
  const pods: Array<AibrixPod> = []
  for (let i = 0; i < l.dpSize; i++) {
    if (l.status[i] !== true) continue
    const row = l.loads[i]
    const ok = row !== undefined && row.unknown === undefined
    pods.push({
      id: String(i),
      metrics: {
        realtime_num_requests_running: l.requests[i]!,
        kv_cache_usage_perc: ok ? row.kvCacheUsage : undefined,
        gpu_cache_usage_perc: ok ? row.kvCacheUsage : undefined,
        engine_utilization: ok ? row.utilization : undefined
      }
    })
  }
  return pods
}

/**
 * Options of an AIBrix policy: the routing strategy (`least-request`, `throughput`,
 * `least-kv-cache`, `least-gpu-cache`, `least-busy-time`, `least-latency`, `random`, `prefix-cache`,
 * or a weighted mix `"a:2,b:1"`), the prefix-cache knobs, the seed.
 *
 * @category aibrix
 * @since 0.2.0
 */
export interface AibrixPolicyOptions {
  readonly name?: string | undefined
  readonly strategy: string
  readonly podRunningRequestImbalanceAbsCount?: number | undefined
  readonly standardDeviationFactor?: number | undefined
  readonly seed?: number | undefined
}

/**
 * An AIBrix routing strategy (or weighted mix) as a `Policy` over DP ranks (rank i is pod `"i"`).
 *
 * - **Loads**: `realtime_num_requests_running` is the gateway's own count: requests routed to the rank
 *   and not finished (charged on route, released on finish, as `AddRequestCount` /
 *   `DoneRequestCount`). `kvCacheUsage` gives `kv_cache_usage_perc` and `gpu_cache_usage_perc`;
 *   `utilization` gives `engine_utilization` (least-utilization; upstream only xLLM reports it). No
 *   `RankLoad` field carries `cpu_cache_usage_perc`, `gpu_busy_time_ratio`, the per-request token
 *   averages or the latency histograms, so `least-kv-cache`, `least-busy-time`, `throughput` and
 *   `least-latency` find every pod unscored and take upstream's random fallback unless a caller
 *   feeds the cores those metrics.
 * - **Unknown / absent**: a missing metric leaves the pod unscored, and an unscored pod is never
 *   chosen while some pod is scored (upstream), so an unknown rank is never attractive. An `unknown`
 *   row contributes no metric.
 * - **Unhealthy** ranks are not in the ready list. `routedDpRank` is ignored (no DP pin in AIBrix).
 * - **Order and randomness**: the ready list is shuffled (Go `rand.Shuffle`) then the strategy's own
 *   `rand.Intn` draws are taken, all from a seeded generator in the state.
 * - **power-of-two**: its counters are the router's own in-flight counts (upstream keeps them in
 *   Redis under keys that rotate every hour; the rotation, which forgets requests started in the
 *   previous window, is not modelled).
 * - **Prefix**: the trace's block hashes (`RouteRequest.prefixHashes`) are the indexer's block
 *   hashes (upstream hashes 4-byte blocks of the prompt; a trace carries blocks, not text).
 *
 * **When to use**: comparing AIBrix's gateway strategies with other policies in the simulator, the
 * laws, the bench; `routeStrategy`, `routePrefixCache` and `routeAibrixMix` are the exact cores.
 *
 * Upstream: vllm-project/aibrix `pkg/plugins/gateway/algorithms/*.go` at
 * e3e10f9e4aebe9aac5e7d992fb87d2648e01628b.
 *
 * @example
 * ```ts
 * import { Aibrix } from "@loadledger/policies"
 * const p = Aibrix.makeAibrixPolicy({ strategy: "least-request" })
 * let s = p.init(3)
 * const picks: Array<number> = []
 * for (const id of ["a", "b", "c"]) {
 *   const r = p.route(s, { requestId: id, inputLength: 10 }, 0)
 *   if (r._tag === "Routed") { s = r.state; picks.push(r.rank) }
 * }
 * [...picks].sort() // => [0, 1, 2]
 * ```
 *
 * @category aibrix
 * @since 0.2.0
 */
export const makeAibrixPolicy = (o: AibrixPolicyOptions): Policy<PeerState<AibrixPrefixIndex>> => {
  const parsed = parseAibrixMix(o.strategy)
  const items: ReadonlyArray<AibrixMixItem> = Array.isArray(parsed) ? parsed : [{ name: "random", weight: 1 }]
  const single = items.length === 1 ? items[0]!.name : undefined
  const usesPrefix = items.some((i) => i.name === "prefix-cache")
  return peerPolicy<AibrixPrefixIndex>({
    name: o.name ?? `aibrix/${o.strategy}`,
    seed: o.seed ?? 0,
    initExtra: () => aibrixPrefixIndex(),
    decide: (l, index, request, _now, draw) => {
      const pods = shuffle(podsOf(l), draw)
      if (pods.length === 0) return policyError("AllRanksUnavailable", "no ready pod", "status")
      const hashes = request.prefixHashes ?? []
      const scoresByRank = (xs: ReadonlyArray<number | undefined>, sign: number): Array<number> => {
        const out = new Array<number>(l.dpSize).fill(Number.POSITIVE_INFINITY)
        xs.forEach((x, j) => {
          if (x !== undefined) out[Number(pods[j]!.id)] = sign * x
        })
        return out
      }
      let pick: number
      let extra = index
      let explanation: Explanation
      if (single === "power-of-two") {
        const r = powerOfTwo(
          pods.map((p) => l.requests[Number(p.id)]!),
          draw
        )!
        pick = r.index
        explanation = {
          scores: scoresByRank(
            pods.map((p, j) => (j === r.pair[0] || j === r.pair[1] ? l.requests[Number(p.id)]! : undefined)),
            1
          ),
          tieBreak: "first of the two random candidates on equal counts",
          details: {
            scores: "in-flight requests of the two sampled ranks (lower wins); Infinity = not sampled"
          }
        }
      } else if (single === "prefix-cache") {
        const r = routePrefixCache(
          pods,
          hashes,
          index,
          {
            podRunningRequestImbalanceAbsCount: o.podRunningRequestImbalanceAbsCount,
            standardDeviationFactor: o.standardDeviationFactor
          },
          draw
        )!
        pick = r.index
        extra = r.prefixIndex
        explanation = {
          scores: scoresByRank(
            pods.map((p) => -(r.matchedPods.get(p.id) ?? 0)),
            1
          ),
          tieBreak: r.selection,
          details: {
            scores: "minus the prefix match percentage (higher match wins)",
            loadImbalanced: r.loadImbalanced,
            selection: r.selection
          }
        }
      } else if (single !== undefined) {
        const r = routeStrategy(single as AibrixStrategy, pods, draw)
        if (r._tag === "AibrixNoPods") return policyError("AllRanksUnavailable", r.message, "status")
        pick = r.index
        explanation = {
          scores: scoresByRank(r.scores, 1),
          tieBreak: r.fallback === "random" ? "random fallback (no pod scored)" : single,
          details: { scores: `${single} score (lower wins); Infinity = unscored`, fallback: r.fallback }
        }
      } else {
        if (pods.length === 1) pick = 0
        const scored = items.map((it) => ({
          ...it,
          scorer: aibrixScorer(it.name, pods, hashes, index) ?? {
            polarity: "least" as const,
            scores: pods.map(() => undefined)
          }
        }))
        const r = routeAibrixMix(pods.length, scored)
        pick = pods.length === 1 ? 0 : r.index
        if (usesPrefix && hashes.length > 0) extra = aibrixAddPrefix(index, hashes, pods[pick]!.id)
        explanation = {
          scores: scoresByRank(r.scores, -1),
          tieBreak: "first pod at the maximum (within 1e-9)",
          details: {
            scores: "minus the weighted normalised total (higher wins)",
            normalized: Object.fromEntries(r.normalized.map((n) => [n.name, n.scores]))
          }
        }
      }
      const rank = Number(pods[pick]!.id)
      return { rank, extra, tokens: 0, explanation }
    }
  })
}

/**
 * The AIBrix strategies registered by name (`aibrix/<strategy>`), and the mix registered as
 * `aibrix/multi` (`prefix-cache:2,least-request:1`).
 *
 * @example
 * ```ts
 * import { Aibrix } from "@loadledger/policies"
 * Aibrix.aibrixStrategies.includes("least-request") // => true
 * ```
 *
 * @category aibrix
 * @since 0.2.0
 */
export const aibrixStrategies: ReadonlyArray<string> = [
  "least-request",
  "throughput",
  "least-kv-cache",
  "least-gpu-cache",
  "least-busy-time",
  "least-latency",
  "random",
  "prefix-cache",
  "power-of-two",
  "least-utilization"
]
