/**
 * Calibration samples (steps, layers, attention kernels, collectives), predictions and error
 * reports. The fit is in `Fit.ts`, priors in `Priors.ts`, the identifiability check in
 * `Identifiability.ts`, cross-validation in `Evaluation.ts`, readers in `Splitwise.ts` / `Vidur.ts`;
 * the types are in `CalibrationTypes.ts` (re-exported here).
 *
 * @since 0.1.0
 */
import type {
  CalibrationParameters,
  CalibrationSample,
  MapeReport,
  StackParameters
} from "./CalibrationTypes.js"
import type { Efficiencies } from "./Efficiencies.js"
import { stackOf } from "./internal/layout.js"
import { summarize } from "./internal/summary.js"
import { evalPrepared, prepare, toTheta } from "./internal/theta.js"

export * from "./CalibrationTypes.js"
/**
 * The model a sample measures (`undefined` for collectives, which no model owns).
 *
 * @example
 * ```ts
 * import { gpus, models, sampleModel } from "@loadledger/step-time"
 * sampleModel({ model: models["llama2-70b"]!, gpu: gpus["h100-80gb"]!, ranks: [], measuredSeconds: 1 }) // => "llama2-70b"
 * ```
 *
 * @category calibration
 * @since 0.2.0
 */
export const sampleModel = (s: CalibrationSample): string | undefined =>
  "model" in s ? s.model.name : undefined

/**
 * The parameters that apply to one sample: its stack's entry of a {@link StackParameters}
 * (by the sample's `source`, `"unspecified"` when absent), else `params`.
 *
 * @example
 * ```ts
 * import { gpus, models, parametersFor } from "@loadledger/step-time"
 * const s = { model: models["llama2-70b"]!, gpu: gpus["h100-80gb"]!, ranks: [], measuredSeconds: 1, source: "splitwise" }
 * parametersFor({ params: { fixedOverheadSeconds: 0 }, stacks: { splitwise: { fixedOverheadSeconds: 0.004 } } }, s).fixedOverheadSeconds // => 0.004
 * parametersFor({ fixedOverheadSeconds: 0.002 }, s).fixedOverheadSeconds // => 0.002
 * ```
 *
 * @category calibration
 * @since 0.2.0
 */
export const parametersFor = (
  params: CalibrationParameters,
  sample: CalibrationSample
): Partial<Efficiencies> => {
  if (!("stacks" in params)) return params
  const stack = stackOf(sample)
  return stack !== undefined && Object.hasOwn(params.stacks, stack) ? params.stacks[stack]! : params.params
}

/**
 * The modelled step time of a sample under `params` (one set, or one per stack: see
 * {@link parametersFor}).
 *
 * @example
 * ```ts
 * import { defaultEfficiencies, gpus, models, predict } from "@loadledger/step-time"
 * const s = { model: models["glm-5.3"]!, gpu: gpus["h200"]!, ranks: [{ decode: [8192], extend: [] }], measuredSeconds: 0.03 }
 * predict(s, defaultEfficiencies) > 0 // => true
 * ```
 *
 * @category calibration
 * @since 0.1.0
 */
export const predict = (sample: CalibrationSample, params: CalibrationParameters): number =>
  evalPrepared(prepare(sample), toTheta(parametersFor(params, sample)))

/**
 * Mean absolute percentage error of `params` (one set, or one per stack) on `samples`, overall
 * and per `group/phase` label.
 *
 * @example
 * ```ts
 * import { gpus, mape, models, stepTime } from "@loadledger/step-time"
 * const model = models["glm-5.3"]!, gpu = gpus["h200"]!, ranks = [{ decode: [8192], extend: [] }]
 * const t = stepTime({ model, gpu }, ranks).stepSeconds
 * mape([{ model, gpu, ranks, measuredSeconds: t * 1.1 }], {}).mape.toFixed(2) // => "9.09"
 * ```
 *
 * @category calibration
 * @since 0.1.0
 */
export const mape = (samples: ReadonlyArray<CalibrationSample>, params: CalibrationParameters): MapeReport =>
  summarize(
    samples.map((s) => ({
      s,
      e: (100 * Math.abs(predict(s, params) - s.measuredSeconds)) / s.measuredSeconds
    }))
  )
