/**
 * What a usable count is, and whether a load row is corrupt, for every policy that reads rows: shared
 * by the own policies' ledger and demand and the vLLM balancer.
 *
 * @internal
 */
import type { RankLoad } from "../Policy.js"

/** A finite non-negative number (a usable count or token total). @internal */
export const isCount = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x) && x >= 0

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
