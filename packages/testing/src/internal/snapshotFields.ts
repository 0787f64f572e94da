/**
 * The field generators an SGLang load snapshot and a `/v1/loads` entry share, per wire version:
 * the flat per-rank fields (v1, v2 adds token/prefill totals and decode moments, v3 the decode
 * metric windows) and the optional sections (v3 with its own speculative and queue shapes).
 *
 * @internal
 */
import type * as S from "@loadledger/schema"
import fc from "fast-check"
import {
  disaggregationMetrics,
  loraMetrics,
  memoryMetrics,
  queueMetricsV1,
  queueMetricsV3,
  speculativeMetricsV1,
  speculativeMetricsV3
} from "../arbitraries/LoadSnapshotSections.js"
import { count, finite, fraction, nullOr } from "./primitives.js"

/** The flat fields of a v1 snapshot. */
export const flatV1 = {
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
/** v1's fields plus v2's totals and decode moments. */
export const flatV2 = {
  ...flatV1,
  numActiveTokens: count,
  totalPrefillUncachedTokens: count,
  totalPrefillBusyUs: count,
  decodeMoments: nullOr(fc.array(finite, { maxLength: 4 }))
}
/** v2's fields plus v3's decode metric windows (any small JSON value, or null). */
export const flatV3 = {
  ...flatV2,
  decodeMetricsWindows: nullOr(
    fc.jsonValue({ maxDepth: 2, noUnicodeString: true }) as fc.Arbitrary<
      S.LoadSnapshotV3["decodeMetricsWindows"]
    >
  )
}
/** The sections of v1 and v2 snapshots, each possibly null. */
export const sectionsV1 = {
  memory: nullOr(memoryMetrics),
  speculative: nullOr(speculativeMetricsV1),
  lora: nullOr(loraMetrics),
  disaggregation: nullOr(disaggregationMetrics),
  queues: nullOr(queueMetricsV1)
}
/** The sections of v3 snapshots (v3 speculative and queue shapes). */
export const sectionsV3 = {
  ...sectionsV1,
  speculative: nullOr(speculativeMetricsV3),
  queues: nullOr(queueMetricsV3)
}
