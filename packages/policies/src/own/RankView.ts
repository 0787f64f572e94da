/**
 * `RankView`: what an own policy believes about one rank (`view(state, now)`).
 *
 * @since 0.1.0
 */

/**
 * One rank as an own policy sees it at `now`: reported load plus the charges no snapshot includes
 * yet. `requests` (running + waiting + charged), `tokens` (`numTotalTokens` + charged prompt
 * tokens), `waiting` (+ charged requests), `kvCacheUsage` 0..1 (absent: never reported),
 * `ageSeconds` since its newest row with request counts; `stale` / `unknown`: its counts are not
 * trusted (each missing count is the busiest reported, never below the busiest fresh rank).
 *
 * **When to use**: to show or test what the router sees.
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
