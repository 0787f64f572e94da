/**
 * The `uncached-tokens` policy: a configuration of `makeScored` (the terms `loadTokens` and
 * `uncachedPromptTokens`).
 *
 * @since 0.2.0
 */
import { makeScored, type ScoredPolicy, type ScoredState } from "./Scored.js"
import { loadTokens, uncachedPromptTokens } from "./Scorers.js"

/**
 * Options of {@link makeUncachedTokens}, all optional: `clientCount` / `clientIndex` (front ends:
 * each charges a route `clientCount` times), `maxIndexedBlocks` (65 536, the prefix index's bound),
 * `staleAfterSeconds` (1) / `inclusionMarginSeconds` (0) as in `ledger-balanced`.
 *
 * @category own policies
 * @since 0.3.0
 */
export interface UncachedTokensOptions {
  readonly clientCount?: number | undefined
  readonly clientIndex?: number | undefined
  readonly maxIndexedBlocks?: number | undefined
  readonly staleAfterSeconds?: number | undefined
  readonly inclusionMarginSeconds?: number | undefined
}

/**
 * The state of an `uncached-tokens` policy: `makeScored`'s. Opaque and immutable.
 *
 * @category own policies
 * @since 0.3.0
 */
export type UncachedTokensState = ScoredState

/**
 * An `uncached-tokens` policy plus `view`, the per-rank belief it routes on at `now`.
 *
 * @category own policies
 * @since 0.3.0
 */
export type UncachedTokensPolicy = ScoredPolicy

/**
 * Build loadledger's uncached-token policy (`uncached-tokens`): the least tokens held plus prompt
 * tokens still to prefill.
 *
 * **What it optimises**: the prefill work left after admission. A rank's cost is its load
 * (`numTotalTokens` + `numWaitingUncachedTokens` + charged prompt tokens, at least `clientCount` x
 * the prompt tokens this front end has in flight there) plus `inputLength` minus the leading blocks
 * the router already sent it (`prefixHashes`, a bounded router-side index of 31 ranks at most). A
 * shared prefix attracts only as far as the prefill it saves outweighs the load gap: no herding.
 *
 * **As terms**: `makeScored` with `loadTokens` and `uncachedPromptTokens`, both raw (`"none"`)
 * and weight 1 (`ownPolicyConfigs["uncached-tokens"]`); explanation, errors and the unknown,
 * stale and unhealthy rules are `makeScored`'s. **When to use**: prefix-heavy traffic (multi-turn
 * chat, agents, RL rollouts) on DP attention, where total-tokens ignores the cache.
 *
 * @example
 * ```ts
 * import { makeUncachedTokens } from "@loadledger/policies"
 * const p = makeUncachedTokens()
 * const rows = [0, 1].map((dpRank) => ({ dpRank, timestamp: 1, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0 }))
 * const a = p.route(p.observe(p.init(2), rows, 1), { requestId: "a", inputLength: 1000, prefixHashes: ["x", "y"] }, 1)
 * a._tag === "Routed" && a.rank // => 0
 * // a snapshot shows a's 1000 tokens on rank 0; b shares block "x": rank 0 costs 1000 + 500
 * // uncached, rank 1 costs 0 + 1000, so the cached half does not outweigh the load gap
 * const s = a._tag === "Routed" ? p.observe(a.state, [{ ...rows[0]!, timestamp: 2, numTotalTokens: 1000 }, { ...rows[1]!, timestamp: 2 }], 2) : a
 * const b = "ledger" in s ? p.route(s, { requestId: "b", inputLength: 1000, prefixHashes: ["x", "z"] }, 2) : s
 * b._tag === "Routed" && b.rank // => 1
 * ```
 *
 * @category own policies
 * @since 0.3.0
 */
export const makeUncachedTokens = (options: UncachedTokensOptions = {}): UncachedTokensPolicy =>
  makeScored({
    name: "uncached-tokens",
    scorers: [
      { scorer: loadTokens, weight: 1, normalise: "none" },
      { scorer: uncachedPromptTokens, weight: 1, normalise: "none" }
    ],
    clientCount: options.clientCount,
    clientIndex: options.clientIndex,
    maxIndexedBlocks: options.maxIndexedBlocks,
    staleAfterSeconds: options.staleAfterSeconds,
    inclusionMarginSeconds: options.inclusionMarginSeconds
  })
