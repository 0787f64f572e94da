/**
 * The physical floor of a calibration row: the time it would take at 100% of every datasheet
 * peak with no overhead. A row measured faster than its floor cannot be a measurement of the
 * configuration it names.
 *
 * @since 0.2.0
 */
import type { CalibrationSample } from "./Calibration.js"
import { predict } from "./Calibration.js"
import type { Efficiencies } from "./Efficiencies.js"

const ideal: Efficiencies = {
  memoryEfficiency: 1,
  computeEfficiency: 1,
  linkEfficiency: 1,
  collectiveLatencySeconds: 0,
  perLayerOverheadSeconds: 0,
  perRequestSecondsPerLayer: 0,
  fixedOverheadSeconds: 0,
  eagerOverheadSecondsPerLayer: 0,
  perRequestOverheadSeconds: 0
}

/**
 * The least time a row can take: its modelled time with every efficiency at 1 (the GPU's
 * datasheet HBM bandwidth, tensor peak and NVLink bandwidth) and every overhead at 0, i.e. the
 * weights and KV bytes it must read, the FLOPs it must do and the bytes it must move, each at
 * peak. Seconds.
 *
 * **When to use**: to screen measured rows before a fit or a score ({@link belowPhysicalFloor}).
 *
 * @example
 * ```ts
 * import { gpus, models, physicalFloorSeconds, withTp } from "@loadledger/step-time"
 * // 64 prompts of 512 tokens through Llama-2-70B on two A100s: 4.6 PFLOP at 624 TFLOP/s at least
 * const s = { model: withTp(models["llama2-70b"]!, 2), gpu: gpus["a100-80gb"]!, measuredSeconds: 0.802,
 *   ranks: [{ decode: [], extend: Array.from({ length: 64 }, () => ({ prefix: 0, tokens: 512 })) }] }
 * physicalFloorSeconds(s) > 7 // => true
 * ```
 *
 * @category calibration
 * @since 0.2.0
 */
export const physicalFloorSeconds = (sample: CalibrationSample): number => predict(sample, ideal)

/**
 * Split rows into those measured at or above their {@link physicalFloorSeconds} and those
 * measured below it (impossible: the row cannot describe the configuration it names, e.g. a
 * run that processed fewer requests than its `batch_size` says).
 *
 * **When to use**: the one outlier rule of {@link leaveOneModelOut}, applied to every row of
 * every source alike. Over the shared data it removes exactly the three splitwise TP2 batch-64
 * prefill rows (measured at 11-19% of their floor: 64 prompts of 512 reported faster than 32);
 * every other row is at least 1.16x its floor.
 *
 * @example
 * ```ts
 * import { belowPhysicalFloor, gpus, models } from "@loadledger/step-time"
 * const model = models["llama2-70b"]!, gpu = gpus["h100-80gb"]!, ranks = [{ decode: [600], extend: [] }]
 * const r = belowPhysicalFloor([{ model, gpu, ranks, measuredSeconds: 0.001 }, { model, gpu, ranks, measuredSeconds: 0.2 }])
 * r.below.length // => 1
 * r.kept.length // => 1
 * ```
 *
 * @category calibration
 * @since 0.2.0
 */
export const belowPhysicalFloor = <S extends CalibrationSample>(
  samples: ReadonlyArray<S>
): { readonly kept: Array<S>; readonly below: Array<S> } => {
  const kept: Array<S> = []
  const below: Array<S> = []
  for (const s of samples) (s.measuredSeconds < physicalFloorSeconds(s) ? below : kept).push(s)
  return { kept, below }
}
