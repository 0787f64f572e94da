/**
 * @loadledger/schema: typed, versioned decoders for every SGLang and vLLM load format, and the
 * normalized per-rank ledger.
 *
 * @since 0.1.0
 */
export * from "./DecodeError.js"
export * from "./Dynamo.js"
export * from "./Escape.js"
export * from "./FleetCapacity.js"
export * from "./GetLoad.js"
export * from "./IsoTimestamp.js"
export * from "./Ledger.js"
export * from "./LedgerNotice.js"
export * from "./LedgerSummary.js"
export * from "./LlmD.js"
export * from "./LoadEntry.js"
export * from "./LoadSnapshot.js"
export * from "./LoadSnapshotSections.js"
export * from "./LoadStat.js"
export { decodeSglangMetrics, decodeVllmMetrics, detectMetricsRuntime, toEngineCounts } from "./Metrics.js"
export * from "./MetricsRecords.js"
export * from "./MlpSync.js"
export * from "./RankLoad.js"
export * from "./SglangSchedulerLog.js"
export * from "./Smg.js"
export * from "./trtllm/IterationStats.js"
export * from "./trtllm/Prometheus.js"
export * from "./V1Loads.js"
export * from "./V1LoadsServer.js"
export * from "./Vllm.js"
export * from "./VllmLogger.js"

/**
 * The package version.
 *
 * @example
 * ```ts
 * import { version } from "@loadledger/schema"
 * version // => "0.1.0"
 * ```
 *
 * @since 0.1.0
 */
export const version = "0.1.0"
