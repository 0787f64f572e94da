/**
 * SGLang model gateway (SMG; formerly sglang's `sgl-router`, now smg-project/smg) load reports as
 * ledger rows: its fleet view `GET /get_loads` (JSON) and its Prometheus page's `smg_engine_*`
 * gauges. Rows are keyed by (worker, dpRank): every worker has its own ranks 0..n.
 *
 * Upstream (smg-project/smg at f8daa8835a8b4419b53125a837aaab2b3ce895c3, read to learn the wire
 * form; no code copied): `crates/protocols/src/worker.rs` (`WorkerLoadsResult`'s `IntoResponse`:
 * `{"workers": [{"worker", "load", "details"?}]}`; `WorkerLoadResponse` / `SchedulerLoadSnapshot`,
 * serde defaults: every count present, 0 when not reported), `model_gateway/src/worker/manager.rs`
 * (`get_all_worker_loads`: `load` is the used-token sum over ranks, -1 when the worker gave no
 * absolute tokens), `model_gateway/src/worker/monitor.rs` (`single_rank`: a snapshot built from a
 * worker's `/metrics` has no absolute tokens, `max_total_num_tokens` 0),
 * `crates/grpc_client/src/sglang_scheduler.rs` (`prefill_queue_reqs` = prealloc + inflight,
 * `decode_queue_reqs` = prealloc + transfer + retracted) and
 * `model_gateway/src/observability/metrics.rs` (`record_engine_load`: `smg_engine_*{worker, model,
 * dp_rank}`, PD gauges `{worker, role, dp_rank}`; `remove_engine_load_metrics`: -1 for a removed
 * worker).
 *
 * @since 0.7.0
 */
import * as Result from "effect/Result"
import { type DecodeError, decodeError } from "./DecodeError.js"
import { isoToEpochSeconds } from "./IsoTimestamp.js"
import { type GatewaySpec, pageHasPrefix, rankLabel, rowsOfGatewayPage } from "./internal/gatewayPage.js"
import type { Field, Mutable } from "./internal/ledgerRows.js"
import type { LedgerNotice } from "./LedgerNotice.js"
import type { RankLoad, RanklessLoad } from "./RankLoad.js"

const isObj = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

// snapshot key -> ledger fields; `kept` fields are readings even at 0 in a ratio-only snapshot
const snapshotFields: ReadonlyArray<readonly [string, ReadonlyArray<Field>, boolean]> = [
  ["num_running_reqs", ["numRunningReqs"], true],
  ["num_waiting_reqs", ["numWaitingReqs"], true],
  ["num_waiting_uncached_tokens", ["numWaitingUncachedTokens"], false],
  ["num_used_tokens", ["numUsedTokens"], false],
  ["max_total_num_tokens", ["maxTotalNumTokens"], false],
  ["token_usage", ["tokenUsage", "kvCacheUsage"], true],
  ["gen_throughput", ["genThroughput"], false],
  ["cache_hit_rate", ["cacheHitRate"], false],
  ["utilization", ["utilization"], false],
  ["max_running_requests", ["maxRunningRequests"], false],
  ["prefill_queue_reqs", ["numPrefillQueueReqs"], true],
  ["decode_queue_reqs", ["numDecodeQueueReqs"], true]
]
const modelledKeys: ReadonlySet<string> = new Set(["dp_rank", ...snapshotFields.map(([k]) => k)])

/**
 * Decode an SMG `GET /get_loads` body (parsed JSON) to ledger rows, pushing notices and rank-less
 * loads.
 *
 * **Rows**: one per (`worker`, `details.loads[i].dp_rank`), `timestamp` from `details.timestamp`
 * (RFC 3339). Keys: `num_running_reqs`, `num_waiting_reqs`, `num_waiting_uncached_tokens`,
 * `num_used_tokens`, `max_total_num_tokens`, `token_usage` (-> `tokenUsage` and `kvCacheUsage`),
 * `gen_throughput`, `cache_hit_rate`, `utilization`, `max_running_requests`, `prefill_queue_reqs`
 * -> `numPrefillQueueReqs`, `decode_queue_reqs` -> `numDecodeQueueReqs`. `num_total_reqs`,
 * `kv_transfer_latency_ms`, `kv_transfer_speed_gb_s`, `disagg_mode` and any other key: an
 * `UnknownField` notice (not modelled).
 *
 * **Absent is absent, though upstream writes 0**: the gateway serialises every count, 0 when the
 * worker did not report it. A worker whose ranks all have `max_total_num_tokens` 0 sent a
 * ratio-only snapshot (built from its `/metrics`): its token counts are absent, and of its other
 * fields only running, waiting, `token_usage` and the PD queues are read at 0 (a non-zero value is
 * read). `num_waiting_uncached_tokens` 0 with requests waiting is absent (upstream: "0 when the
 * backend does not report it").
 *
 * **A worker without details** (the gateway got no load: `load` -1, or an older gateway's
 * `{worker, load}`): a rank-less load for the worker, `unknown` `unreachable` when `load` is
 * negative, else `numUsedTokens` = `load` (the worker's sum over ranks).
 *
 * **Errors** (`InvalidField` naming the path, e.g. `$.workers[1].details.loads[0].dp_rank`): a body
 * without a `workers` list, an entry without a string `worker`, a non-number count, a bad rank.
 *
 * **When to use**: through `decodeLedger(text, "smg-loads")` (or `auto`, which detects a
 * `workers` list of `worker` entries).
 *
 * @example
 * ```ts
 * import { decodeSmgLoads } from "@loadledger/schema"
 * const body = { workers: [{ worker: "http://a:8000", load: 10, details: { timestamp: "", dp_rank_count: 1, loads: [{ dp_rank: 0, num_running_reqs: 2, num_waiting_reqs: 0, num_used_tokens: 10, max_total_num_tokens: 100, token_usage: 0.1 }] } }] }
 * const r = decodeSmgLoads(body, [], [])
 * r._tag === "Success" && r.success // => [{ dpRank: 0, worker: "http://a:8000", numRunningReqs: 2, numWaitingReqs: 0, numUsedTokens: 10, maxTotalNumTokens: 100, tokenUsage: 0.1, kvCacheUsage: 0.1 }]
 * ```
 *
 * @category SMG
 * @since 0.7.0
 */
export const decodeSmgLoads = (
  doc: unknown,
  notices: Array<LedgerNotice>,
  rankless: Array<RanklessLoad>
): Result.Result<Array<RankLoad>, DecodeError> => {
  const bad = (path: string, message: string) => Result.fail(decodeError("InvalidField", message, { path }))
  if (!isObj(doc) || !Array.isArray(doc["workers"])) return bad("$.workers", "Expected a list of workers")
  const unknownKeys = new Map<string, number>()
  const rows: Array<RankLoad> = []
  const workers = doc["workers"] as ReadonlyArray<unknown>
  for (let i = 0; i < workers.length; i++) {
    const at = `$.workers[${i}]`
    const w = workers[i]
    if (!isObj(w)) return bad(at, "Expected an object")
    const worker = w["worker"]
    if (typeof worker !== "string") return bad(`${at}.worker`, "Expected a string")
    const load = w["load"]
    if (load !== undefined && typeof load !== "number") return bad(`${at}.load`, "Expected number")
    const details = w["details"]
    if (details === undefined || details === null) {
      if (load === undefined) return bad(`${at}.load`, "Expected number (no details either)")
      rankless.push(
        load < 0
          ? {
              worker,
              unknown: { reason: "unreachable", message: `${at}.load is ${load}: the gateway got no load` }
            }
          : { worker, numUsedTokens: load }
      )
      continue
    }
    if (!isObj(details)) return bad(`${at}.details`, "Expected an object or null")
    const loads = details["loads"]
    if (!Array.isArray(loads)) return bad(`${at}.details.loads`, "Expected a list")
    const ts = details["timestamp"]
    if (ts !== undefined && typeof ts !== "string") return bad(`${at}.details.timestamp`, "Expected a string")
    const timestamp = isoToEpochSeconds(ts === "" ? undefined : ts)
    const absolute = loads.some(
      (l) => isObj(l) && typeof l["max_total_num_tokens"] === "number" && l["max_total_num_tokens"] > 0
    )
    for (let j = 0; j < loads.length; j++) {
      const r = snapshotRow(loads[j], `${at}.details.loads[${j}]`, worker, absolute, unknownKeys)
      if ("path" in r) return bad(r.path, r.message)
      if (timestamp !== undefined) r.timestamp = timestamp
      rows.push(r)
    }
  }
  for (const [field, entries] of unknownKeys)
    notices.push({
      _tag: "UnknownField",
      field,
      entries,
      message: `${field} (${entries} rank snapshot(s)) is not modelled by the ledger`
    })
  return Result.succeed(rows)
}

/** One snapshot as a row, or the bad field's path and message; counts the keys not modelled. */
const snapshotRow = (
  s: unknown,
  at: string,
  worker: string,
  absolute: boolean,
  unknownKeys: Map<string, number>
): Mutable | { readonly path: string; readonly message: string } => {
  if (!isObj(s)) return { path: at, message: "Expected an object" }
  const rank = s["dp_rank"]
  if (typeof rank !== "number" || !Number.isInteger(rank) || rank < 0)
    return { path: `${at}.dp_rank`, message: "Expected a non-negative integer rank" }
  const row: Mutable = { dpRank: rank, worker }
  for (const [key, fields, kept] of snapshotFields) {
    const v = s[key]
    if (v === undefined || v === null) continue
    if (typeof v !== "number") return { path: `${at}.${key}`, message: "Expected number" }
    if (!absolute && (key === "num_used_tokens" || key === "max_total_num_tokens")) continue
    if (!absolute && !kept && v === 0) continue
    if (key === "num_waiting_uncached_tokens" && v === 0 && (s["num_waiting_reqs"] as number) > 0) continue
    for (const f of fields) row[f] = v
  }
  for (const k of Object.keys(s)) if (!modelledKeys.has(k)) unknownKeys.set(k, (unknownKeys.get(k) ?? 0) + 1)
  return row
}

/**
 * Whether a parsed JSON document is an SMG `/get_loads` body: an object whose `workers` list's
 * first entry has a string `worker`.
 *
 * **When to use**: `decodeLedger`'s `auto` detection.
 *
 * @example
 * ```ts
 * import { looksLikeSmgLoads } from "@loadledger/schema"
 * looksLikeSmgLoads({ workers: [{ worker: "http://a:8000", load: -1 }] }) // => true
 * looksLikeSmgLoads({ loads: [] }) // => false
 * ```
 *
 * @category SMG
 * @since 0.7.0
 */
export const looksLikeSmgLoads = (doc: unknown): boolean =>
  isObj(doc) &&
  Array.isArray(doc["workers"]) &&
  isObj(doc["workers"][0]) &&
  typeof (doc["workers"][0] as Record<string, unknown>)["worker"] === "string"

const smgSpec: GatewaySpec = {
  source: "SGLang model gateway (SMG)",
  prefixes: ["smg_"],
  fields: new Map<string, ReadonlyArray<Field>>([
    ["smg_engine_running_requests", ["numRunningReqs"]],
    ["smg_engine_waiting_requests", ["numWaitingReqs"]],
    ["smg_engine_token_usage", ["tokenUsage", "kvCacheUsage"]],
    ["smg_engine_gen_throughput", ["genThroughput"]],
    ["smg_engine_cache_hit_rate", ["cacheHitRate"]],
    ["smg_engine_pd_prefill_queue_reqs", ["numPrefillQueueReqs"]],
    ["smg_engine_pd_decode_queue_reqs", ["numDecodeQueueReqs"]]
  ]),
  identity: (labels) => {
    const dpRank = rankLabel(labels, "dp_rank")
    if (typeof dpRank === "string") return dpRank
    return { worker: labels["worker"], dpRank }
  },
  removedSentinel: -1
}

/**
 * Decode an SMG Prometheus page (its metrics port, default 29000) to ledger rows, pushing notices
 * and rank-less loads.
 *
 * **Rows**: one per (`worker`, `dp_rank`) label pair of the `smg_engine_*` gauges the gateway
 * re-exports from its load poll: `smg_engine_running_requests` -> `numRunningReqs`,
 * `_waiting_requests` -> `numWaitingReqs`, `_token_usage` -> `tokenUsage` and `kvCacheUsage`,
 * `_gen_throughput` -> `genThroughput`, `_cache_hit_rate` -> `cacheHitRate`,
 * `smg_engine_pd_prefill_queue_reqs` / `_decode_queue_reqs` -> `numPrefillQueueReqs` /
 * `numDecodeQueueReqs`. The `model` and `role` labels are not identity: the same gauge of one
 * (worker, rank) under two models with two values is `AmbiguousSeries`. A sample of -1 is
 * upstream's mark of a removed worker: skipped, with a notice. Every other `smg_*` family: an
 * `UnknownSeries` notice.
 *
 * **Gotcha**: upstream sets these gauges from a snapshot whose unreported counts are 0, so a 0 on
 * this page may mean "not reported" (prefer `/get_loads`, which {@link decodeSmgLoads} reads
 * with that rule).
 *
 * **Errors**: a syntax error names its line; a `dp_rank` that is no integer is `InvalidField` on
 * its line; a page with no modelled gauge is `UnknownSeries`.
 *
 * **When to use**: through `decodeLedger(text, "smg-metrics")` (or `auto`, which detects
 * `smg_` names).
 *
 * @example
 * ```ts
 * import { decodeSmgMetrics } from "@loadledger/schema"
 * const page = 'smg_engine_running_requests{worker="http://a:1",model="m",dp_rank="0"} 3\nsmg_engine_running_requests{worker="http://b:1",model="m",dp_rank="0"} 5\n'
 * const r = decodeSmgMetrics(page, [], [])
 * r._tag === "Success" && r.success // => [{ dpRank: 0, worker: "http://a:1", numRunningReqs: 3 }, { dpRank: 0, worker: "http://b:1", numRunningReqs: 5 }]
 * ```
 *
 * @category SMG
 * @since 0.7.0
 */
export const decodeSmgMetrics = (
  text: string,
  notices: Array<LedgerNotice>,
  rankless: Array<RanklessLoad>
): Result.Result<Array<RankLoad>, DecodeError> => rowsOfGatewayPage(text, smgSpec, notices, rankless)

/**
 * Whether any metric name of a text is an SMG series (`smg_` prefix at a line start).
 *
 * **When to use**: `decodeLedger`'s `auto` detection.
 *
 * @example
 * ```ts
 * import { looksLikeSmgMetrics } from "@loadledger/schema"
 * looksLikeSmgMetrics("# TYPE smg_engine_running_requests gauge\n") // => true
 * looksLikeSmgMetrics("sglang:num_running_reqs 1\n") // => false
 * ```
 *
 * @category SMG
 * @since 0.7.0
 */
export const looksLikeSmgMetrics = (text: string): boolean => pageHasPrefix(text, "smg_")
