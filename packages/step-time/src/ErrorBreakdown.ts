/**
 * Where a calibration errs: {@link errorBreakdown} of a parameter set's signed errors per model,
 * phase, batch-size bucket ({@link batchBucket}), GPU and measurement stack.
 *
 * @since 0.2.0
 */
import type { CalibrationParameters, CalibrationSample } from "./Calibration.js"
import type { ErrorBreakdown } from "./ErrorBreakdownTypes.js"
import { breakdownOf, bucketOf, signed } from "./internal/breakdown.js"

export * from "./ErrorBreakdownTypes.js"

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
