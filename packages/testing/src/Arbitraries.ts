/**
 * Hand-written fast-check arbitraries for every `@loadledger/schema` type (effect 4 has no
 * Schema -> fast-check bridge). Each one is checked against `Schema.is` by `assertSchemaLaws` in
 * this package's tests. fast-check is an optional peer dependency.
 *
 * @since 0.1.0
 */
import type * as S from "@loadledger/schema"
import fc from "fast-check"

const int = fc.oneof(fc.integer({ min: -1000, max: 1_000_000 }), fc.maxSafeInteger())
const count = fc.oneof(fc.nat({ max: 100_000 }), fc.maxSafeNat())
const finite = fc.double({ noNaN: true, noDefaultInfinity: true })
const fraction = fc.double({ min: 0, max: 1, noNaN: true })
const flag = fc.integer({ min: 0, max: 1 })
const opt = <T extends Record<string, fc.Arbitrary<unknown>>>(model: T) =>
  fc.record(model, { requiredKeys: [] })
const nullOr = <A>(a: fc.Arbitrary<A>) => fc.option(a, { nil: null })

/** `memory` section. @category arbitraries @since 0.1.0 */
export const memoryMetrics: fc.Arbitrary<S.MemoryMetrics> = fc.record({
  weightGb: finite,
  kvCacheGb: finite,
  graphGb: finite,
  tokenCapacity: count
})
/** `speculative` section (v1/v2). @category arbitraries @since 0.1.0 */
export const speculativeMetricsV1: fc.Arbitrary<S.SpeculativeMetricsV1> = fc.record({
  acceptLength: finite,
  acceptRate: fraction
})
/** `speculative` section (v3). @category arbitraries @since 0.1.0 */
export const speculativeMetricsV3: fc.Arbitrary<S.SpeculativeMetricsV3> = fc.record({
  acceptLength: finite,
  acceptRate: fraction,
  draftOccupancyRate: fraction,
  proposedDraftLength: finite
})
/** `lora` section. @category arbitraries @since 0.1.0 */
export const loraMetrics: fc.Arbitrary<S.LoraMetrics> = fc.record({
  slotsUsed: count,
  slotsTotal: count,
  utilization: fraction
})
/** `disaggregation` section. @category arbitraries @since 0.1.0 */
export const disaggregationMetrics: fc.Arbitrary<S.DisaggregationMetrics> = fc.record({
  mode: fc.constantFrom("null", "prefill", "decode"),
  prefillBootstrapQueueReqs: count,
  prefillInflightQueueReqs: count,
  decodePreallocQueueReqs: count,
  decodeTransferQueueReqs: count,
  decodeRetractedQueueReqs: count,
  kvTransferSpeedGbS: finite,
  kvTransferLatencyMs: finite
})
/** `queues` section (v1/v2). @category arbitraries @since 0.1.0 */
export const queueMetricsV1: fc.Arbitrary<S.QueueMetricsV1> = fc.record({
  waiting: count,
  grammar: count,
  paused: count,
  retracted: count
})
/** `queues` section (v3). @category arbitraries @since 0.1.0 */
export const queueMetricsV3: fc.Arbitrary<S.QueueMetricsV3> = fc.record({
  waiting: count,
  grammar: count,
  paused: count,
  retracted: count,
  preallocReady: count
})

const flatV1 = {
  timestamp: finite,
  dpRank: fc.nat({ max: 63 }),
  numRunningReqs: count,
  numWaitingReqs: count,
  numWaitingUncachedTokens: count,
  numUsedTokens: count,
  numTotalTokens: count,
  maxTotalNumTokens: count,
  maxRunningRequests: count,
  tokenUsage: fraction,
  genThroughput: finite,
  cacheHitRate: fraction,
  utilization: fraction
}
const flatV2 = {
  ...flatV1,
  numActiveTokens: count,
  totalPrefillUncachedTokens: count,
  totalPrefillBusyUs: count,
  decodeMoments: nullOr(fc.array(finite, { maxLength: 4 }))
}
const flatV3 = {
  ...flatV2,
  decodeMetricsWindows: nullOr(
    fc.jsonValue({ maxDepth: 2, noUnicodeString: true }) as fc.Arbitrary<
      S.LoadSnapshotV3["decodeMetricsWindows"]
    >
  )
}
const sectionsV1 = {
  memory: nullOr(memoryMetrics),
  speculative: nullOr(speculativeMetricsV1),
  lora: nullOr(loraMetrics),
  disaggregation: nullOr(disaggregationMetrics),
  queues: nullOr(queueMetricsV1)
}
const sectionsV3 = {
  ...sectionsV1,
  speculative: nullOr(speculativeMetricsV3),
  queues: nullOr(queueMetricsV3)
}

/** SGLang `LoadSnapshot` v1. @category arbitraries @since 0.1.0 */
export const loadSnapshotV1: fc.Arbitrary<S.LoadSnapshotV1> = fc.record({ ...flatV1, ...sectionsV1 })
/** SGLang `LoadSnapshot` v2. @category arbitraries @since 0.1.0 */
export const loadSnapshotV2: fc.Arbitrary<S.LoadSnapshotV2> = fc.record({ ...flatV2, ...sectionsV1 })
/** SGLang `LoadSnapshot` v3. @category arbitraries @since 0.1.0 */
export const loadSnapshotV3: fc.Arbitrary<S.LoadSnapshotV3> = fc.record({ ...flatV3, ...sectionsV3 })

/** A `/v1/loads` entry of the first and shared-memory eras (keys may be absent). @category arbitraries @since 0.1.0 */
export const loadEntryV1: fc.Arbitrary<S.LoadEntryV1> = opt({ ...flatV1, numTotalReqs: count, ...sectionsV1 })
/** A v2 `/v1/loads` entry. @category arbitraries @since 0.1.0 */
export const loadEntryV2: fc.Arbitrary<S.LoadEntryV2> = opt({ ...flatV2, ...sectionsV1 })
/** A v3 `/v1/loads` entry. @category arbitraries @since 0.1.0 */
export const loadEntryV3: fc.Arbitrary<S.LoadEntryV3> = opt({ ...flatV3, ...sectionsV3 })

const iso = fc
  .integer({ min: 0, max: 4_000_000_000_000 })
  .map((ms) => new Date(ms).toISOString().replace("Z", "+00:00"))
const envelope = { timestamp: iso, version: fc.constantFrom("0.4.0", "0.5.9", "0.5.12") }

/** The first era's `aggregate`. @category arbitraries @since 0.1.0 */
export const v1LoadsAggregate: fc.Arbitrary<S.V1LoadsAggregate> = opt({
  totalRunningReqs: count,
  totalWaitingReqs: count,
  totalReqs: count,
  totalUsedTokens: count,
  totalTokens: count,
  avgTokenUsage: fraction,
  avgThroughput: finite,
  avgUtilization: fraction
})
/** First-era `/v1/loads` response. @category arbitraries @since 0.1.0 */
export const v1LoadsResponsePreShm: fc.Arbitrary<S.V1LoadsResponsePreShm> = fc.record(
  {
    ...envelope,
    dpRankCount: count,
    loads: fc.array(loadEntryV1, { maxLength: 4 }),
    aggregate: v1LoadsAggregate
  },
  { requiredKeys: ["loads"] }
)
/** Shared-memory-era `/v1/loads` response. @category arbitraries @since 0.1.0 */
export const v1LoadsResponseShmV1: fc.Arbitrary<S.V1LoadsResponseShmV1> = fc.record(
  { ...envelope, loads: fc.array(loadEntryV1, { maxLength: 4 }) },
  { requiredKeys: ["loads"] }
)
const newest = {
  ...envelope,
  accelerator: fc.constantFrom("NVIDIA H200", "NVIDIA GB300"),
  numAccelerators: count
}
/** Newest `/v1/loads` response, v2 entries. @category arbitraries @since 0.1.0 */
export const v1LoadsResponseShmV2: fc.Arbitrary<S.V1LoadsResponseShmV2> = fc.record(
  { ...newest, loads: fc.array(loadEntryV2, { maxLength: 4 }) },
  { requiredKeys: ["loads"] }
)
/** Newest `/v1/loads` response, v3 entries. @category arbitraries @since 0.1.0 */
export const v1LoadsResponseShmV3: fc.Arbitrary<S.V1LoadsResponseShmV3> = fc.record(
  { ...newest, loads: fc.array(loadEntryV3, { maxLength: 4 }) },
  { requiredKeys: ["loads"] }
)

/** A legacy `/get_load` entry. @category arbitraries @since 0.1.0 */
export const getLoadEntry: fc.Arbitrary<S.GetLoadEntry> = fc.record(
  {
    dpRank: nullOr(fc.nat({ max: 63 })),
    numReqs: count,
    numWaitingReqs: count,
    numTokens: count,
    numPendingTokens: count,
    tsTic: finite
  },
  { requiredKeys: ["numReqs", "numWaitingReqs", "numTokens"] }
)
/** A legacy `/get_load` body. @category arbitraries @since 0.1.0 */
export const getLoadResponse: fc.Arbitrary<S.GetLoadResponse> = fc.array(getLoadEntry, { maxLength: 4 })

/** `LoadStat`. @category arbitraries @since 0.1.0 */
export const loadStat: fc.Arbitrary<S.LoadStat> = fc.record({
  numRunningReqs: int,
  numWaitingReqs: int,
  numTokens: int,
  maxTotalNumTokens: int,
  attnDpRank: int
})
/** The tagged msgpack payload `["LoadStat", ...]`. @category arbitraries @since 0.1.0 */
export const loadStatTagged: fc.Arbitrary<S.LoadStatTagged> = fc.tuple(
  fc.constant("LoadStat" as const),
  int,
  int,
  int,
  int,
  int
)

const row8 = {
  numTokens: count,
  numTokensForLogprob: count,
  canRunDecodeCudaGraph: flag,
  isExtendInBatch: flag,
  localCanRunTbo: flag,
  localForwardMode: fc.nat({ max: 12 }),
  canRunPrefillCudaGraph: flag,
  prefillCudaGraphMaxPrefixLen: count
}
/** One MLP-sync row as a struct (8 or 11 columns). @category arbitraries @since 0.1.0 */
export const mlpSyncBatchInfo: fc.Arbitrary<S.MlpSyncBatchInfo> = fc.oneof(
  fc.record(row8),
  fc.record({ ...row8, canRunDraftCudaGraph: flag, isHealthCheck: flag, attentionPairs: count })
)
/** Gathered MLP-sync rows as on the wire (arrays of 11 or 8 ints). @category arbitraries @since 0.1.0 */
export const mlpSyncRows: fc.Arbitrary<S.MlpSyncRows> = fc.array(
  fc.oneof(
    fc.tuple(count, count, count, count, count, count, count, count, count, count, count),
    fc.tuple(count, count, count, count, count, count, count, count)
  ),
  { maxLength: 8 }
)

/** vLLM `[waiting, running, kvCacheUsage]`. @category arbitraries @since 0.1.0 */
export const engineCounts: fc.Arbitrary<S.EngineCounts> = fc.tuple(count, count, fraction)
/** vLLM coordinator update. @category arbitraries @since 0.1.0 */
export const coordinatorUpdate: fc.Arbitrary<S.CoordinatorUpdate> = fc.tuple(
  nullOr(fc.array(engineCounts, { maxLength: 8 })),
  count,
  fc.boolean()
)
/** vLLM `SchedulerStats`. @category arbitraries @since 0.1.0 */
export const schedulerStats: fc.Arbitrary<S.SchedulerStats> = fc.record({
  numRunningReqs: count,
  numWaitingReqs: count,
  kvCacheUsage: fraction,
  stepCounter: count,
  currentWave: count
})

/** One vLLM engine's `/metrics` gauges. @category arbitraries @since 0.1.0 */
export const vllmEngineMetrics: fc.Arbitrary<S.VllmEngineMetrics> = fc.record(
  {
    engine: fc.nat({ max: 63 }),
    numRequestsRunning: count,
    numRequestsWaiting: count,
    kvCacheUsagePerc: fraction,
    gpuCacheUsagePerc: fraction
  },
  { requiredKeys: ["engine"] }
)
/** One SGLang rank's `/metrics` gauges. @category arbitraries @since 0.1.0 */
export const sglangRankMetrics: fc.Arbitrary<S.SglangRankMetrics> = fc.record(
  {
    dpRank: fc.nat({ max: 63 }),
    numRunningReqs: count,
    numQueueReqs: count,
    numWaitingReqs: count,
    numWaitingUncachedTokens: count,
    numUsedTokens: count,
    numTotalTokens: count,
    numActiveTokens: count,
    tokenUsage: fraction,
    genThroughput: finite,
    cacheHitRate: fraction,
    utilization: fraction,
    maxTotalNumTokens: count,
    maxRunningRequests: count,
    maxPrefillTokens: count,
    contextLen: count
  },
  { requiredKeys: ["dpRank"] }
)
/** One vLLM logger record. @category arbitraries @since 0.1.0 */
export const vllmLoggerRecord: fc.Arbitrary<S.VllmLoggerRecord> = fc.record(
  {
    engine: fc.nat({ max: 999 }),
    line: fc.integer({ min: 1, max: 100_000 }),
    avgPromptThroughputTokensPerSecond: finite,
    avgGenerationThroughputTokensPerSecond: finite,
    numRunningReqs: count,
    numWaitingReqs: count,
    kvCacheUsage: fraction,
    prefixCacheHitRate: fraction,
    mmCacheHitRate: fraction
  },
  { requiredKeys: ["engine", "line"] }
)
