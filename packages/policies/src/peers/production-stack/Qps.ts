/**
 * production-stack `_qps_routing`. Upstream: vllm-project/production-stack
 * `src/vllm_router/routers/routing_logic.py`, commit a6c01db05f65f556235413ba8dbcfb0c01132fff.
 *
 * @since 0.2.0
 */

/**
 * `_qps_routing(endpoints, request_stats)`: scan `urls` in order; the **first url with no entry in
 * `qps`** wins at once (an engine the router has no stats for looks idle: upstream's rule); else
 * the first minimum `qps` (strict `<` from +inf), `undefined` when every value is NaN or +inf or the
 * list is empty. `qps` is `request_stats[url].qps` (requests/s over the router's window).
 *
 * **When to use**: the fallback of `session` (no session id) and `prefixaware` (match too short).
 *
 * @example
 * ```ts
 * import { ProductionStack } from "@loadledger/policies"
 * ProductionStack.psQpsRouting(["a", "b", "c"], new Map([["a", 3], ["c", 1]])) // => "b"
 * ProductionStack.psQpsRouting(["a", "c"], new Map([["a", 3], ["c", 1]])) // => "c"
 * ```
 *
 * @category production-stack
 * @since 0.2.0
 */
export const psQpsRouting = (
  urls: ReadonlyArray<string>,
  qps: ReadonlyMap<string, number>
): string | undefined => {
  let best: string | undefined
  let low = Number.POSITIVE_INFINITY
  for (const u of urls) {
    const q = qps.get(u)
    if (q === undefined) return u
    if (q < low) {
      low = q
      best = u
    }
  }
  return best
}
