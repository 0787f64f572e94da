/**
 * Arbitraries for the optional sections of an SGLang `LoadSnapshot` (`memory`, `speculative`,
 * `lora`, `disaggregation`, `queues`), one per schema of `@loadledger/schema`'s
 * `LoadSnapshotSections`.
 *
 * **When to use**: property tests of code that reads a snapshot's sections; `assertSchemaLaws`
 * pairs each with its schema.
 *
 * @since 0.1.0
 */
import type * as S from "@loadledger/schema"
import fc from "fast-check"
import { count, finite, fraction } from "../internal/primitives.js"

/**
 * The `memory` section: weights, KV cache and CUDA graph sizes (GB, finite) and the token capacity
 * (a count).
 *
 * @example
 * ```ts
 * import { MemoryMetrics } from "@loadledger/schema"
 * import { memoryMetrics } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(memoryMetrics, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(MemoryMetrics)) // => true
 * Object.keys(samples[0]!) // => ["weightGb", "kvCacheGb", "graphGb", "tokenCapacity"]
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const memoryMetrics: fc.Arbitrary<S.MemoryMetrics> = fc.record({
  weightGb: finite,
  kvCacheGb: finite,
  graphGb: finite,
  tokenCapacity: count
})

/**
 * The `speculative` section of v1/v2 snapshots: accept length (finite) and accept rate (a share in
 * [0, 1]).
 *
 * @example
 * ```ts
 * import { SpeculativeMetricsV1 } from "@loadledger/schema"
 * import { speculativeMetricsV1 } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(speculativeMetricsV1, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(SpeculativeMetricsV1)) // => true
 * samples.every((s) => s.acceptRate >= 0 && s.acceptRate <= 1) // => true
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const speculativeMetricsV1: fc.Arbitrary<S.SpeculativeMetricsV1> = fc.record({
  acceptLength: finite,
  acceptRate: fraction
})

/**
 * The `speculative` section of v3 snapshots: v1's fields plus the draft occupancy rate and the
 * proposed draft length.
 *
 * @example
 * ```ts
 * import { SpeculativeMetricsV3 } from "@loadledger/schema"
 * import { speculativeMetricsV3 } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(speculativeMetricsV3, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(SpeculativeMetricsV3)) // => true
 * Object.keys(samples[0]!) // => ["acceptLength", "acceptRate", "draftOccupancyRate", "proposedDraftLength"]
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const speculativeMetricsV3: fc.Arbitrary<S.SpeculativeMetricsV3> = fc.record({
  acceptLength: finite,
  acceptRate: fraction,
  draftOccupancyRate: fraction,
  proposedDraftLength: finite
})

/**
 * The `lora` section: adapter slots used and in total (counts) and their utilization (a share).
 *
 * @example
 * ```ts
 * import { LoraMetrics } from "@loadledger/schema"
 * import { loraMetrics } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(loraMetrics, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(LoraMetrics)) // => true
 * samples.every((s) => s.utilization >= 0 && s.utilization <= 1) // => true
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const loraMetrics: fc.Arbitrary<S.LoraMetrics> = fc.record({
  slotsUsed: count,
  slotsTotal: count,
  utilization: fraction
})

/**
 * The `disaggregation` section: the PD mode (`"null"`, `"prefill"` or `"decode"`), its queue lengths
 * and the KV transfer speed and latency.
 *
 * @example
 * ```ts
 * import { DisaggregationMetrics } from "@loadledger/schema"
 * import { disaggregationMetrics } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(disaggregationMetrics, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(DisaggregationMetrics)) // => true
 * samples.every((s) => ["null", "prefill", "decode"].includes(s.mode)) // => true
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
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

/**
 * The `queues` section of v1/v2 snapshots: waiting, grammar, paused and retracted request counts.
 *
 * @example
 * ```ts
 * import { QueueMetricsV1 } from "@loadledger/schema"
 * import { queueMetricsV1 } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(queueMetricsV1, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(QueueMetricsV1)) // => true
 * Object.keys(samples[0]!) // => ["waiting", "grammar", "paused", "retracted"]
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const queueMetricsV1: fc.Arbitrary<S.QueueMetricsV1> = fc.record({
  waiting: count,
  grammar: count,
  paused: count,
  retracted: count
})

/**
 * The `queues` section of v3 snapshots: v1's counts plus `preallocReady`.
 *
 * @example
 * ```ts
 * import { QueueMetricsV3 } from "@loadledger/schema"
 * import { queueMetricsV3 } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(queueMetricsV3, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(QueueMetricsV3)) // => true
 * samples.every((s) => Number.isSafeInteger(s.preallocReady) && s.preallocReady >= 0) // => true
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const queueMetricsV3: fc.Arbitrary<S.QueueMetricsV3> = fc.record({
  waiting: count,
  grammar: count,
  paused: count,
  retracted: count,
  preallocReady: count
})
