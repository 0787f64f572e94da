/**
 * NVIDIA Dynamo load reports as ledger rows: the `kv_metrics` load events workers and the KV
 * router publish on the event plane (JSON, one per line as `nats sub` prints them), and the
 * frontend's per-worker gauges (`dynamo_frontend_worker_*` on its `/metrics`).
 *
 * Upstream (ai-dynamo/dynamo, read to learn the wire form; no code copied):
 * `lib/kv-router/src/protocols.rs` at cfa22544b95be056ab4f4b9b9e1762d8b56f6e59 (`ActiveLoad`:
 * `worker_id` u64, `dp_rank` defaulting to 0, `active_decode_blocks`, `active_prefill_tokens`,
 * `kv_used_blocks` as options; the same file of 2025 releases: `ForwardPassMetrics` with
 * `worker_stats` {`data_parallel_rank`, `request_active_slots`, `request_total_slots`,
 * `num_requests_waiting`} and `kv_stats` {`kv_active_blocks`, `kv_total_blocks`,
 * `gpu_cache_usage_perc`, `gpu_prefix_cache_hit_rate`}, sent as `{worker_id, data}`), the worker
 * metrics publisher of 2026 (`num_waiting_reqs` added to `ActiveLoad`), and
 * `docs/observability/metrics.md` at c013c0462159cddafd96682c5ae51e5c9deaa16c (the per-worker
 * gauges and their `worker_id`, `dp_rank`, `worker_type` labels).
 *
 * @since 0.7.0
 */
import * as Result from "effect/Result"
import { type DecodeError, decodeError } from "./DecodeError.js"
import { type GatewaySpec, pageHasPrefix, rankLabel, rowsOfGatewayPage } from "./internal/gatewayPage.js"
import { parseJson } from "./internal/json.js"
import type { Field, Mutable } from "./internal/ledgerRows.js"
import type { LedgerNotice } from "./LedgerNotice.js"
import type { RankLoad, RanklessLoad } from "./RankLoad.js"

const isObj = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

// (wire path below an event, ledger field)
const activeLoad: ReadonlyArray<readonly [string, Field]> = [
  ["active_decode_blocks", "activeDecodeBlocks"],
  ["active_prefill_tokens", "activePrefillTokens"],
  ["kv_used_blocks", "kvUsedBlocks"],
  ["num_waiting_reqs", "numWaitingReqs"]
]
const forwardPass: ReadonlyArray<readonly [string, Field]> = [
  ["data.worker_stats.request_active_slots", "numRunningReqs"],
  ["data.worker_stats.request_total_slots", "maxRunningRequests"],
  ["data.worker_stats.num_requests_waiting", "numWaitingReqs"],
  ["data.kv_stats.kv_active_blocks", "kvUsedBlocks"],
  ["data.kv_stats.kv_total_blocks", "kvTotalBlocks"],
  ["data.kv_stats.gpu_cache_usage_perc", "kvCacheUsage"],
  ["data.kv_stats.gpu_prefix_cache_hit_rate", "prefixCacheHitRate"]
]
const at = (o: Record<string, unknown>, path: string): unknown =>
  path.split(".").reduce<unknown>((v, k) => (isObj(v) ? v[k] : undefined), o)

/**
 * Decode Dynamo `kv_metrics` load events to ledger rows, pushing notices.
 *
 * **Input**: one JSON event per line (blank lines skipped), or one JSON list of events. Each is an
 * `ActiveLoad` (`{worker_id, dp_rank, active_decode_blocks, active_prefill_tokens,
 * kv_used_blocks, num_waiting_reqs}`, `null` = absent) or the 2025 `{worker_id, data:
 * ForwardPassMetrics}`. **Rows**: one per (`worker_id`, rank), `worker` the id as written (ids
 * above 2^53 kept exact from the text); each field from the latest event that carried it (the
 * scheduler's events carry decode blocks and prefill tokens, the worker's its used blocks).
 * `active_decode_blocks` -> `activeDecodeBlocks`, `active_prefill_tokens` ->
 * `activePrefillTokens`, `kv_used_blocks` -> `kvUsedBlocks`, `num_waiting_reqs` ->
 * `numWaitingReqs`; of `ForwardPassMetrics`: `request_active_slots` -> `numRunningReqs`,
 * `request_total_slots` -> `maxRunningRequests`, `num_requests_waiting` -> `numWaitingReqs`,
 * `kv_active_blocks` / `kv_total_blocks` -> `kvUsedBlocks` / `kvTotalBlocks`,
 * `gpu_cache_usage_perc` -> `kvCacheUsage`, `gpu_prefix_cache_hit_rate` -> `prefixCacheHitRate`.
 * A missing rank (`dp_rank` absent, `data_parallel_rank` null) is rank 0, upstream's default, with
 * a `DefaultedIdentity` notice; keys not modelled (`spec_decode_stats`, ...) get `UnknownField`.
 *
 * **Errors**: `SyntaxError` on the line of bad JSON; `InvalidField` naming the event and key
 * (`$[2].kv_used_blocks`) for a non-number, a missing `worker_id` or a bad rank.
 *
 * **When to use**: through `decodeLedger(text, "dynamo-load-events")` (or `auto`, which detects a
 * first line that is an object with `worker_id`).
 *
 * @example
 * ```ts
 * import { decodeDynamoLoadEvents } from "@loadledger/schema"
 * const text = '{"worker_id":7587888160958628001,"dp_rank":1,"active_decode_blocks":40,"active_prefill_tokens":512,"kv_used_blocks":null}\n{"worker_id":7587888160958628001,"dp_rank":1,"active_decode_blocks":null,"active_prefill_tokens":null,"kv_used_blocks":55}\n'
 * const r = decodeDynamoLoadEvents(text, [])
 * r._tag === "Success" && r.success // => [{ dpRank: 1, worker: "7587888160958628001", activeDecodeBlocks: 40, activePrefillTokens: 512, kvUsedBlocks: 55 }]
 * ```
 *
 * @category Dynamo
 * @since 0.7.0
 */
export const decodeDynamoLoadEvents = (
  text: string,
  notices: Array<LedgerNotice>
): Result.Result<Array<RankLoad>, DecodeError> => {
  const events: Array<unknown> = []
  const t = text.trimStart()
  if (t.startsWith("[")) {
    const doc = parseJson(text)
    if (Result.isFailure(doc)) return Result.fail(doc.failure)
    if (!Array.isArray(doc.success))
      return Result.fail(decodeError("InvalidField", "Expected a list", { path: "$" }))
    events.push(...doc.success)
  } else {
    const lines = text.split("\n")
    for (let i = 0; i < lines.length; i++) {
      if (lines[i]!.trim() === "") continue
      const doc = parseJson(lines[i]!)
      if (Result.isFailure(doc)) return Result.fail({ ...doc.failure, line: i + 1 })
      events.push(doc.success)
    }
  }
  // worker ids are u64: JSON numbers above 2^53 lose digits, so take them from the text, in order
  const ids = [...text.matchAll(/"worker_id"\s*:\s*(\d+)/g)].map((m) => m[1]!)
  const byKey = new Map<string, Mutable>()
  const unknown = new Map<string, number>()
  let defaulted: string | undefined
  for (let i = 0; i < events.length; i++) {
    const e = events[i]
    const p = `$[${i}]`
    const bad = (key: string, message: string) =>
      Result.fail(decodeError("InvalidField", message, { path: `${p}${key}` }))
    if (!isObj(e)) return bad("", "Expected an object")
    const wid = e["worker_id"]
    if (typeof wid !== "number" || !Number.isInteger(wid) || wid < 0)
      return bad(".worker_id", "Expected a non-negative integer")
    const worker = ids.length === events.length ? ids[i]! : String(wid)
    const old = isObj(e["data"])
    const rankPath = old ? "data.worker_stats.data_parallel_rank" : "dp_rank"
    const rank = at(e, rankPath)
    if (
      rank !== undefined &&
      rank !== null &&
      (typeof rank !== "number" || !Number.isInteger(rank) || rank < 0)
    )
      return bad(`.${rankPath}`, "Expected a non-negative integer rank")
    if (rank === undefined || rank === null) defaulted ??= p
    const dpRank = typeof rank === "number" ? rank : 0
    const k = `${worker}\u0000${dpRank}`
    let row = byKey.get(k)
    if (row === undefined) {
      row = { dpRank, worker }
      byKey.set(k, row)
    }
    for (const [path, field] of old ? forwardPass : activeLoad) {
      const v = at(e, path)
      if (v === undefined || v === null) continue
      if (typeof v !== "number") return bad(`.${path}`, "Expected number")
      row[field] = v
    }
    const known = old ? ["worker_id", "data"] : ["worker_id", "dp_rank", ...activeLoad.map(([w]) => w)]
    for (const key of Object.keys(e)) if (!known.includes(key)) unknown.set(key, (unknown.get(key) ?? 0) + 1)
    if (old)
      for (const key of Object.keys(e["data"] as object))
        if (key !== "worker_stats" && key !== "kv_stats")
          unknown.set(`data.${key}`, (unknown.get(`data.${key}`) ?? 0) + 1)
  }
  if (defaulted !== undefined)
    notices.push({
      _tag: "DefaultedIdentity",
      dpRank: 0,
      path: defaulted,
      message: `${defaulted} carries no rank: read as rank 0 (upstream's default)`
    })
  for (const [field, entries] of unknown)
    notices.push({
      _tag: "UnknownField",
      field,
      entries,
      message: `${field} (${entries} event(s)) is not modelled by the ledger`
    })
  return Result.succeed([...byKey.values()])
}

/**
 * Whether a text starts as Dynamo load events: its first non-blank line is a JSON object (or a
 * list of them) with a `worker_id` key.
 *
 * **When to use**: `decodeLedger`'s `auto` detection.
 *
 * @example
 * ```ts
 * import { looksLikeDynamoLoadEvents } from "@loadledger/schema"
 * looksLikeDynamoLoadEvents('{"worker_id":1,"dp_rank":0,"kv_used_blocks":3}\n') // => true
 * looksLikeDynamoLoadEvents('{"loads":[]}') // => false
 * ```
 *
 * @category Dynamo
 * @since 0.7.0
 */
export const looksLikeDynamoLoadEvents = (text: string): boolean => {
  const head = text.trimStart().slice(0, 4096)
  const first = head.split("\n", 1)[0]!
  // one event per line: the first line is the event; a (pretty-printed) list: its head
  const probe = /^\[?\s*\{/.test(first) && first.trimEnd().endsWith("}") ? first : head
  return /^\[?\s*\{/.test(head) && /"worker_id"\s*:/.test(probe) && !/"(?:loads|workers)"\s*:/.test(probe)
}

const dynamoSpec: GatewaySpec = {
  source: "Dynamo frontend",
  prefixes: ["dynamo_frontend_worker_"],
  fields: new Map<string, ReadonlyArray<Field>>([
    ["dynamo_frontend_worker_active_decode_blocks", ["activeDecodeBlocks"]],
    ["dynamo_frontend_worker_active_prefill_tokens", ["activePrefillTokens"]]
  ]),
  identity: (labels) => {
    const dpRank = rankLabel(labels, "dp_rank")
    if (typeof dpRank === "string") return dpRank
    return { worker: labels["worker_id"], dpRank }
  }
}

/**
 * Decode a Dynamo frontend `/metrics` page to ledger rows, pushing notices and rank-less loads.
 *
 * **Rows**: one per (`worker_id`, `dp_rank`) label pair of
 * `dynamo_frontend_worker_active_decode_blocks` -> `activeDecodeBlocks` and
 * `dynamo_frontend_worker_active_prefill_tokens` -> `activePrefillTokens` (the frontend KV
 * router's view of what it sent). `worker_type` is not identity. The other per-worker gauges
 * (`dynamo_frontend_worker_last_*`: the last TTFT, ITL, input length) get `UnknownSeries`
 * notices; the page's other families are not load and are not reported. A page of an older
 * frontend without `dp_rank` labels reads each worker as rank 0 (`DefaultedIdentity`).
 *
 * **Errors**: syntax (its line), a bad `dp_rank` (`InvalidField` on its line), no modelled gauge
 * (`UnknownSeries`: the frontend runs no KV router, or no worker registered yet).
 *
 * **When to use**: through `decodeLedger(text, "dynamo-metrics")` (or `auto`, which detects
 * `dynamo_frontend_worker_` names).
 *
 * @example
 * ```ts
 * import { decodeDynamoMetrics } from "@loadledger/schema"
 * const page = 'dynamo_frontend_worker_active_decode_blocks{worker_id="7890",dp_rank="0",worker_type="decode"} 56\n'
 * const r = decodeDynamoMetrics(page, [], [])
 * r._tag === "Success" && r.success // => [{ dpRank: 0, worker: "7890", activeDecodeBlocks: 56 }]
 * ```
 *
 * @category Dynamo
 * @since 0.7.0
 */
export const decodeDynamoMetrics = (
  text: string,
  notices: Array<LedgerNotice>,
  rankless: Array<RanklessLoad>
): Result.Result<Array<RankLoad>, DecodeError> => rowsOfGatewayPage(text, dynamoSpec, notices, rankless)

/**
 * Whether a text has Dynamo's per-worker frontend gauges (`dynamo_frontend_worker_` at a line
 * start).
 *
 * **When to use**: `decodeLedger`'s `auto` detection.
 *
 * @example
 * ```ts
 * import { looksLikeDynamoMetrics } from "@loadledger/schema"
 * looksLikeDynamoMetrics('dynamo_frontend_worker_active_prefill_tokens{worker_id="1"} 3\n') // => true
 * looksLikeDynamoMetrics("dynamo_frontend_inflight_requests 0\n") // => false
 * ```
 *
 * @category Dynamo
 * @since 0.7.0
 */
export const looksLikeDynamoMetrics = (text: string): boolean =>
  pageHasPrefix(text, "dynamo_frontend_worker_")
