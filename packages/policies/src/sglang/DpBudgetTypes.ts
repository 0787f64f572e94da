/**
 * The shapes of SGLang's `DPBudget` (`DpBudget.ts`): the load-balance methods, the budget value and
 * a dispatch's result. A leaf module below `DpBudget.ts`, `DpBudgetPick.ts` and the controller;
 * `DpBudget.ts` re-exports them, so they stay `DpBudget.DpBudget`, `DpBudget.Dispatched`, ...
 *
 * @since 0.1.0
 */

/**
 * SGLang's `--load-balance-method` values the DataParallelController understands.
 *
 * @category models
 * @since 0.1.0
 */
export type LoadBalanceMethod = "ROUND_ROBIN" | "FOLLOW_BOOTSTRAP_ROOM" | "TOTAL_REQUESTS" | "TOTAL_TOKENS"

/**
 * The budget: per-rank `totalRequests` (running + waiting, plus speculative +1 per dispatch),
 * `totalTokens` (`numTotalTokens`, plus the estimated prompt tokens per dispatch) and the
 * `lastTimestamp` (seconds, publisher's clock) of the snapshot last applied.
 *
 * `requestsUnknown` and `tokensUnknown` are loadledger extensions (absent upstream, absent here until
 * needed; upstream always has every field): `true` for a rank whose last applied row did not carry a
 * usable request count (`unknown` row, `numRunningReqs` / `numWaitingReqs` absent or not a
 * non-negative safe integer) or token count (`numTotalTokens` absent or invalid, e.g. a `-1`
 * parse-error sentinel). Such a rank is never chosen while a rank with known counts exists (see
 * {@link argminRequests}); while any rank's tokens are unknown, `TOTAL_TOKENS` compares request
 * counts only (fault case S08). So no rank is ever chosen because its load is unknown.
 *
 * @category models
 * @since 0.1.0
 */
export interface DpBudget {
  readonly totalRequests: ReadonlyArray<number>
  readonly totalTokens: ReadonlyArray<number>
  readonly lastTimestamp: ReadonlyArray<number>
  readonly requestsUnknown?: ReadonlyArray<boolean> | undefined
  readonly tokensUnknown?: ReadonlyArray<boolean> | undefined
}

/**
 * The result of {@link dispatch}: the rank (absent for a method without a budget) and the budget.
 *
 * @category models
 * @since 0.1.0
 */
export interface Dispatched {
  readonly rank: number | undefined
  readonly budget: DpBudget
}
