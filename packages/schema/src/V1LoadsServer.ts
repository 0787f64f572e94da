/**
 * The server side of SGLang's `/v1/loads` as a conformance reference: the `include` query
 * (`parseInclude`, `validateInclude`), `LoadSnapshot.to_dict` (`toDict`, `jsonCoreKeys`), the
 * `dp_rank` filter (`selectRank`), and what `DPBudget.update_budget` reads (`budgetInputs`).
 * These reproduce upstream, defaults included; a router reads `decodeLedger` rows instead.
 *
 * Upstream: sgl-project/sglang `python/sglang/srt/entrypoints/v1_loads.py` @ 0564b5215b333749d722348c3b3d9b92c3de8c44,
 * `python/sglang/srt/managers/load_snapshot.py` @ 025177e4 / 16739a60.
 *
 * @since 0.3.0
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { type DecodeError, decodeError } from "./DecodeError.js"
import { isoToEpochSeconds } from "./IsoTimestamp.js"
import type { LoadEntry } from "./LoadEntry.js"
import { type LoadSnapshot, type LoadSnapshotEra, loadSnapshotSchema } from "./LoadSnapshot.js"
import type { V1Loads } from "./V1Loads.js"

/** `LoadSnapshot`'s dataclass default for a missing key: reproduced for conformance only, never in the ledger. */
const upstreamDefault = (v: number | undefined): number => (v === undefined ? 0 : v)

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
 * **When to use**: feeding SGLang's DP budget model (`update_budget`) from a response, for
 * conformance with upstream only.
 *
 * **Gotchas**: this reproduces upstream's dataclass defaults (a missing `dp_rank` is rank 0, a
 * missing count is 0), which `decodeLedger` deliberately does not: route on ledger rows.
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
    dpRank: upstreamDefault(l.dpRank),
    timestampPresent: l.timestamp !== undefined,
    timestamp: l.timestamp ?? fallback,
    totalRequests: upstreamDefault(l.numRunningReqs) + upstreamDefault(l.numWaitingReqs),
    totalTokens: upstreamDefault(l.numTotalTokens)
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

// upstream's `_CORE_KEYS` in the order `to_dict` writes them (what the server emits), not the set
// of gauges a reader takes from an entry (`internal/v1LoadsKeys.ts`): v1 has no `timestamp`, v2
// adds `num_active_tokens` mid-list
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
