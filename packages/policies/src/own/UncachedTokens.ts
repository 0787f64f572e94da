/**
 * The `uncached-tokens` policy: cost a request by the tokens each rank would still have to prefill
 * (ledger waiting-uncached tokens plus a bounded router-side index of the prefixes each rank was
 * sent). A configuration of `makeScored` (the terms `loadTokens` and `uncachedPromptTokens`).
 *
 * @since 0.2.0
 */
import { makeScored, type ScoredPolicy, type ScoredState } from "./Scored.js"
import { loadTokens, uncachedPromptTokens } from "./Scorers.js"

/**
 * Options of {@link makeUncachedTokens}. Every field is optional.
 *
 * - `clientCount` / `clientIndex`: front ends sharing the ranks; each charges a routed request
 *   `clientCount` times (it assumes the others route alike until the next snapshot) and starts its
 *   tie scan at `floor(dpSize * clientIndex / clientCount)`.
 * - `maxIndexedBlocks` (65 536): bound of the router-side prefix index (least recently sent go first).
 * - `staleAfterSeconds` (1) / `inclusionMarginSeconds` (0): as in `ledger-balanced`.
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
 * The state of an `uncached-tokens` policy: `makeScored`'s (the in-flight ledger, the rotating tie
 * cursor, the prefix index and this front end's requests in flight). Opaque and immutable.
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
 * Build loadledger's uncached-token policy (`uncached-tokens`).
 *
 * **What it optimises**: the prefill work the group must still do after admission. A request
 * costs each rank the prompt tokens that rank would have to prefill: `inputLength` minus the
 * leading blocks the router already sent it (`prefixHashes`, one block = `inputLength /
 * prefixHashes.length` tokens), read from a bounded router-side index. Each rank's load is its
 * `numTotalTokens` plus its `numWaitingUncachedTokens` when reported, plus the prompt tokens
 * charged to it and not yet in a snapshot, and never less than `clientCount` times the prompt
 * tokens this front end has in flight there (routed, not finished: the in-flight floor vLLM's
 * balancer keeps with request counts, so a snapshot that lags cannot hide them). It picks the rank with the lowest load + cost, so a
 * shared prefix attracts exactly as far as the prefill it saves outweighs the load gap: no
 * herding (an idle rank wins as soon as a holder is busier by more than the cached part).
 *
 * **When to use**: prefix-heavy traffic (multi-turn chat, agents, RL rollouts sharing prompts)
 * on DP attention, where total-tokens ignores the cache and cache-aware routers herd.
 *
 * **Unknown, absent, stale, unhealthy**: as `ledger-balanced` (an unknown or stale rank is never
 * less busy than the busiest known one; unhealthy ranks are never chosen); a rank whose
 * `numWaitingUncachedTokens` is absent while another rank reports it takes the highest reported
 * value. KV feasibility: while some rank's known free KV holds the prompt, no other rank is chosen.
 * Ties break from a rotating cursor. The prefix index covers 31 ranks; above that the cost is the
 * whole prompt for every rank (plain token balancing).
 *
 * **As terms**: `makeScored` with `loadTokens` and `uncachedPromptTokens`, both raw (`"none"`)
 * and weight 1 (`ownPolicyConfigs["uncached-tokens"]`); the explanation is `makeScored`'s.
 *
 * Errors: `InvalidInput` naming `clientCount` / `clientIndex` when `checkClientOptions` refuses
 * them (every route, first), `NoRanks`, `InvalidInput` (`inputLength`), `InvalidRoutedRank`,
 * `AllRanksUnavailable`.
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
