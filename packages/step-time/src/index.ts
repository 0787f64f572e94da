/**
 * @loadledger/step-time: the lockstep DP step-time model, its SGLang-named metrics, presets
 * and calibration on measured step times.
 *
 * @since 0.1.0
 */
export * from "./Batch.js"
export * from "./Calibration.js"
export * from "./Capacity.js"
export * from "./Efficiencies.js"
export * from "./ErrorBreakdown.js"
export * from "./Evaluation.js"
export * from "./ExpertLoad.js"
export * from "./ExpertRouting.js"
export * from "./Feasibility.js"
export * from "./Fit.js"
export * from "./Hardware.js"
export * from "./HeldOut.js"
export * from "./HfConfig.js"
export * from "./Identifiability.js"
export * from "./Metrics.js"
export * from "./Model.js"
export * from "./ModelJson.js"
export * from "./ModelPresets.js"
export * from "./Priors.js"
export * from "./RanksJson.js"
export * from "./Schedule.js"
export * from "./ShapeAware.js"
export * from "./ShapeFit.js"
export * from "./ShapePredict.js"
export * from "./Splitwise.js"
export * from "./StepTime.js"
export * from "./Vidur.js"
export * from "./VidurFiles.js"
export * from "./VidurGpus.js"

/**
 * The package version.
 *
 * @example
 * ```ts
 * import { version } from "@loadledger/step-time"
 * version // => "0.1.0"
 * ```
 *
 * @since 0.1.0
 */
export const version = "0.1.0"
