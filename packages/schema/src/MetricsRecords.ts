/**
 * The records of Prometheus `/metrics` text: one vLLM engine's, one SGLang rank's, and what a
 * decode of a page returns around them (`decodeVllmMetrics`, `decodeSglangMetrics` in
 * `Metrics.ts`).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

const Opt = Schema.optionalKey(Schema.Finite)

/**
 * One vLLM engine's load gauges from `/metrics` (each absent when not reported).
 * `kvCacheUsagePerc` / `gpuCacheUsagePerc` are 0..1 fractions despite the name.
 *
 * **When to use**: reading vLLM `/metrics` per engine; see `toEngineCounts`.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { VllmEngineMetrics } from "@loadledger/schema"
 * Schema.is(VllmEngineMetrics)({ engine: 0, numRequestsRunning: 8 }) // => true
 * ```
 *
 * @category Metrics
 * @since 0.1.0
 */
export const VllmEngineMetrics = Schema.Struct({
  engine: Schema.Int,
  numRequestsRunning: Opt,
  numRequestsWaiting: Opt,
  numRequestsSwapped: Opt,
  kvCacheUsagePerc: Opt,
  gpuCacheUsagePerc: Opt,
  cpuCacheUsagePerc: Opt
})
/** @category Metrics @since 0.1.0 */
export type VllmEngineMetrics = typeof VllmEngineMetrics.Type

/**
 * One SGLang DP rank's gauges from `/metrics` or `/v1/loads?format=prometheus` (each absent when
 * not reported): a partial `LoadSnapshot`.
 *
 * **When to use**: reading SGLang `/metrics` per DP rank.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { SglangRankMetrics } from "@loadledger/schema"
 * Schema.is(SglangRankMetrics)({ dpRank: 3, genThroughput: 141.75 }) // => true
 * ```
 *
 * @category Metrics
 * @since 0.1.0
 */
export const SglangRankMetrics = Schema.Struct({
  dpRank: Schema.Int,
  numRunningReqs: Opt,
  numQueueReqs: Opt,
  numWaitingReqs: Opt,
  numWaitingUncachedTokens: Opt,
  numUsedTokens: Opt,
  numTotalTokens: Opt,
  numActiveTokens: Opt,
  tokenUsage: Opt,
  genThroughput: Opt,
  cacheHitRate: Opt,
  utilization: Opt,
  maxTotalNumTokens: Opt,
  maxRunningRequests: Opt,
  maxPrefillTokens: Opt,
  contextLen: Opt,
  numPreallocReadyTokens: Opt,
  numRetractedReqs: Opt,
  numPausedReqs: Opt,
  numGrammarQueueReqs: Opt,
  numPrefillBootstrapQueueReqs: Opt,
  numPrefillInflightQueueReqs: Opt,
  numDecodePreallocQueueReqs: Opt,
  numDecodeTransferQueueReqs: Opt,
  kvAvailableTokens: Opt,
  kvEvictableTokens: Opt
})
/** @category Metrics @since 0.1.0 */
export type SglangRankMetrics = typeof SglangRankMetrics.Type

/**
 * Decoded metrics: records in ascending engine / rank order, and the load metrics that were
 * declared but had no sample (reported, so a caller can tell "declared, no samples" from "not
 * exported").
 *
 * **When to use**: telling "declared, no samples" from "not exported".
 *
 * @category Metrics
 * @since 0.1.0
 */
export interface DecodedMetrics<R> {
  readonly records: ReadonlyArray<R>
  readonly declaredWithoutSamples: ReadonlyArray<string>
  /** Series in the text that no field models (counters, histograms, other gauges), by family. */
  readonly unmodelledSeries: ReadonlyArray<UnmodelledSeries>
  /**
   * The 1-based line left out because no newline follows it (the text was cut off there, and a cut
   * sample can still parse to a wrong number: `12.0` cut to `1`); absent when the text ends with
   * a newline or a blank line. When it is the only line there is nothing to read: a `SyntaxError`.
   */
  readonly cutLine?: number | undefined
}

/** A series present in the text that no record field models: kept here, by family name. */
export interface UnmodelledSeries {
  readonly name: string
  readonly type?: string | undefined
  readonly samples: number
  /** 1-based line of its first sample. */
  readonly line: number
}
