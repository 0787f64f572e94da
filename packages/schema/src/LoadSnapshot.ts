/**
 * SGLang's `LoadSnapshot`: the per-DP-rank load struct the scheduler publishes (shared memory /
 * ZMQ) and `/v1/loads` echoes, in its three eras, with its five optional sections.
 *
 * Upstream: sgl-project/sglang `python/sglang/srt/managers/load_snapshot.py`
 * @ 025177e4c5b29b64f80609fd1e70c9bb1b59979c (v1), @ 16739a60a4dcc0f1219afa562f4eb66c56034fde
 * (v2, PR #32245), and a newer revision (v3: `queues.prealloc_ready`,
 * `speculative.draft_occupancy_rate`, `speculative.proposed_draft_length`, `decode_metrics_windows`);
 * 2026 entry keys `num_prealloc_ready_tokens` (sglang#38065, 2026-09), `snapshot_monotonic_s` and
 * `kv_capacity`. Sections live in `LoadSnapshotSections.ts`. `decode_metrics_windows` is opaque
 * JSON nesting at most 512 levels, checked in linear time.
 *
 * @since 0.1.0
 */

import type * as Result from "effect/Result"
import { type DecodeError, decodeWith } from "./DecodeError.js"
import { strictly } from "./internal/numbers.js"
import {
  flatV1,
  flatV1Defaults,
  flatV2,
  flatV2Defaults,
  flatV3,
  flatV3Defaults,
  nullSections,
  sectionsV1,
  sectionsV3
} from "./internal/snapshotFields.js"
import { allWithDefaults, wireStruct } from "./internal/wire.js"
import type { LoadEntry } from "./LoadEntry.js"

/**
 * Which revision of `load_snapshot.py` a payload follows: `shm-v1`, `shm-v2` or `shm-v3`.
 *
 * **When to use**: choosing which `LoadSnapshot` schema to decode with.
 *
 * @category LoadSnapshot
 * @since 0.1.0
 */
export type LoadSnapshotEra = "shm-v1" | "shm-v2" | "shm-v3"

/**
 * `LoadSnapshot` v1 (load_snapshot.py @ 025177e4): 13 flat fields (`timestamp` float epoch seconds,
 * counts as ints, `token_usage`/`cache_hit_rate`/`utilization` 0..1, `gen_throughput` tokens/s) and
 * 5 sections. A missing key takes the upstream default (0 / 0.0 / null section); unknown keys are
 * ignored; a present section missing a required field is an error.
 *
 * **When to use**: decoding one `/v1/loads` entry of the shared-memory era, or a shared-memory slot.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { LoadSnapshotV1 } from "@loadledger/schema"
 * const s = Schema.decodeUnknownSync(LoadSnapshotV1)({ dp_rank: 1, num_running_reqs: 3, future_key: 1 })
 * s.numRunningReqs // => 3
 * s.timestamp // => 0
 * s.queues // => null
 * ```
 *
 * @category LoadSnapshot
 * @since 0.1.0
 */
export const LoadSnapshotV1 = wireStruct({
  ...allWithDefaults(flatV1, flatV1Defaults),
  ...allWithDefaults(sectionsV1, nullSections)
})
/** @category LoadSnapshot @since 0.1.0 */
export type LoadSnapshotV1 = typeof LoadSnapshotV1.Type

/**
 * `LoadSnapshot` v2 (load_snapshot.py @ 16739a60, PR #32245): v1 plus `num_active_tokens`,
 * `total_prefill_uncached_tokens`, `total_prefill_busy_us` (µs) and `decode_moments` (float[] or null).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { LoadSnapshotV2 } from "@loadledger/schema"
 * Schema.decodeUnknownSync(LoadSnapshotV2)({ dp_rank: 0 }).decodeMoments // => null
 * ```
 *
 * **When to use**: decoding a `/v1/loads` entry or shared-memory slot of the PR #32245 era.
 *
 * @category LoadSnapshot
 * @since 0.1.0
 */
export const LoadSnapshotV2 = wireStruct({
  ...allWithDefaults(flatV2, flatV2Defaults),
  ...allWithDefaults(sectionsV1, nullSections)
})
/** @category LoadSnapshot @since 0.1.0 */
export type LoadSnapshotV2 = typeof LoadSnapshotV2.Type

/**
 * `LoadSnapshot` v3 (a newer load_snapshot.py; main vs branch not confirmed upstream): v2 plus
 * `decode_metrics_windows` (JSON or null), `queues.prealloc_ready` (required),
 * `speculative.draft_occupancy_rate` (required), `speculative.proposed_draft_length` (default 0.0).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { LoadSnapshotV3 } from "@loadledger/schema"
 * const s = Schema.decodeUnknownSync(LoadSnapshotV3)({ queues: { waiting: 1, grammar: 0, paused: 0, retracted: 0, prealloc_ready: 4 } })
 * s.queues?.preallocReady // => 4
 * ```
 *
 * **When to use**: decoding the newest snapshots (speculative draft occupancy, prealloc-ready queue).
 *
 * @category LoadSnapshot
 * @since 0.1.0
 */
export const LoadSnapshotV3 = wireStruct({
  ...allWithDefaults(flatV3, flatV3Defaults),
  ...allWithDefaults(sectionsV3, nullSections)
})
/** @category LoadSnapshot @since 0.1.0 */
export type LoadSnapshotV3 = typeof LoadSnapshotV3.Type

/**
 * Any era's snapshot.
 *
 * **When to use**: code that handles every era alike.
 *
 * @category LoadSnapshot
 * @since 0.1.0
 */
export type LoadSnapshot = LoadSnapshotV1 | LoadSnapshotV2 | LoadSnapshotV3

const snapshotSchemas = {
  "shm-v1": LoadSnapshotV1,
  "shm-v2": LoadSnapshotV2,
  "shm-v3": LoadSnapshotV3
} as const

/**
 * The Schema of an era's `LoadSnapshot`.
 *
 * @example
 * ```ts
 * import { loadSnapshotSchema, LoadSnapshotV2 } from "@loadledger/schema"
 * loadSnapshotSchema("shm-v2") === LoadSnapshotV2 // => true
 * ```
 *
 * **When to use**: picking the schema from an era value at run time.
 *
 * @category LoadSnapshot
 * @since 0.1.0
 */
export const loadSnapshotSchema = <E extends LoadSnapshotEra>(era: E): (typeof snapshotSchemas)[E] =>
  snapshotSchemas[era]

const notLoads = new Set(["decodeMoments", "decodeMetricsWindows"])
const decoders = {
  "shm-v1": strictly(decodeWith(LoadSnapshotV1), notLoads),
  "shm-v2": strictly(decodeWith(LoadSnapshotV2), notLoads),
  "shm-v3": strictly(decodeWith(LoadSnapshotV3), notLoads)
}

/**
 * Decode one snapshot of the given era from `unknown` (defaults filled, unknown keys dropped). A
 * negative, non-finite or above-2^53 number is an `InvalidField` error at its wire path.
 *
 * @example
 * ```ts
 * import { decodeLoadSnapshot } from "@loadledger/schema"
 * const r = decodeLoadSnapshot("shm-v1")({ dp_rank: 0, queues: { waiting: 1 } })
 * r._tag === "Failure" && r.failure.path // => "$.queues.grammar"
 * const neg = decodeLoadSnapshot("shm-v2")({ dp_rank: 0, num_total_tokens: -1 })
 * neg._tag === "Failure" && neg.failure.path // => "$.num_total_tokens"
 * ```
 *
 * **When to use**: decoding one snapshot (e.g. a shared-memory slot) from `unknown`.
 *
 * @category LoadSnapshot
 * @since 0.1.0
 */
export const decodeLoadSnapshot =
  (era: LoadSnapshotEra) =>
  (input: unknown): Result.Result<LoadSnapshot, DecodeError> =>
    decoders[era](input)

/**
 * Fill an entry's missing flat fields and sections with the upstream defaults of `era` (what
 * SGLang's decoder does), keeping present values. The result passes the era's `LoadSnapshot` schema.
 *
 * @example
 * ```ts
 * import { snapshotOfEntry } from "@loadledger/schema"
 * const s = snapshotOfEntry({ dpRank: 1, numTotalTokens: 44 }, "shm-v2")
 * s.numTotalTokens // => 44
 * "numActiveTokens" in s && s.numActiveTokens // => 0
 * ```
 *
 * **When to use**: reproducing SGLang's own view of a `/v1/loads` entry (the golden vectors' `decoded`).
 *
 * @category LoadSnapshot
 * @since 0.1.0
 */
export const snapshotOfEntry = (entry: LoadEntry, era: LoadSnapshotEra): LoadSnapshot => {
  const defaults: Record<string, unknown> =
    era === "shm-v1"
      ? { ...flatV1Defaults, ...nullSections }
      : era === "shm-v2"
        ? { ...flatV2Defaults, ...nullSections }
        : { ...flatV3Defaults, ...nullSections }
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(defaults)) {
    const v = (entry as Record<string, unknown>)[k]
    out[k] = v === undefined ? defaults[k] : v
  }
  return out as unknown as LoadSnapshot
}
