/**
 * `makeLedgerBalanced`: least (tokens, requests) over the in-flight ledger, a configuration of
 * `makeScored` (the terms `tokens` / `requests` and the KV-pressure gate).
 *
 * @since 0.1.0
 */
import { makeScored, type ScoredPolicy, type ScoredState } from "./Scored.js"
import { kvPressureGate, requests, tokens } from "./Scorers.js"

/**
 * Options of {@link makeLedgerBalanced}, all optional: `metric` (`"tokens"`: compare (tokens,
 * requests), as SGLang's TOTAL_TOKENS; `"requests"`: (requests, tokens)), `clientCount` /
 * `clientIndex` (router replicas: ties scan from `floor(dpSize * clientIndex / clientCount)` plus a
 * cursor advanced per route, as vLLM's `eng_start_index`), `chargeScale` (default `clientCount`),
 * `staleAfterSeconds` (1), `inclusionMarginSeconds` (0), `kvFull` (0.99) / `kvRoom` (0.9).
 *
 * @category own policies
 * @since 0.1.0
 */
export interface LedgerBalancedOptions {
  readonly metric?: "tokens" | "requests" | undefined
  readonly clientCount?: number | undefined
  readonly clientIndex?: number | undefined
  readonly chargeScale?: number | undefined
  readonly staleAfterSeconds?: number | undefined
  readonly inclusionMarginSeconds?: number | undefined
  readonly kvFull?: number | undefined
  readonly kvRoom?: number | undefined
}

/**
 * The state of a `ledger-balanced` policy: `makeScored`'s. Opaque and immutable.
 *
 * @category own policies
 * @since 0.1.0
 */
export type LedgerBalancedState = ScoredState

/**
 * A `ledger-balanced` policy plus `view`, the per-rank belief it routes on at `now`.
 *
 * @category own policies
 * @since 0.1.0
 */
export type LedgerBalancedPolicy = ScoredPolicy

/**
 * Build loadledger's in-flight-charging ledger policy (`ledger-balanced`): least (tokens,
 * requests), or (requests, tokens) with `metric: "requests"`.
 *
 * **Fault class it fixes**: a stale load view during a burst. Each routed request is charged to
 * its rank until a snapshot stamped after it arrives (or it finishes), so a coordinator broadcast
 * cannot erase in-flight work (vLLM #48027 / #21617, #41626; SGLang #21699); an older snapshot
 * never overwrites a newer one; a stale (vLLM #48808) or unknown rank is never less busy than the
 * busiest fresh / known one; the KV-pressure guard (vLLM #36748) and KV feasibility as `makeScored`.
 *
 * **As terms**: `makeScored` with `tokens` (1), the `kvPressureGate` (0) and the other count as
 * tie-breaker (`ownPolicyConfigs["ledger-balanced"]`); the explanation is `makeScored`'s. Errors,
 * and the rules for unknown, stale and unhealthy ranks, are `makeScored`'s (`ScoreView`).
 *
 * **When to use**: in place of SGLang TOTAL_TOKENS / TOTAL_REQUESTS or vLLM's DP balancer
 * (`vllm/v1/engine/core_client.py` @ 00080ee1) when snapshots arrive late or are overwritten.
 * **Gotchas**: snapshot `timestamp`s and `now` share one clock (raise `inclusionMarginSeconds`
 * for skew); without `finish`, a charge lives until a snapshot stamped after it.
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
 * // rank 0 now carries 150 tokens, so the next request goes to rank 1
 * const b = a._tag === "Routed" ? p.route(a.state, { requestId: "b", inputLength: 50 }, 0.002) : a
 * b._tag === "Routed" && b.rank // => 1
 * ```
 *
 * @category own policies
 * @since 0.1.0
 */
export const makeLedgerBalanced = (options: LedgerBalancedOptions = {}): LedgerBalancedPolicy => {
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
 * `ledger-balanced` with default options (tokens metric, one router replica, 1 s staleness bound).
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
export const ledgerBalanced: LedgerBalancedPolicy = makeLedgerBalanced()
