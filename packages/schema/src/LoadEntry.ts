/**
 * One entry of a `/v1/loads` `loads` array as it is on the wire, per era, before defaults: every
 * flat field is an optional key (absent stays absent), sections are `section | null | absent`.
 *
 * Upstream: sgl-project/sglang `python/sglang/srt/managers/load_snapshot.py` (see `LoadSnapshot.ts`),
 * `v1_loads.py` (first era's `num_total_reqs`); the 2026 keys as in `LoadSnapshot.ts`.
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"
import { KvCapacitySchema } from "./internal/kvCapacity.js"
import { flatV1, flatV2, flatV3, newestFlat, sectionsV1, sectionsV3 } from "./internal/snapshotFields.js"
import { allOptional, wireStruct } from "./internal/wire.js"

/**
 * One entry of a `/v1/loads` `loads` array as it is on the wire, before defaults: every flat field
 * is an optional key (absent stays absent, so a ledger never invents a 0), sections are
 * `section | null | absent` and strict when present. The first `/v1/loads` era also had
 * `num_total_reqs` (running + waiting).
 *
 * **When to use**: through {@link V1LoadsResponse}; {@link snapshotOfEntry} fills the defaults.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { LoadEntryV1 } from "@loadledger/schema"
 * Schema.decodeUnknownSync(LoadEntryV1)({ dp_rank: 0, num_total_reqs: 7 }) // => { dpRank: 0, numTotalReqs: 7 }
 * ```
 *
 * @category LoadSnapshot
 * @since 0.1.0
 */
export const LoadEntryV1 = wireStruct({
  ...allOptional(flatV1),
  numTotalReqs: Schema.optionalKey(Schema.Int),
  ...allOptional(sectionsV1)
})
/** @category LoadSnapshot @since 0.1.0 */
export type LoadEntryV1 = typeof LoadEntryV1.Type

/**
 * A v2 `/v1/loads` entry before defaults (see {@link LoadEntryV1}).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { LoadEntryV2 } from "@loadledger/schema"
 * Schema.decodeUnknownSync(LoadEntryV2)({ dp_rank: 1, timestamp: 9.5 }) // => { dpRank: 1, timestamp: 9.5 }
 * ```
 *
 * @category LoadSnapshot
 * @since 0.1.0
 */
export const LoadEntryV2 = wireStruct({ ...allOptional(flatV2), ...allOptional(sectionsV1) })
/** @category LoadSnapshot @since 0.1.0 */
export type LoadEntryV2 = typeof LoadEntryV2.Type

/**
 * A v3 `/v1/loads` entry before defaults (see {@link LoadEntryV1}), with the 2026 keys
 * `num_prealloc_ready_tokens` (sglang#38065), `snapshot_monotonic_s` and the `kv_capacity` section
 * (optional: read when present, never defaulted).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { LoadEntryV3 } from "@loadledger/schema"
 * Schema.decodeUnknownSync(LoadEntryV3)({ decode_metrics_windows: null }) // => { decodeMetricsWindows: null }
 * ```
 *
 * @category LoadSnapshot
 * @since 0.1.0
 */
export const LoadEntryV3 = wireStruct({
  ...allOptional(flatV3),
  ...allOptional(newestFlat),
  ...allOptional(sectionsV3),
  kvCapacity: Schema.optionalKey(Schema.NullOr(KvCapacitySchema))
})
/** @category LoadSnapshot @since 0.1.0 */
export type LoadEntryV3 = typeof LoadEntryV3.Type

/** Any era's entry. @category LoadSnapshot @since 0.1.0 */
export type LoadEntry = LoadEntryV1 | LoadEntryV2 | LoadEntryV3
