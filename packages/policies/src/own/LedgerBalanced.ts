/**
 * `makeLedgerBalanced`: least (tokens, requests) or (requests, tokens) over the in-flight ledger:
 * speculative charges survive snapshot overwrites until a snapshot covers them, ties rotate. A
 * configuration of `makeScored` (the terms `tokens` / `requests` and the KV-pressure gate).
 *
 * @since 0.1.0
 */
import { makeScored, type ScoredPolicy, type ScoredState } from "./Scored.js"
import { kvPressureGate, requests, tokens } from "./Scorers.js"

/**
 * Options of {@link makeLedgerBalanced}. Every field is optional.
 *
 * - `metric`: `"tokens"` (default) compares `(tokens, requests)` lexicographically, like SGLang's
 *   TOTAL_TOKENS; `"requests"` compares `(requests, tokens)`.
 * - `clientCount` / `clientIndex`: router replicas (vLLM API servers) sharing the engines. Ties are
 *   broken by index starting at `floor(dpSize * clientIndex / clientCount)` plus a cursor that
 *   advances by one on every scored route (as vLLM's rotating `eng_start_index`), so replicas do not
 *   all pile onto rank 0 and repeated tied snapshots do not keep favouring the same ranks.
 * - `chargeScale`: how many requests one routed request is charged as (default `clientCount`, 1 when
 *   absent): each replica assumes the others route alike between snapshots.
 * - `staleAfterSeconds` (default 1): a snapshot older than this (`now - timestamp >`) is stale.
 * - `inclusionMarginSeconds` (default 0): a snapshot stamped `T` includes the requests routed before
 *   `T - margin` (raise it for clock skew between router and engines).
 * - `kvFull` (0.99) / `kvRoom` (0.9): KV-pressure guard thresholds.
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
 * The state of a `ledger-balanced` policy: `makeScored`'s (the in-flight ledger and the rotating
 * tie cursor). Treat it as opaque and immutable.
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
 * Build loadledger's in-flight-charging ledger policy (`ledger-balanced`).
 *
 * **Fault class it fixes**: a stale load view during a burst. Every routed request is charged to its
 * rank (requests and prompt tokens) and the charge stays until a snapshot stamped after the routing
 * time arrives (or the request finishes), so a coordinator broadcast that overwrites the view cannot
 * erase in-flight work (vLLM #48027 / #21617, S02; vLLM #41626, S03; SGLang #21699, S05), and an
 * older snapshot never overwrites a newer one (SGLang's DPBudget applies an older timestamp, see
 * `fixtures/reference/sglang/README.md`, `update_budget`). Snapshot age is tracked: a rank whose
 * snapshot is older than `staleAfterSeconds` (a frozen publisher, vLLM #48808, S04) or that never
 * published is flagged in `explanation.stale` / `details.unknown` and treated as at least as busy as
 * the busiest fresh rank, never as idle. KV-pressure guard (vLLM #36748, S07): a rank with
 * `kvCacheUsage >= kvFull` and waiting work is never chosen while a healthy rank has
 * `kvCacheUsage < kvRoom`. KV feasibility: while some healthy rank's free KV (`kvAvailableTokens` +
 * `kvEvictableTokens`, else capacity minus `numUsedTokens`, minus tokens charged since) holds the
 * prompt, a rank whose free KV does not (or is unknown) is never chosen (`details.kvInfeasible`).
 *
 * **Unknown, absent, stale, unhealthy** (the ledger contract's rows). Needs `numRunningReqs`,
 * `numWaitingReqs` and `numTotalTokens`. A row that is `unknown` or lacks one of them makes the rank
 * unknown (`details.unknown`): its base keeps each count it did report and takes, for each one it did
 * not, the busiest known value (the maximum over ranks with a known row, stale ones included), and
 * when its row is stale at least the busiest fresh base, so it is never less busy than a known rank
 * in its place; with no known rank at all, unreported counts are 0 for every rank alike. A rank that
 * did not report `kvCacheUsage` is guarded as if at the highest reported usage. A row without
 * `timestamp` is observed at `now`. Stale: at least the busiest fresh base. Unhealthy: never chosen
 * (`AllRanksUnavailable` when none is healthy).
 *
 * **As terms**: `makeScored` with `tokens` (weight 1; `requests` with `metric: "requests"`), the
 * `kvPressureGate` (weight 0) and the other count as tie-breaker (`ownPolicyConfigs["ledger-balanced"]`).
 * Its explanation is `makeScored`'s (`details.costs`, `unknown`, `excluded` by the gate,
 * `kvInfeasible`).
 *
 * **When to use**: in place of SGLang TOTAL_TOKENS / TOTAL_REQUESTS or vLLM's DP balancer, when
 * snapshots arrive late or are overwritten mid-burst. Upstream for comparison: SGLang
 * `python/sglang/srt/managers/data_parallel_controller.py` (DPBudget, reference README), vLLM
 * `vllm/v1/engine/core_client.py` @ 00080ee1 (`DPLBAsyncMPClient`).
 *
 * Errors: `InvalidInput` naming `clientCount` / `clientIndex` when `checkClientOptions` refuses
 * them (every route, first), `NoRanks` (dpSize 0), `InvalidInput` (`inputLength`), `InvalidRoutedRank`,
 * `AllRanksUnavailable`. A pinned request (`routedDpRank`) is charged but not scored.
 *
 * **Gotchas**: snapshot `timestamp`s and `now` must be on the same clock (seconds); with skew,
 * raise `inclusionMarginSeconds`. Without `finish` calls, a charge lives until a snapshot stamped
 * after its routing time arrives, so a publisher that never advances its timestamp keeps every
 * charge (conservative: the rank only looks busier).
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
