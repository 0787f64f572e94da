/**
 * SMG `least_load`. Upstream: lightseekorg/smg `model_gateway/src/policies/least_load.rs`,
 * commit 73da68ca9472bbc0ff5f63d31a8a21fbb8696359.
 *
 * @since 0.2.0
 */
import {
  effectiveTokenUsage,
  healthyIndices,
  selected,
  totalGenThroughput,
  totalWaitingUncached
} from "./internal/common.js"
import type { SmgLoadReport, SmgPoll, SmgSelected, SmgWorker } from "./Types.js"

/**
 * Tunables of SMG `least_load` (`with_params`): `kvPressureWeight` λ in seconds (default 0.15; not
 * finite or < 0 -> 0.15), `meanPrefillTokens` p̄ (default 1024; raised to at least 1),
 * `defaultThroughput` tokens/s (default 2000; not finite or <= 0 -> 2000).
 *
 * @category smg
 * @since 0.2.0
 */
export interface SmgLeastLoadConfig {
  readonly kvPressureWeight?: number | undefined
  readonly meanPrefillTokens?: number | undefined
  readonly defaultThroughput?: number | undefined
}

/**
 * State of SMG `least_load`: cached reports by url and `inflight` tokens credited to each url since
 * its last poll.
 *
 * @category smg
 * @since 0.2.0
 */
export interface SmgLeastLoadState {
  readonly cached: ReadonlyMap<string, SmgLoadReport>
  readonly inflight: ReadonlyMap<string, number>
}

/**
 * Deliver a poll to `least_load` (`update_loads`): each polled url's report replaces the cached one
 * and its in-flight credit resets to 0 (the fresh poll already counts those tokens); `null`
 * removes both the report and the credit (`remove_worker`).
 *
 * **When to use**: after each `WorkerMonitor` poll.
 *
 * @example
 * ```ts
 * import { Smg } from "@loadledger/policies"
 * const s0 = { cached: new Map(), inflight: new Map([["a", 2048]]) }
 * Smg.smgLeastLoadUpdate(s0, new Map([["a", { dpRankCount: 1, loads: [] }]])).inflight.get("a") // => 0
 * ```
 *
 * @category smg
 * @since 0.2.0
 */
export const smgLeastLoadUpdate = (state: SmgLeastLoadState, poll: SmgPoll): SmgLeastLoadState => {
  const cached = new Map(state.cached)
  const inflight = new Map(state.inflight)
  for (const [url, r] of poll) {
    if (r === null) {
      cached.delete(url)
      inflight.delete(url)
    } else {
      cached.set(url, r)
      inflight.set(url, 0)
    }
  }
  return { cached, inflight }
}

const sane = (c: SmgLeastLoadConfig) => {
  const l = c.kvPressureWeight
  const t = c.defaultThroughput
  return {
    lambda: l === undefined || !Number.isFinite(l) || l < 0 ? 0.15 : l,
    pbar: Math.max(c.meanPrefillTokens ?? 1024, 1),
    tpDefault: t === undefined || !Number.isFinite(t) || t <= 0 ? 2000 : t
  }
}

/**
 * SMG `least_load` `select_worker`: expected seconds of queued prefill plus a KV-pressure term.
 * For a worker with a cached report: `(Σ waiting_uncached_tokens + inflight) / throughput +
 * λ·k/(1-k)` with `k` = mean `token_usage` clamped to `[0, 0.999]` and `throughput` = Σ
 * `gen_throughput` (default when not > 0). Without a report: `load · p̄ / nominal` when some healthy
 * worker has a report (nominal = mean positive throughput over them), else `load`. First minimum
 * wins; the pick is credited `inputTokens` (p̄ when absent) and `processed_requests` bumps. One
 * healthy worker: returned with no credit. `details.scores` (by index), `details.inflightAfter`.
 *
 * **When to use**: replaying SMG's least-load; the registry's `smg/least-load` wraps it.
 *
 * @example
 * ```ts
 * import { Smg } from "@loadledger/policies"
 * const w = (url: string, load: number) => ({ url, healthy: true, load, processedRequests: 0, circuitBreakerCanExecute: true })
 * const out = Smg.smgLeastLoadSelect({ cached: new Map(), inflight: new Map() }, [w("a", 5), w("b", 0)], undefined)
 * out.index // => 1
 * out.state.inflight.get("b") // => 1024
 * ```
 *
 * @category smg
 * @since 0.2.0
 */
export const smgLeastLoadSelect = (
  state: SmgLeastLoadState,
  workers: ReadonlyArray<SmgWorker>,
  inputTokens: number | undefined,
  config: SmgLeastLoadConfig = {}
): SmgSelected<SmgLeastLoadState> => {
  const h = healthyIndices(workers)
  if (h.length === 0) return selected(undefined, state, false, {})
  if (h.length === 1) return selected(h[0], state, false, { single: true })
  const { lambda, pbar, tpDefault } = sane(config)
  let tpSum = 0
  let tpCount = 0
  let fleetHasLoads = false
  for (const i of h) {
    const r = state.cached.get(workers[i]!.url)
    if (r === undefined) continue
    fleetHasLoads = true
    const tp = totalGenThroughput(r)
    if (tp > 0) {
      tpSum += tp
      tpCount += 1
    }
  }
  const nominal = tpCount > 0 ? tpSum / tpCount : tpDefault
  const scores: Array<number> = []
  let best = -1
  let bestScore = Number.POSITIVE_INFINITY
  for (const i of h) {
    const w = workers[i]!
    const r = state.cached.get(w.url)
    let score: number
    if (r !== undefined) {
      const q = totalWaitingUncached(r)
      const tpRaw = totalGenThroughput(r)
      const tp = tpRaw > 0 ? tpRaw : tpDefault
      const k = Math.min(Math.max(effectiveTokenUsage(r), 0), 0.999)
      score = (q + (state.inflight.get(w.url) ?? 0)) / tp + (lambda * k) / (1 - k)
    } else score = fleetHasLoads ? (w.load * pbar) / nominal : w.load
    scores.push(score)
    if (best < 0 || score < bestScore) {
      best = i
      bestScore = score
    }
  }
  const url = workers[best]!.url
  const inflight = new Map(state.inflight)
  inflight.set(url, (inflight.get(url) ?? 0) + (inputTokens ?? pbar))
  return selected(best, { cached: state.cached, inflight }, true, {
    healthy: h,
    scores,
    nominalThroughput: nominal,
    fleetHasLoads,
    inflightAfter: inflight
  })
}
