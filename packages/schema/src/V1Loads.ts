/**
 * SGLang's `/v1/loads` HTTP response in each of its eras, the `include` query semantics of
 * `LoadSnapshot.to_dict`, and what the DP budget consumes from it.
 *
 * Upstream: sgl-project/sglang `python/sglang/srt/entrypoints/v1_loads.py` @ 5b49fe62 (first era:
 * `dp_rank_count`, `aggregate`, per-load `num_total_reqs`), the shared-memory era (PR #26348,
 * `{timestamp, version, loads}`), and @ 0564b5215b333749d722348c3b3d9b92c3de8c44 (adds
 * `accelerator`, `num_accelerators`); `load_snapshot.py` @ 025177e4 / 16739a60 for `to_dict`.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { type DecodeError, decodeWith } from "./DecodeError.js"
import { strictly } from "./internal/numbers.js"
import { allOptional, wireStruct } from "./internal/wire.js"
import { type LoadEntry, LoadEntryV1, LoadEntryV2, LoadEntryV3 } from "./LoadEntry.js"
import { type LoadSnapshot, type LoadSnapshotEra, snapshotOfEntry } from "./LoadSnapshot.js"

/**
 * The `/v1/loads` eras: `pre-shm` (first version), `shm-v1` (shared-memory snapshots),
 * `shm-v2` / `shm-v3` (newest envelope with `accelerator`, `num_accelerators`).
 *
 * **When to use**: forcing an era in `decodeV1Loads` instead of detecting it.
 *
 * @category V1Loads
 * @since 0.1.0
 */
export type V1LoadsEra = "pre-shm" | LoadSnapshotEra

/**
 * The first era's `aggregate` object (every key optional: the docs example and PR #16976 differ).
 *
 * **When to use**: reading the first era's pod totals (prefer per-rank rows).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { V1LoadsAggregate } from "@loadledger/schema"
 * Schema.decodeUnknownSync(V1LoadsAggregate)({ total_reqs: 7 }) // => { totalReqs: 7 }
 * ```
 *
 * @category V1Loads
 * @since 0.1.0
 */
export const V1LoadsAggregate = wireStruct(
  allOptional({
    totalRunningReqs: Schema.Int,
    totalWaitingReqs: Schema.Int,
    totalReqs: Schema.Int,
    totalUsedTokens: Schema.Int,
    totalTokens: Schema.Int,
    avgTokenUsage: Schema.Finite,
    avgThroughput: Schema.Finite,
    avgUtilization: Schema.Finite
  })
)
/** @category V1Loads @since 0.1.0 */
export type V1LoadsAggregate = typeof V1LoadsAggregate.Type

const envelope = {
  /** ISO-8601 UTC string (`datetime.now(timezone.utc).isoformat()`). */
  timestamp: Schema.optionalKey(Schema.String),
  version: Schema.optionalKey(Schema.String)
}

/**
 * First-era response (v1_loads.py @ 5b49fe62, PR #16976): `{timestamp, version, dp_rank_count,
 * loads[] (with num_total_reqs, None values dropped), aggregate}`.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { V1LoadsResponsePreShm } from "@loadledger/schema"
 * Schema.decodeUnknownSync(V1LoadsResponsePreShm)({ dp_rank_count: 1, loads: [{ dp_rank: 0, num_total_reqs: 7 }] }).dpRankCount // => 1
 * ```
 *
 * **When to use**: servers of the first `/v1/loads` version (before PR #26348).
 *
 * @category V1Loads
 * @since 0.1.0
 */
export const V1LoadsResponsePreShm = wireStruct({
  ...envelope,
  dpRankCount: Schema.optionalKey(Schema.Int),
  loads: Schema.Array(LoadEntryV1),
  aggregate: Schema.optionalKey(V1LoadsAggregate)
})
/** @category V1Loads @since 0.1.0 */
export type V1LoadsResponsePreShm = typeof V1LoadsResponsePreShm.Type

/**
 * Shared-memory-era response (after PR #26348 "remove aggregate and dp_rank_count"):
 * `{timestamp, version, loads[]}` with v1 entries (no per-load `timestamp` in the JSON).
 *
 * **When to use**: servers between PR #26348 and the accelerator fields.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { V1LoadsResponseShmV1 } from "@loadledger/schema"
 * Schema.decodeUnknownSync(V1LoadsResponseShmV1)({ version: "0.5.12", loads: [] }).version // => "0.5.12"
 * ```
 *
 * @category V1Loads
 * @since 0.1.0
 */
export const V1LoadsResponseShmV1 = wireStruct({ ...envelope, loads: Schema.Array(LoadEntryV1) })
/** @category V1Loads @since 0.1.0 */
export type V1LoadsResponseShmV1 = typeof V1LoadsResponseShmV1.Type

const newest = {
  ...envelope,
  accelerator: Schema.optionalKey(Schema.String),
  numAccelerators: Schema.optionalKey(Schema.Int),
  /** 2026: the server's monotonic clock at response time (pairs with `snapshot_monotonic_s`). */
  serverMonotonicS: Schema.optionalKey(Schema.Finite)
}

/**
 * Newest response (v1_loads.py @ 0564b521): `{timestamp, version, accelerator, num_accelerators,
 * loads[]}` with v2 entries (per-load `timestamp` float epoch seconds).
 *
 * **When to use**: current servers (v2 snapshots).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { V1LoadsResponseShmV2 } from "@loadledger/schema"
 * Schema.decodeUnknownSync(V1LoadsResponseShmV2)({ num_accelerators: 8, loads: [] }).numAccelerators // => 8
 * ```
 *
 * @category V1Loads
 * @since 0.1.0
 */
export const V1LoadsResponseShmV2 = wireStruct({ ...newest, loads: Schema.Array(LoadEntryV2) })
/** @category V1Loads @since 0.1.0 */
export type V1LoadsResponseShmV2 = typeof V1LoadsResponseShmV2.Type

/**
 * Newest response with v3 entries.
 *
 * **When to use**: current servers with v3 snapshots.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { V1LoadsResponseShmV3 } from "@loadledger/schema"
 * Schema.decodeUnknownSync(V1LoadsResponseShmV3)({ accelerator: "NVIDIA H200", loads: [] }).accelerator // => "NVIDIA H200"
 * ```
 *
 * @category V1Loads
 * @since 0.1.0
 */
export const V1LoadsResponseShmV3 = wireStruct({ ...newest, loads: Schema.Array(LoadEntryV3) })
/** @category V1Loads @since 0.1.0 */
export type V1LoadsResponseShmV3 = typeof V1LoadsResponseShmV3.Type

/**
 * A decoded `/v1/loads` response and the era it was decoded as.
 *
 * **When to use**: switch on `era` to read era-specific envelope keys.
 *
 * @category V1Loads
 * @since 0.1.0
 */
export type V1Loads =
  | { readonly era: "pre-shm"; readonly response: V1LoadsResponsePreShm }
  | { readonly era: "shm-v1"; readonly response: V1LoadsResponseShmV1 }
  | { readonly era: "shm-v2"; readonly response: V1LoadsResponseShmV2 }
  | { readonly era: "shm-v3"; readonly response: V1LoadsResponseShmV3 }

const isObj = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Guess the era of a raw `/v1/loads` body from its keys: `dp_rank_count`, `aggregate` or
 * `num_total_reqs` -> `pre-shm`; any v3 key (`decode_metrics_windows`, `queues.prealloc_ready`,
 * `speculative.draft_occupancy_rate`, and the 2026 keys `num_prealloc_ready_tokens`,
 * `snapshot_monotonic_s`, `kv_capacity`, envelope `server_monotonic_s`) -> `shm-v3`; `accelerator`/`num_accelerators` or any v2 key
 * -> `shm-v2`; otherwise `shm-v1`.
 *
 * @example
 * ```ts
 * import { detectV1LoadsEra } from "@loadledger/schema"
 * detectV1LoadsEra({ dp_rank_count: 1, loads: [] }) // => "pre-shm"
 * detectV1LoadsEra({ accelerator: "NVIDIA H200", loads: [] }) // => "shm-v2"
 * ```
 *
 * **When to use**: a client that talks to servers of unknown versions.
 *
 * @category V1Loads
 * @since 0.1.0
 */
export const detectV1LoadsEra = (raw: unknown): V1LoadsEra => {
  if (!isObj(raw)) return "shm-v1"
  const loads = Array.isArray(raw["loads"]) ? raw["loads"].filter(isObj) : []
  if ("dp_rank_count" in raw || "aggregate" in raw || loads.some((l) => "num_total_reqs" in l))
    return "pre-shm"
  const v3 =
    "server_monotonic_s" in raw ||
    loads.some(
      (l) =>
        "decode_metrics_windows" in l ||
        "num_prealloc_ready_tokens" in l ||
        "snapshot_monotonic_s" in l ||
        "kv_capacity" in l ||
        (isObj(l["queues"]) && "prealloc_ready" in l["queues"]) ||
        (isObj(l["speculative"]) && "draft_occupancy_rate" in l["speculative"])
    )
  if (v3) return "shm-v3"
  const v2keys = [
    "num_active_tokens",
    "total_prefill_uncached_tokens",
    "total_prefill_busy_us",
    "decode_moments"
  ]
  if ("accelerator" in raw || "num_accelerators" in raw || loads.some((l) => v2keys.some((k) => k in l)))
    return "shm-v2"
  return "shm-v1"
}

/** Opaque or signed wire values the number rules do not apply to. */
const notLoads = new Set(["decodeMoments", "decodeMetricsWindows"])
const decoders = {
  "pre-shm": strictly(decodeWith(V1LoadsResponsePreShm), notLoads),
  "shm-v1": strictly(decodeWith(V1LoadsResponseShmV1), notLoads),
  "shm-v2": strictly(decodeWith(V1LoadsResponseShmV2), notLoads),
  "shm-v3": strictly(decodeWith(V1LoadsResponseShmV3), notLoads)
}

/**
 * Decode a `/v1/loads` JSON body (already parsed) from `unknown`. The era is detected with
 * {@link detectV1LoadsEra} unless given. Fails with the wire path of the first bad field, e.g.
 * `$.loads[0].queues.grammar` when a present section lacks a required field, or
 * `$.loads[1].num_running_reqs` for a negative, non-finite or above-2^53 number (the -1 of
 * sglang#32070 is an error here; `decodeLedger` turns it into an `unknown` row instead).
 * `decode_metrics_windows` is opaque JSON of at most 512 levels, checked in linear time.
 *
 * **When to use**: a router polling `/v1/loads`; see `decodeLedger` for the normalized rows.
 *
 * @example
 * ```ts
 * import { decodeV1Loads } from "@loadledger/schema"
 * const r = decodeV1Loads({ loads: [{ dp_rank: 1, num_running_reqs: 2 }] })
 * r._tag === "Success" && r.success.response.loads[0]?.numRunningReqs // => 2
 * const bad = decodeV1Loads({ loads: [{ dp_rank: 0, num_running_reqs: -1 }] })
 * bad._tag === "Failure" && bad.failure.path // => "$.loads[0].num_running_reqs"
 * ```
 *
 * @category V1Loads
 * @since 0.1.0
 */
export const decodeV1Loads = (input: unknown, era?: V1LoadsEra): Result.Result<V1Loads, DecodeError> => {
  const e = era ?? detectV1LoadsEra(input)
  return Result.map(decoders[e](input), (response) => ({ era: e, response }) as V1Loads)
}

/**
 * The snapshots SGLang's own decoder would build from a response: every flat field (missing ->
 * default), sections null when missing. `pre-shm` responses use the `shm-v1` field list.
 *
 * @example
 * ```ts
 * import { decodeV1Loads, v1LoadsSnapshots } from "@loadledger/schema"
 * const r = decodeV1Loads({ loads: [{ dp_rank: 1 }] })
 * r._tag === "Success" && v1LoadsSnapshots(r.success)[0]?.timestamp // => 0
 * ```
 *
 * **When to use**: comparing with SGLang's own decoder, or feeding code that needs full snapshots.
 *
 * @category V1Loads
 * @since 0.1.0
 */
export const v1LoadsSnapshots = (d: V1Loads): ReadonlyArray<LoadSnapshot> => {
  const era: LoadSnapshotEra = d.era === "pre-shm" ? "shm-v1" : d.era
  return (d.response.loads as ReadonlyArray<LoadEntry>).map((l) => snapshotOfEntry(l, era))
}
