/**
 * SMG DP-rank selection (`WorkerLoadManager::select_and_increment_lowest_dp_load`). Upstream:
 * lightseekorg/smg `model_gateway/src/policies/dp_min_token.rs`, `model_gateway/src/worker/monitor.rs`,
 * `model_gateway/src/routers/http/pd_router.rs` (cost estimate), commit
 * 73da68ca9472bbc0ff5f63d31a8a21fbb8696359.
 *
 * @since 0.2.0
 */
import type { SmgPoll } from "./Types.js"

/**
 * State of SMG's DP-rank selection: `url -> (dp rank -> used tokens)` from the monitor poll,
 * incremented by each selection's estimated cost.
 *
 * @category smg
 * @since 0.2.0
 */
export interface SmgDpMinTokenState {
  readonly dpCachedLoads: ReadonlyMap<string, ReadonlyMap<number, number>>
}

/**
 * Deliver a poll: a worker whose report has absolute token data (some rank's
 * `max_total_num_tokens > 0`) gets `{dpRank: numUsedTokens}` (a later duplicate rank wins); a report
 * without it removes the worker's map; `null` (fetch failed) leaves the cache unchanged.
 *
 * **When to use**: after each monitor poll.
 *
 * @example
 * ```ts
 * import { Smg } from "@loadledger/policies"
 * const row = (dpRank: number, numUsedTokens: number) => ({ dpRank, numRunningReqs: 0, numWaitingReqs: 0,
 *   numWaitingUncachedTokens: 0, numTotalReqs: 0, numUsedTokens, maxTotalNumTokens: 1000, tokenUsage: 0,
 *   genThroughput: 0, cacheHitRate: 0, utilization: 0, maxRunningRequests: 0 })
 * const s = Smg.smgDpMinTokenUpdate({ dpCachedLoads: new Map() }, new Map([["w", { dpRankCount: 2, loads: [row(0, 5), row(1, 2)] }]]))
 * s.dpCachedLoads.get("w")?.get(1) // => 2
 * ```
 *
 * @category smg
 * @since 0.2.0
 */
export const smgDpMinTokenUpdate = (state: SmgDpMinTokenState, poll: SmgPoll): SmgDpMinTokenState => {
  const m = new Map(state.dpCachedLoads)
  for (const [url, r] of poll) {
    if (r === null) continue
    if (r.loads.some((l) => l.maxTotalNumTokens !== undefined && l.maxTotalNumTokens > 0)) {
      const ranks = new Map<number, number>()
      // a rank without num_used_tokens is left out of the choice (never taken as 0 used)
      for (const l of r.loads) if (l.numUsedTokens !== undefined) ranks.set(l.dpRank, l.numUsedTokens)
      m.set(url, ranks)
    } else m.delete(url)
  }
  return { dpCachedLoads: m }
}

/**
 * `pd_router.rs` cost estimate: `max(1, ceil(words * 1.3))` over Rust `split_whitespace` words (Unicode `White_Space`: JS `\\s` differs on U+0085 and U+FEFF)
 * when the request has text, else 1 (f64: 3 words -> ceil(3.9000000000000004) = 4).
 *
 * **When to use**: with {@link smgDpMinTokenSelect}.
 *
 * @example
 * ```ts
 * import { Smg } from "@loadledger/policies"
 * Smg.smgDpEstimatedCost("one two three") // => 4
 * Smg.smgDpEstimatedCost(undefined) // => 1
 * ```
 *
 * @category smg
 * @since 0.2.0
 */
export const smgDpEstimatedCost = (text: string | undefined): number => {
  if (text === undefined) return 1
  const words = text
    .split(/[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/u)
    .filter((w) => w !== "").length
  return Math.max(1, Math.ceil(words * 1.3))
}

/**
 * `select_and_increment_lowest_dp_load(url, cost)`: the rank minimising `(used tokens, rank)` in
 * the worker's cached map gets `+cost`; `dpRank` is `undefined` when the worker has no map (the
 * router then keeps the worker's own rank). Upstream's PD router calls it twice per request
 * (prefill and decode); this is one call.
 *
 * **When to use**: replaying SMG's DP-rank choice; `smg/dp-min-token` wraps it over one worker.
 *
 * @example
 * ```ts
 * import { Smg } from "@loadledger/policies"
 * const s = { dpCachedLoads: new Map([["w", new Map([[0, 10], [1, 3], [2, 7]])]]) }
 * const out = Smg.smgDpMinTokenSelect(s, "w", 4)
 * out.dpRank // => 1
 * out.state.dpCachedLoads.get("w")?.get(1) // => 7
 * ```
 *
 * @category smg
 * @since 0.2.0
 */
export const smgDpMinTokenSelect = (
  state: SmgDpMinTokenState,
  url: string,
  cost: number
): { readonly dpRank: number | undefined; readonly state: SmgDpMinTokenState } => {
  const m = state.dpCachedLoads.get(url)
  if (m === undefined || m.size === 0) return { dpRank: undefined, state }
  let best: number | undefined
  let bestLoad = 0
  for (const [r, l] of m)
    if (best === undefined || l < bestLoad || (l === bestLoad && r < best)) {
      best = r
      bestLoad = l
    }
  const ranks = new Map(m)
  ranks.set(best!, bestLoad + cost)
  const all = new Map(state.dpCachedLoads)
  all.set(url, ranks)
  return { dpRank: best, state: { dpCachedLoads: all } }
}
