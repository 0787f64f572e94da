/**
 * What a rank's row says by its fields alone, for `rankStatus`: which fields it lacks, whether it
 * carries a load count at all, and whether a count it carries is corrupt.
 */
import type { RankLoad } from "@loadledger/schema"
import type { LoadField } from "../Types.js"

/**
 * The load counts: a row that carries none of them gives a policy nothing to compare ranks by, so
 * by default its rank is `unknown(missing-field)`; a row with at least one is known (partial when
 * it lacks others, see `RankStatus`).
 */
export const loadCounts: ReadonlyArray<LoadField> = ["numRunningReqs", "numWaitingReqs", "numTotalTokens"]

/**
 * The count fields the policies read that must be finite and non-negative when present (the
 * policies' `malformedRow`): a row carrying one that is not (negative, NaN, infinite, not a number)
 * is corrupt, and none of its fields is taken at its word.
 */
const countFields = [
  "numRunningReqs",
  "numWaitingReqs",
  "numTotalTokens",
  "numWaitingUncachedTokens"
] as const

/** The fields of `fields` that `row` does not carry, `undefined` when it carries them all. */
export const absent = (row: RankLoad, fields: ReadonlyArray<LoadField>): Array<LoadField> | undefined => {
  let out: Array<LoadField> | undefined
  for (const f of fields) {
    if (row[f] !== undefined) continue
    if (out === undefined) out = []
    out.push(f)
  }
  return out
}

/**
 * The contract reason for a row carrying a count that is present but not a finite non-negative
 * number (the decoders mark such rows `unknown` themselves; this catches rows handed to `applyPoll`
 * by other code), `undefined` when every count present is usable.
 */
export const corruptCount = (row: RankLoad): RankLoad["unknown"] => {
  for (const f of countFields) {
    const x: unknown = row[f]
    if (x === undefined || (typeof x === "number" && Number.isFinite(x) && x >= 0)) continue
    return typeof x === "number" && x < 0
      ? { reason: "negative-count", message: `${f} is ${x}` }
      : { reason: "invalid-number", message: `${f} is ${String(x)}: not a finite non-negative number` }
  }
  return undefined
}
