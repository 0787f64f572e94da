/**
 * Summaries over a decoded ledger: totals that refuse partial payloads, and per-field spread.
 *
 * @since 0.1.0
 */
import type { RankLoad } from "./RankLoad.js"

/**
 * The total of one numeric field over the ledger, or `undefined` (unknown) when the ledger is
 * empty, any rank is `unknown`, or any rank lacks the field: only complete payloads are summed
 * (S08), so a partial sum is never passed off as the total.
 *
 * @example
 * ```ts
 * import { ledgerTotal } from "@loadledger/schema"
 * ledgerTotal([{ dpRank: 0, numTotalTokens: 12000 }, { dpRank: 1, numTotalTokens: 3000 }], "numTotalTokens") // => 15000
 * ledgerTotal([], "numTotalTokens") // => undefined
 * ```
 *
 * **When to use**: node-level totals (non-DP views of a DP worker); it refuses partial payloads.
 *
 * @category Ledger
 * @since 0.1.0
 */
export const ledgerTotal = (rows: ReadonlyArray<RankLoad>, field: LedgerNumericField): number | undefined => {
  if (rows.length === 0) return undefined
  let sum = 0
  for (const r of rows) {
    const v = r[field]
    if (r.unknown !== undefined || v === undefined) return undefined
    sum += v
  }
  return sum
}

/**
 * Numeric fields of `RankLoad` (`workerDpRank` included: it is a number).
 *
 * **When to use**: naming a field for `ledgerTotal` / `summarizeField`.
 *
 * @category Ledger
 * @since 0.1.0
 */
export type LedgerNumericField = Exclude<keyof RankLoad, "dpRank" | "unknown" | "worker">

/**
 * A field summarised over the ranks that reported it: `mean` is over `ranksReporting` only, and
 * `description` says so (e.g. `genThroughput: mean 80.86 over 7 of 8 ranks (missing: 1)`).
 *
 * **When to use**: pod- or node-level views that must keep per-rank spread visible (S11).
 *
 * @category Ledger
 * @since 0.1.0
 */
export interface FieldSummary {
  readonly field: LedgerNumericField
  readonly ranksReporting: ReadonlyArray<number>
  readonly ranksMissing: ReadonlyArray<number>
  readonly sum: number
  readonly mean: number
  readonly min: number
  readonly max: number
  /** max / min (Infinity when min is 0 and max > 0). */
  readonly maxOverMin: number
  readonly description: string
}

/**
 * Summarise one field over the ranks that reported it (S11: expose per-rank max and min, not only
 * a mean). `undefined` when no rank reported it.
 *
 * @example
 * ```ts
 * import { summarizeField } from "@loadledger/schema"
 * const s = summarizeField([{ dpRank: 0, genThroughput: 10 }, { dpRank: 1 }, { dpRank: 2, genThroughput: 40 }], "genThroughput")
 * s?.mean // => 25
 * s?.ranksMissing // => [1]
 * ```
 *
 * **When to use**: reporting a field across ranks without hiding missing ranks or imbalance.
 *
 * @category Ledger
 * @since 0.1.0
 */
export const summarizeField = (
  rows: ReadonlyArray<RankLoad>,
  field: LedgerNumericField
): FieldSummary | undefined => {
  const have = rows.filter((r) => r.unknown === undefined && r[field] !== undefined)
  if (have.length === 0) return undefined
  const vals = have.map((r) => r[field]!)
  const sum = vals.reduce((a, b) => a + b, 0)
  const min = Math.min(...vals)
  const max = Math.max(...vals)
  const mean = sum / vals.length
  const ranksMissing = rows.filter((r) => !have.includes(r)).map((r) => r.dpRank)
  return {
    field,
    ranksReporting: have.map((r) => r.dpRank),
    ranksMissing,
    sum,
    mean,
    min,
    max,
    maxOverMin: min === 0 ? (max === 0 ? 1 : Number.POSITIVE_INFINITY) : max / min,
    description: `${field}: mean ${mean.toFixed(2)} over ${have.length} of ${rows.length} ranks${
      ranksMissing.length > 0 ? ` (missing: ${ranksMissing.join(", ")})` : ""
    }, min ${min}, max ${max}`
  }
}
