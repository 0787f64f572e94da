/**
 * @loadledger/step-time/core: the step-time model without its JSON decoders and calibration.
 *
 * The lockstep step-time model (`stepTime`, `stepCostFromAggregates`), batches, efficiencies, the
 * model and GPU presets, capacity, schedules and imbalance metrics: everything a simulator or a
 * router needs at run time. It loads no effect Schema, ml-matrix or CSV parser, so a command that
 * only replays traces starts in a fraction of the time the full entry takes (about 40 ms of CPU
 * against 400 ms on Node 20, measured with `bench/startup.ts`). The main entry re-exports all of
 * it, plus `modelFromJson`, `modelFromHfConfig`, `ranksFromJson` and the calibration fits.
 *
 * @example
 * ```ts
 * import { gpus, models, withTp } from "@loadledger/step-time/core"
 * withTp(models["glm-5.3"]!, 8).tp // => 8
 * gpus["h200"]!.name // => "h200"
 * ```
 *
 * @since 0.5.0
 */
export * from "./Batch.js"
export * from "./Capacity.js"
export * from "./Efficiencies.js"
export * from "./ExpertLoad.js"
export * from "./ExpertRouting.js"
export * from "./Hardware.js"
export * from "./Metrics.js"
export * from "./Model.js"
export * from "./ModelPresets.js"
export * from "./Schedule.js"
export * from "./StepTime.js"
