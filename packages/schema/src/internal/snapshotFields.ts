/**
 * The field lists of SGLang's `LoadSnapshot` per era, with upstream's dataclass defaults, shared by
 * the snapshot schemas (`LoadSnapshot.ts`) and the wire-entry schemas (`LoadEntry.ts`).
 */
import * as Schema from "effect/Schema"
import {
  DisaggregationMetrics,
  LoraMetrics,
  MemoryMetrics,
  QueueMetricsV1,
  QueueMetricsV3,
  SpeculativeMetricsV1,
  SpeculativeMetricsV3
} from "../LoadSnapshotSections.js"
import { BoundedJson } from "./bounded.js"

export const flatV1 = {
  timestamp: Schema.Finite,
  dpRank: Schema.Int,
  numRunningReqs: Schema.Int,
  numWaitingReqs: Schema.Int,
  numWaitingUncachedTokens: Schema.Int,
  numUsedTokens: Schema.Int,
  numTotalTokens: Schema.Int,
  maxTotalNumTokens: Schema.Int,
  maxRunningRequests: Schema.Int,
  tokenUsage: Schema.Finite,
  genThroughput: Schema.Finite,
  cacheHitRate: Schema.Finite,
  utilization: Schema.Finite
}
export const flatV1Defaults = {
  timestamp: 0,
  dpRank: 0,
  numRunningReqs: 0,
  numWaitingReqs: 0,
  numWaitingUncachedTokens: 0,
  numUsedTokens: 0,
  numTotalTokens: 0,
  maxTotalNumTokens: 0,
  maxRunningRequests: 0,
  tokenUsage: 0,
  genThroughput: 0,
  cacheHitRate: 0,
  utilization: 0
}
export const flatV2 = {
  ...flatV1,
  numActiveTokens: Schema.Int,
  totalPrefillUncachedTokens: Schema.Int,
  totalPrefillBusyUs: Schema.Int,
  decodeMoments: Schema.NullOr(Schema.Array(Schema.Finite))
}
export const flatV2Defaults = {
  ...flatV1Defaults,
  numActiveTokens: 0,
  totalPrefillUncachedTokens: 0,
  totalPrefillBusyUs: 0,
  decodeMoments: null
}
export const flatV3 = { ...flatV2, decodeMetricsWindows: Schema.NullOr(BoundedJson) }
export const flatV3Defaults = { ...flatV2Defaults, decodeMetricsWindows: null }

/** 2026 keys of v3 entries (sglang#38065 and the gateway's reader): optional, never defaulted. */
export const newestFlat = { numPreallocReadyTokens: Schema.Int, snapshotMonotonicS: Schema.Finite }

export const sectionsV1 = {
  memory: Schema.NullOr(MemoryMetrics),
  speculative: Schema.NullOr(SpeculativeMetricsV1),
  lora: Schema.NullOr(LoraMetrics),
  disaggregation: Schema.NullOr(DisaggregationMetrics),
  queues: Schema.NullOr(QueueMetricsV1)
}
export const sectionsV3 = {
  ...sectionsV1,
  speculative: Schema.NullOr(SpeculativeMetricsV3),
  queues: Schema.NullOr(QueueMetricsV3)
}
export const nullSections = {
  memory: null,
  speculative: null,
  lora: null,
  disaggregation: null,
  queues: null
}
