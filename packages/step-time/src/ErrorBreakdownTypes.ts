/**
 * The error cells and breakdowns {@link errorBreakdown} reports: a leaf module below
 * `ErrorBreakdown.ts` and its internals (`ErrorBreakdown.ts` re-exports both types).
 *
 * @since 0.7.0
 */

/**
 * Error of a set of rows: MAPE (percent), median absolute percentage error, mean signed error
 * (percent, positive = the model predicts too slow) and the row count.
 *
 * @category calibration
 * @since 0.2.0
 */
export interface ErrorCell {
  readonly rows: number
  readonly mape: number
  readonly medianApe: number
  readonly bias: number
}

/**
 * Errors keyed by `model`, `model/phase` and `model/phase/batch` (batch: the bucket
 * `lo-hi` of powers of two holding the row's `batchSize`, requests per step or tokens per
 * layer), `model/gpu` and `model/gpu/phase` (`byGpu`), `model/source` and `model/source/phase`
 * (`bySource`: e.g. `llama2-70b/splitwise/decode`, a serving stack's whole steps apart from a
 * kernel profiler's layers), plus `overall`.
 *
 * @category calibration
 * @since 0.2.0
 */
export interface ErrorBreakdown {
  readonly overall: ErrorCell
  readonly byModel: Record<string, ErrorCell>
  readonly byPhase: Record<string, ErrorCell>
  readonly byBatch: Record<string, ErrorCell>
  readonly byGpu: Record<string, ErrorCell>
  readonly bySource: Record<string, ErrorCell>
}
