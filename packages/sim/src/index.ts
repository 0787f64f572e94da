/**
 * @loadledger/sim: a deterministic simulator replaying real request traces through any loadledger
 * policy on a lockstep DP group.
 *
 * @since 0.1.0
 */
export * from "./Bound.js"
export * from "./Capacity.js"
export * from "./CapacitySearch.js"
export * from "./CapacityTypes.js"
export * from "./Config.js"
export * from "./engines/Engine.js"
export { type EngineName, engineNames } from "./engines/index.js"
/**
 * What vLLM front ends are handed per rank (`coordinatorRows`): `"extended"` (the default),
 * `"vllm"` or `"vllm-counts"` (the upstream coordinator's rows); defined in `engines/vllm/options.ts`.
 *
 * @category config
 * @since 0.6.0
 */
export type { CoordinatorRows } from "./engines/vllm/options.js"
export * from "./engines/vllm/VllmCoordinator.js"
export * from "./engines/vllm/VllmCoordPublish.js"
export * from "./engines/vllm/VllmCoordTypes.js"
export * from "./engines/vllm/VllmCoordWave.js"
export * from "./engines/vllm/VllmWave.js"
export * from "./engines/vllm/VllmWaveTypes.js"
export * from "./faults/LoadReports.js"
export * from "./faults/RankFaults.js"
export * from "./Goodput.js"
export * from "./GoodputEstimate.js"
export * from "./Result.js"
export * from "./SimPolicy.js"
export * from "./Simulate.js"
export * from "./Slo.js"
export * from "./SloText.js"
export * from "./StepModel.js"
export * from "./StepTimeModel.js"
export * from "./TokenIds.js"
export * from "./TokenIdsTypes.js"
export * from "./Trace.js"
export * from "./TraceStream.js"
