/**
 * Whether a load row is corrupt, for every policy that reads rows: shared by the own policies' ledger
 * and the vLLM balancer's unknown-row rule.
 *
 * @internal
 */
import type { RankLoad } from "../Policy.js"

const isCount = (x: unknown): boolean => typeof x === "number" && Number.isFinite(x) && x >= 0

/**
 * True when a row carries a count that is present but not a finite non-negative number (a negative,
 * NaN or infinite count, a string): a corrupt row, none of whose fields is taken at its word.
 *
 * @internal
 */
export const malformedRow = (row: RankLoad): boolean =>
  (row.numRunningReqs !== undefined && !isCount(row.numRunningReqs)) ||
  (row.numWaitingReqs !== undefined && !isCount(row.numWaitingReqs)) ||
  (row.numTotalTokens !== undefined && !isCount(row.numTotalTokens)) ||
  (row.numWaitingUncachedTokens !== undefined && !isCount(row.numWaitingUncachedTokens))
