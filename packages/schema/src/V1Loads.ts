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
import { Result, Schema } from "effect"
import { type DecodeError, decodeError, decodeWith } from "./DecodeError.js"
import { allOptional, wireStruct } from "./internal/wire.js"
import {
  type LoadEntry,
  LoadEntryV1,
  LoadEntryV2,
  LoadEntryV3,
  type LoadSnapshot,
  type LoadSnapshotEra,
  loadSnapshotSchema,
  snapshotOfEntry
} from "./LoadSnapshot.js"

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
  numAccelerators: Schema.optionalKey(Schema.Int)
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
 * `speculative.draft_occupancy_rate`) -> `shm-v3`; `accelerator`/`num_accelerators` or any v2 key
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
  const v3 = loads.some(
    (l) =>
      "decode_metrics_windows" in l ||
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

const decoders = {
  "pre-shm": decodeWith(V1LoadsResponsePreShm),
  "shm-v1": decodeWith(V1LoadsResponseShmV1),
  "shm-v2": decodeWith(V1LoadsResponseShmV2),
  "shm-v3": decodeWith(V1LoadsResponseShmV3)
}

/**
 * Decode a `/v1/loads` JSON body (already parsed) from `unknown`. The era is detected with
 * {@link detectV1LoadsEra} unless given. Fails with the wire path of the first bad field, e.g.
 * `$.loads[0].queues.grammar` when a present section lacks a required field.
 *
 * **When to use**: a router polling `/v1/loads`; see `decodeLedger` for the normalized rows.
 *
 * @example
 * ```ts
 * import { decodeV1Loads } from "@loadledger/schema"
 * const r = decodeV1Loads({ loads: [{ dp_rank: 1, num_running_reqs: 2 }] })
 * r._tag === "Success" && r.success.response.loads[0]?.numRunningReqs // => 2
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

/**
 * Parse the envelope's ISO-8601 timestamp to float epoch seconds (microseconds kept).
 * `undefined` when absent or not ISO-8601.
 *
 * @example
 * ```ts
 * import { isoToEpochSeconds } from "@loadledger/schema"
 * isoToEpochSeconds("2024-01-15T10:30:00+00:00") // => 1705314600
 * ```
 *
 * **When to use**: ageing a response that has no per-rank timestamp.
 *
 * @category V1Loads
 * @since 0.1.0
 */
export const isoToEpochSeconds = (iso: string | undefined): number | undefined => {
  if (iso === undefined) return undefined
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/.exec(iso)
  if (m === null) return undefined
  const ms = Date.parse(`${m[1]}${m[3] ?? "Z"}`)
  if (Number.isNaN(ms)) return undefined
  return ms / 1000 + (m[2] === undefined ? 0 : Number(`0${m[2]}`))
}

/**
 * What SGLang's `DPBudget.update_budget` consumes from a response, per entry: `dpRank`,
 * `timestampPresent` (false for `shm-v1` and `pre-shm` bodies, which carry no per-load timestamp),
 * `totalRequests` = running + waiting, `totalTokens` = `num_total_tokens`; and `timestamp`, the
 * per-load timestamp or, when absent, the envelope's (fallback).
 *
 * @example
 * ```ts
 * import { budgetInputs, decodeV1Loads } from "@loadledger/schema"
 * const r = decodeV1Loads({ timestamp: "2024-01-15T10:30:00+00:00", loads: [{ dp_rank: 0, num_running_reqs: 5, num_waiting_reqs: 2 }] })
 * r._tag === "Success" && budgetInputs(r.success)[0]
 * // => { dpRank: 0, timestampPresent: false, timestamp: 1705314600, totalRequests: 7, totalTokens: 0 }
 * ```
 *
 * **When to use**: feeding SGLang's DP budget model (`update_budget`) from a response.
 *
 * @category V1Loads
 * @since 0.1.0
 */
export const budgetInputs = (
  d: V1Loads
): ReadonlyArray<{
  readonly dpRank: number
  readonly timestampPresent: boolean
  readonly timestamp: number | undefined
  readonly totalRequests: number
  readonly totalTokens: number
}> => {
  const fallback = isoToEpochSeconds(d.response.timestamp)
  return (d.response.loads as ReadonlyArray<LoadEntry>).map((l) => ({
    dpRank: l.dpRank ?? 0,
    timestampPresent: l.timestamp !== undefined,
    timestamp: l.timestamp ?? fallback,
    totalRequests: (l.numRunningReqs ?? 0) + (l.numWaitingReqs ?? 0),
    totalTokens: l.numTotalTokens ?? 0
  }))
}

/**
 * The `include` tokens `to_dict` accepts.
 *
 * **When to use**: building or validating `include` query values.
 *
 * @example
 * ```ts
 * import { includeTokens } from "@loadledger/schema"
 * includeTokens.length // => 7
 * ```
 *
 * @category V1Loads
 * @since 0.1.0
 */
export const includeTokens = ["all", "core", "disagg", "lora", "memory", "queues", "spec"] as const

/**
 * Parse the `include` query value as v1_loads.py does: split on `,`, strip each token, make a set
 * (returned sorted); a missing or empty value gives `null` (everything). `"core,"` gives
 * `["", "core"]`, which {@link validateInclude} then rejects.
 *
 * @example
 * ```ts
 * import { parseInclude } from "@loadledger/schema"
 * parseInclude("queues, disagg") // => ["disagg", "queues"]
 * parseInclude(null) // => null
 * ```
 *
 * **When to use**: reproducing the server's parsing of `?include=`.
 *
 * @category V1Loads
 * @since 0.1.0
 */
export const parseInclude = (include: string | null | undefined): ReadonlyArray<string> | null => {
  if (include === null || include === undefined || include === "") return null
  const set = [...new Set(include.split(",").map((s) => s.trim()))].sort()
  return set.length === 0 ? null : set
}

const pyRepr = (s: string): string => `'${s.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`

/**
 * Validate an include set like `LoadSnapshot.to_dict`: `"all"` anywhere skips validation; any
 * other unknown token is an `InvalidInclude` error whose message reproduces upstream's
 * `Invalid include sections: {''}. Valid options: [...]`.
 *
 * @example
 * ```ts
 * import { validateInclude } from "@loadledger/schema"
 * validateInclude(["all", "bogus"])._tag // => "Success"
 * validateInclude(["", "core"])._tag // => "Failure"
 * ```
 *
 * **When to use**: rejecting an `include` value the server would reject.
 *
 * @category V1Loads
 * @since 0.1.0
 */
export const validateInclude = (
  include: ReadonlyArray<string> | null
): Result.Result<ReadonlyArray<string> | null, DecodeError> => {
  if (include === null || include.includes("all")) return Result.succeed(include)
  const bad = include.filter((t) => !(includeTokens as ReadonlyArray<string>).includes(t)).sort()
  if (bad.length === 0) return Result.succeed(include)
  return Result.fail(
    decodeError(
      "InvalidInclude",
      `Invalid include sections: {${bad.map(pyRepr).join(", ")}}. Valid options: [${includeTokens.map(pyRepr).join(", ")}]`
    )
  )
}

const coreKeysV1 = [
  "dp_rank",
  "num_running_reqs",
  "num_waiting_reqs",
  "num_waiting_uncached_tokens",
  "num_used_tokens",
  "num_total_tokens",
  "max_total_num_tokens",
  "max_running_requests",
  "token_usage",
  "gen_throughput",
  "cache_hit_rate",
  "utilization"
]
const coreKeysV2 = [
  "timestamp",
  ...coreKeysV1.slice(0, 6),
  "num_active_tokens",
  ...coreKeysV1.slice(6),
  "total_prefill_uncached_tokens",
  "total_prefill_busy_us",
  "decode_moments"
]

/**
 * The keys `to_dict` always emits (`_CORE_KEYS`): v1 lists 12 flat fields and **not** `timestamp`;
 * v2 and v3 list every flat field, `timestamp` included.
 *
 * @example
 * ```ts
 * import { jsonCoreKeys } from "@loadledger/schema"
 * jsonCoreKeys("shm-v1").includes("timestamp") // => false
 * ```
 *
 * **When to use**: reproducing `to_dict` output per era.
 *
 * @category V1Loads
 * @since 0.1.0
 */
export const jsonCoreKeys = (era: LoadSnapshotEra): ReadonlyArray<string> =>
  era === "shm-v1" ? coreKeysV1 : era === "shm-v2" ? coreKeysV2 : [...coreKeysV2, "decode_metrics_windows"]

const sectionTokens = [
  ["memory", "memory"],
  ["spec", "speculative"],
  ["lora", "lora"],
  ["disagg", "disaggregation"],
  ["queues", "queues"]
] as const

/**
 * Reproduce `LoadSnapshot.to_dict(include)`: the JSON object `/v1/loads` emits for one snapshot.
 * Core keys are always emitted (even for `include=memory`); `["core"]` gives only them; a section
 * is emitted when it is non-null and either `include` is null, contains `"all"`, or contains its
 * token (`memory`, `spec`, `lora`, `disagg`, `queues`).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { LoadSnapshotV1, toDict } from "@loadledger/schema"
 * const s = Schema.decodeUnknownSync(LoadSnapshotV1)({ dp_rank: 2, queues: { waiting: 1, grammar: 0, paused: 0, retracted: 0 } })
 * const r = toDict(s, ["core"], "shm-v1")
 * r._tag === "Success" && "queues" in r.success // => false
 * ```
 *
 * **When to use**: a simulator or test double that serves `/v1/loads` like SGLang.
 *
 * @category V1Loads
 * @since 0.1.0
 */
export const toDict = (
  snapshot: LoadSnapshot,
  include: ReadonlyArray<string> | null,
  era: LoadSnapshotEra
): Result.Result<Record<string, unknown>, DecodeError> =>
  Result.flatMap(validateInclude(include), (inc) => {
    const wire = Schema.encodeUnknownSync(loadSnapshotSchema(era))(snapshot) as Record<string, unknown>
    const out: Record<string, unknown> = {}
    for (const k of jsonCoreKeys(era)) out[k] = wire[k]
    const all = inc === null || inc.includes("all")
    for (const [token, key] of sectionTokens) {
      if (wire[key] !== null && wire[key] !== undefined && (all || inc.includes(token))) out[key] = wire[key]
    }
    return Result.succeed(out)
  })

/**
 * The `dp_rank` query filter of `/v1/loads`: `null` keeps every snapshot; a rank outside `[0, N)`
 * (N = number of snapshots held) gives `[]`.
 *
 * @example
 * ```ts
 * import { selectRank } from "@loadledger/schema"
 * selectRank([{ dpRank: 0 }, { dpRank: 1 }], 9) // => []
 * ```
 *
 * **When to use**: serving `?dp_rank=` like SGLang.
 *
 * @category V1Loads
 * @since 0.1.0
 */
export const selectRank = <S extends { readonly dpRank: number }>(
  snapshots: ReadonlyArray<S>,
  dpRank: number | null
): ReadonlyArray<S> =>
  dpRank === null
    ? snapshots
    : dpRank < 0 || dpRank >= snapshots.length
      ? []
      : snapshots.filter((s) => s.dpRank === dpRank)
