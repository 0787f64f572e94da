/**
 * What a loadledger policy believes about one rank at a given `now`: the published load plus every
 * charge not yet provably included in it, and how old the published snapshot is.
 *
 * **When to use**: read it from `view(state, now)` on a loadledger policy to show or test what the
 * router sees (for example that a broadcast did not erase in-flight charges).
 *
 * Units: `requests` (running + waiting + charged requests), `tokens` (`numTotalTokens` + charged
 * prompt tokens), `waiting` (published waiting + charged requests), `kvCacheUsage` a 0..1 fraction
 * (absent when never reported), `ageSeconds` = `now - timestamp` of the newest row that reported
 * request counts, a partial one too (absent when the rank never published counts). `stale` is true
 * when that row is older than the policy's bound; `unknown` when the rank never published or its
 * row lacks a count (vLLM's rows carry no `numTotalTokens`). For both, the base load is not trusted:
 * each count a row did not report is the busiest any rank reported (partial rows included), and a
 * stale or never-published rank is never below the busiest fresh one (never idle).
 *
 * @example
 * ```ts
 * import { makeLedgerBalanced } from "@loadledger/policies"
 * const p = makeLedgerBalanced({})
 * const v = p.view(p.init(2), 0)
 * v[0]?.unknown // => true
 * v[0]?.requests // => 0
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface RankView {
  readonly requests: number
  readonly tokens: number
  readonly waiting: number
  readonly kvCacheUsage: number | undefined
  readonly ageSeconds: number | undefined
  readonly stale: boolean
  readonly unknown: boolean
}
