/**
 * The token imbalance the router sees across its known ranks: max over mean of `numTotalTokens`.
 *
 * @since 0.3.0
 */
import type { RankStatus } from "./Types.js"

/**
 * The token imbalance ratio the router sees: max over mean of `numTotalTokens` across the known
 * ranks that reported it (1 = balanced, N = all tokens on one of N ranks; 1 when every rank is
 * empty). Absent (`undefined`) when no known rank reported tokens. Same shape as SGLang's
 * `sglang:dp_attention_token_imbalance_ratio` histogram (buckets 1 … 64), named in
 * `fixtures/payloads/README.md`.
 *
 * @example
 * ```ts
 * import { tokenImbalanceRatio } from "@loadledger/live"
 * tokenImbalanceRatio([12000, 0, 0, 3000]) // => 3.2
 * ```
 *
 * @category metrics
 * @since 0.1.0
 */
export const tokenImbalanceRatio = (tokens: ReadonlyArray<number>): number | undefined => {
  if (tokens.length === 0) return undefined
  const max = Math.max(...tokens)
  const mean = tokens.reduce((a, b) => a + b, 0) / tokens.length
  return mean === 0 ? 1 : max / mean
}

/**
 * The token imbalance ratio over the known ranks that reported `numTotalTokens` (see
 * `tokenImbalanceRatio`); `undefined` when none did.
 *
 * @example
 * ```ts
 * import { applyPoll, makeRouter, observedImbalance, statuses } from "@loadledger/live"
 * import { totalTokens } from "@loadledger/policies"
 * import { Result } from "effect"
 * const rows = [12000, 0, 0, 3000].map((numTotalTokens, dpRank) => ({ dpRank, numTotalTokens }))
 * const r = applyPoll(makeRouter(totalTokens, [{ url: "u", dpSize: 4 }], { staleAfterSeconds: 1, requiredFields: ["numTotalTokens"], ageClock: "receipt" }), "u", Result.succeed(rows), 0)
 * observedImbalance(statuses(r, 0)) // => 3.2
 * ```
 *
 * @category getters
 * @since 0.1.0
 */
export const observedImbalance = (ranks: ReadonlyArray<RankStatus>): number | undefined => {
  const tokens: Array<number> = []
  for (const s of ranks) {
    const t = s.condition === "known" ? s.row.numTotalTokens : undefined
    if (t !== undefined) tokens.push(t)
  }
  return tokenImbalanceRatio(tokens)
}
