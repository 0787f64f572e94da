/**
 * The five optional sections of SGLang's `LoadSnapshot` (memory, speculative, lora,
 * disaggregation, queues) and the 2026 `kv_capacity` section of `/v1/loads` entries.
 *
 * Upstream: sgl-project/sglang `python/sglang/srt/managers/load_snapshot.py`
 * @ 025177e4c5b29b64f80609fd1e70c9bb1b59979c (v1 sections), a newer revision (v3: `queues.prealloc_ready`,
 * `speculative.draft_occupancy_rate`, `speculative.proposed_draft_length`); `kv_capacity` as read by
 * SGLang's model gateway in 2026 (`KVCapacitySnapshot`: every key defaulted, so every key optional here).
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"
import type { KvCapacitySchema } from "./internal/kvCapacity.js"
import { allWithDefaults, wireStruct, withDefault } from "./internal/wire.js"

/**
 * `memory` section: `weight_gb`, `kv_cache_gb`, `graph_gb` (GB, floats), `token_capacity` (int).
 * All required when the section is present.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { MemoryMetrics } from "@loadledger/schema"
 * Schema.decodeUnknownSync(MemoryMetrics)({ weight_gb: 15.2, kv_cache_gb: 52.1, graph_gb: 1.25, token_capacity: 409600 }).tokenCapacity // => 409600
 * ```
 *
 * **When to use**: reading the `memory` section of a snapshot.
 *
 * @category LoadSnapshot
 * @since 0.1.0
 */
export const MemoryMetrics = wireStruct({
  weightGb: Schema.Finite,
  kvCacheGb: Schema.Finite,
  graphGb: Schema.Finite,
  tokenCapacity: Schema.Int
})
/** @category LoadSnapshot @since 0.1.0 */
export type MemoryMetrics = typeof MemoryMetrics.Type

/**
 * `speculative` section, v1/v2: `accept_length`, `accept_rate` (required).
 *
 * **When to use**: reading the `speculative` section of a v1/v2 snapshot.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { SpeculativeMetricsV1 } from "@loadledger/schema"
 * Schema.decodeUnknownSync(SpeculativeMetricsV1)({ accept_length: 3.1, accept_rate: 0.7 }).acceptLength // => 3.1
 * ```
 *
 * @category LoadSnapshot
 * @since 0.1.0
 */
export const SpeculativeMetricsV1 = wireStruct({ acceptLength: Schema.Finite, acceptRate: Schema.Finite })
/** @category LoadSnapshot @since 0.1.0 */
export type SpeculativeMetricsV1 = typeof SpeculativeMetricsV1.Type

/**
 * `speculative` section, v3: adds `draft_occupancy_rate` (required) and `proposed_draft_length`
 * (default 0.0).
 *
 * **When to use**: reading the `speculative` section of a v3 snapshot.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { SpeculativeMetricsV3 } from "@loadledger/schema"
 * Schema.decodeUnknownSync(SpeculativeMetricsV3)({ accept_length: 3.1, accept_rate: 0.7, draft_occupancy_rate: 0.95 }).proposedDraftLength // => 0
 * ```
 *
 * @category LoadSnapshot
 * @since 0.1.0
 */
export const SpeculativeMetricsV3 = wireStruct({
  acceptLength: Schema.Finite,
  acceptRate: Schema.Finite,
  draftOccupancyRate: Schema.Finite,
  proposedDraftLength: Schema.Finite.pipe(withDefault(0))
})
/** @category LoadSnapshot @since 0.1.0 */
export type SpeculativeMetricsV3 = typeof SpeculativeMetricsV3.Type

/**
 * `lora` section: `slots_used`, `slots_total` (ints), `utilization` (0..1), all required.
 *
 * **When to use**: reading the `lora` section of a snapshot.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { LoraMetrics } from "@loadledger/schema"
 * Schema.decodeUnknownSync(LoraMetrics)({ slots_used: 2, slots_total: 8, utilization: 0.25 }).slotsTotal // => 8
 * ```
 *
 * @category LoadSnapshot
 * @since 0.1.0
 */
export const LoraMetrics = wireStruct({
  slotsUsed: Schema.Int,
  slotsTotal: Schema.Int,
  utilization: Schema.Finite
})
/** @category LoadSnapshot @since 0.1.0 */
export type LoraMetrics = typeof LoraMetrics.Type

/**
 * `disaggregation` section: `mode` (required string, `"null"`, `"prefill"` or `"decode"`), queue
 * lengths (default 0), `kv_transfer_speed_gb_s` and `kv_transfer_latency_ms` (default 0.0).
 *
 * **When to use**: reading PD-disaggregation queue lengths and KV-transfer speed.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { DisaggregationMetrics } from "@loadledger/schema"
 * Schema.decodeUnknownSync(DisaggregationMetrics)({ mode: "decode", decode_transfer_queue_reqs: 4 }).decodePreallocQueueReqs // => 0
 * ```
 *
 * @category LoadSnapshot
 * @since 0.1.0
 */
export const DisaggregationMetrics = wireStruct({
  mode: Schema.String,
  ...allWithDefaults(
    {
      prefillBootstrapQueueReqs: Schema.Int,
      prefillInflightQueueReqs: Schema.Int,
      decodePreallocQueueReqs: Schema.Int,
      decodeTransferQueueReqs: Schema.Int,
      decodeRetractedQueueReqs: Schema.Int,
      kvTransferSpeedGbS: Schema.Finite,
      kvTransferLatencyMs: Schema.Finite
    },
    {
      prefillBootstrapQueueReqs: 0,
      prefillInflightQueueReqs: 0,
      decodePreallocQueueReqs: 0,
      decodeTransferQueueReqs: 0,
      decodeRetractedQueueReqs: 0,
      kvTransferSpeedGbS: 0,
      kvTransferLatencyMs: 0
    }
  )
})
/** @category LoadSnapshot @since 0.1.0 */
export type DisaggregationMetrics = typeof DisaggregationMetrics.Type

/**
 * `queues` section, v1/v2: `waiting`, `grammar`, `paused`, `retracted` (required ints).
 *
 * **When to use**: reading the `queues` section of a v1/v2 snapshot.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { QueueMetricsV1 } from "@loadledger/schema"
 * Schema.is(QueueMetricsV1)({ waiting: 40, grammar: 0, paused: 0, retracted: 0 }) // => true
 * ```
 *
 * @category LoadSnapshot
 * @since 0.1.0
 */
export const QueueMetricsV1 = wireStruct({
  waiting: Schema.Int,
  grammar: Schema.Int,
  paused: Schema.Int,
  retracted: Schema.Int
})
/** @category LoadSnapshot @since 0.1.0 */
export type QueueMetricsV1 = typeof QueueMetricsV1.Type

/**
 * `queues` section, v3: adds `prealloc_ready` (required).
 *
 * **When to use**: reading the `queues` section of a v3 snapshot.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { QueueMetricsV3 } from "@loadledger/schema"
 * Schema.is(QueueMetricsV3)({ waiting: 40, grammar: 0, paused: 0, retracted: 0 }) // => false
 * ```
 *
 * @category LoadSnapshot
 * @since 0.1.0
 */
export const QueueMetricsV3 = wireStruct({
  waiting: Schema.Int,
  grammar: Schema.Int,
  paused: Schema.Int,
  retracted: Schema.Int,
  preallocReady: Schema.Int
})
/** @category LoadSnapshot @since 0.1.0 */
export type QueueMetricsV3 = typeof QueueMetricsV3.Type

/**
 * `kv_capacity` section of 2026 `/v1/loads` entries (`include=all`): `full_available_tokens`,
 * `full_evictable_tokens` (full-attention KV pool, tokens), and for hybrid models
 * `swa_available_tokens`, `swa_evictable_tokens`, `mamba_available_slots`, `mamba_evictable_slots`,
 * plus `request_slots_available`. Every key optional (absent stays absent).
 *
 * **When to use**: reading how many KV tokens a rank can still admit.
 *
 * @example
 * ```ts
 * import { decodeV1Loads, type KvCapacityMetrics } from "@loadledger/schema"
 * const r = decodeV1Loads({ loads: [{ dp_rank: 0, kv_capacity: { full_available_tokens: 120000 } }] })
 * const kv: KvCapacityMetrics | null | undefined = r._tag === "Success" && "kvCapacity" in r.success.response.loads[0]! ? r.success.response.loads[0].kvCapacity : undefined
 * kv?.fullAvailableTokens // => 120000
 * ```
 *
 * @category LoadSnapshot
 * @since 0.3.0
 */
export type KvCapacityMetrics = typeof KvCapacitySchema.Type
