/**
 * Where a calibration errs: {@link errorBreakdown} of a parameter set's signed errors per model,
 * phase, batch-size bucket ({@link batchBucket}), GPU and measurement stack.
 *
 * @since 0.2.0
 */
import type { CalibrationParameters, CalibrationSample } from "./Calibration.js"
import { breakdownOf, bucketOf, signed } from "./internal/breakdown.js"

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

/**
 * The power-of-two bucket of a batch size: `1`, `2-3`, `4-7`, ...
 *
 * @example
 * ```ts
 * import { batchBucket } from "@loadledger/step-time"
 * batchBucket(1) // => "1"
 * batchBucket(24) // => "16-31"
 * ```
 *
 * @category calibration
 * @since 0.2.0
 */
export const batchBucket = (b: number): string => bucketOf(b)

/**
 * Per-model, per-phase, per-batch-size and per-GPU error of `params` (one set, or one per
 * stack: a {@link FitResult}) on `samples`.
 *
 * **When to use**: `loadledger calibrate --evaluate` prints it; use it to see where a calibration
 * fails (decode vs prefill, small vs large batches) rather than one averaged figure.
 *
 * @example
 * ```ts
 * import { errorBreakdown, gpus, models, stepTime } from "@loadledger/step-time"
 * const model = models["llama2-70b"]!, gpu = gpus["h100-80gb"]!, ranks = [{ decode: [600], extend: [] }]
 * const t = stepTime({ model, gpu }, ranks).stepSeconds
 * const r = errorBreakdown([{ model, gpu, ranks, measuredSeconds: t / 1.1, phase: "decode", batchSize: 1 }], {})
 * r.byBatch["llama2-70b/decode/1"]!.bias.toFixed(1) // => "10.0"
 * ```
 *
 * @category calibration
 * @since 0.2.0
 */
export const errorBreakdown = (
  samples: ReadonlyArray<CalibrationSample>,
  params: CalibrationParameters
): ErrorBreakdown => breakdownOf(samples.map((s) => ({ s, e: signed(s, params) })))
