/**
 * `makeLedgerBalanced` and `makeUncachedTokens`: two registered configurations of `makeScored`
 * as makers with options. Their design notes: docs/own-policies.md.
 *
 * @since 0.1.0
 */
import { makeScored, type ScoredPolicy } from "./Scored.js"
import { kvPressureGate, loadTokens, requests, tokens, uncachedPromptTokens } from "./Scorers.js"
import type { ScoredOptions } from "./ScoreView.js"

/**
 * Options of {@link makeLedgerBalanced}, all optional: `metric` (`"tokens"`: (tokens, requests);
 * `"requests"`: (requests, tokens)), `kvFull` (0.99) / `kvRoom` (0.9), the rest as `ScoredOptions`.
 *
 * @category own policies
 * @since 0.1.0
 */
export interface LedgerBalancedOptions
  extends Pick<
    ScoredOptions,
    "clientCount" | "clientIndex" | "chargeScale" | "staleAfterSeconds" | "inclusionMarginSeconds"
  > {
  readonly metric?: "tokens" | "requests" | undefined
  readonly kvFull?: number | undefined
  readonly kvRoom?: number | undefined
}

/**
 * `ledger-balanced`: least (tokens, requests) over the in-flight ledger, or (requests, tokens)
 * with `metric: "requests"`; the `tokens` term (1), the `kvPressureGate` (0), the other count as
 * tie-breaker. A routed request stays charged until a snapshot stamped after it (or its finish),
 * so a broadcast cannot erase in-flight work (vLLM #48027 / #21617, #41626; SGLang #21699).
 *
 * **When to use**: in place of SGLang TOTAL_TOKENS / TOTAL_REQUESTS or vLLM's DP balancer
 * (`vllm/v1/engine/core_client.py` @ 00080ee1) when snapshots arrive late. Errors: `makeScored`'s.
 *
 * @example
 * ```ts
 * import { makeLedgerBalanced } from "@loadledger/policies"
 * const p = makeLedgerBalanced({})
 * let s = p.observe(p.init(2), [
 *   { dpRank: 0, timestamp: 0, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 100 },
 *   { dpRank: 1, timestamp: 0, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 100 }
 * ], 0)
 * const a = p.route(s, { requestId: "a", inputLength: 50 }, 0.001)
 * a._tag === "Routed" && a.rank // => 0
 * const b = a._tag === "Routed" ? p.route(a.state, { requestId: "b", inputLength: 50 }, 0.002) : a
 * b._tag === "Routed" && b.rank // => 1
 * ```
 *
 * @category own policies
 * @since 0.1.0
 */
export const makeLedgerBalanced = (options: LedgerBalancedOptions = {}): ScoredPolicy => {
  const byTokens = options.metric !== "requests"
  return makeScored({
    name: "ledger-balanced",
    scorers: [
      { scorer: byTokens ? tokens : requests, weight: 1 },
      { scorer: kvPressureGate({ kvFull: options.kvFull, kvRoom: options.kvRoom }), weight: 0 }
    ],
    tieBreakers: [byTokens ? requests : tokens],
    clientCount: options.clientCount,
    clientIndex: options.clientIndex,
    chargeScale: options.chargeScale,
    staleAfterSeconds: options.staleAfterSeconds,
    inclusionMarginSeconds: options.inclusionMarginSeconds
  })
}

/**
 * `ledger-balanced` with default options.
 *
 * @example
 * ```ts
 * import { ledgerBalanced } from "@loadledger/policies"
 * const r = ledgerBalanced.route(ledgerBalanced.init(4), { requestId: "a", inputLength: 10 }, 0)
 * r._tag === "Routed" && r.rank // => 0
 * ```
 *
 * @category own policies
 * @since 0.1.0
 */
export const ledgerBalanced: ScoredPolicy = makeLedgerBalanced()

/**
 * Options of {@link makeUncachedTokens}, all optional, as `ScoredOptions`.
 *
 * @category own policies
 * @since 0.3.0
 */
export type UncachedTokensOptions = Pick<
  ScoredOptions,
  "clientCount" | "clientIndex" | "maxIndexedBlocks" | "staleAfterSeconds" | "inclusionMarginSeconds"
>

/**
 * `uncached-tokens`: least tokens held plus prompt tokens still to prefill, in tokens: the
 * `loadTokens` and `uncachedPromptTokens` terms, raw and weight 1. A shared prefix attracts only
 * as far as the prefill it saves outweighs the load gap (no herding).
 *
 * **When to use**: prefix-heavy traffic (multi-turn chat, agents) on DP attention, where
 * total-tokens ignores the cache. Errors: `makeScored`'s.
 *
 * @example
 * ```ts
 * import { makeUncachedTokens } from "@loadledger/policies"
 * const p = makeUncachedTokens()
 * const rows = [0, 1].map((dpRank) => ({ dpRank, timestamp: 1, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0 }))
 * const a = p.route(p.observe(p.init(2), rows, 1), { requestId: "a", inputLength: 1000, prefixHashes: ["x", "y"] }, 1)
 * a._tag === "Routed" && a.rank // => 0
 * // rank 0 costs 1000 + 500 uncached, rank 1 0 + 1000: the cached half does not outweigh the gap
 * const s = a._tag === "Routed" ? p.observe(a.state, [{ ...rows[0]!, timestamp: 2, numTotalTokens: 1000 }, { ...rows[1]!, timestamp: 2 }], 2) : a
 * const b = "ledger" in s ? p.route(s, { requestId: "b", inputLength: 1000, prefixHashes: ["x", "z"] }, 2) : s
 * b._tag === "Routed" && b.rank // => 1
 * ```
 *
 * @category own policies
 * @since 0.3.0
 */
export const makeUncachedTokens = (options: UncachedTokensOptions = {}): ScoredPolicy =>
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
