/**
 * The normalized per-rank ledger: what every load format says about each DP rank, in one shape
 * that the policies, the simulator, the live router and the CLI consume.
 *
 * @since 0.1.0
 */
import { decodeMulti } from "@msgpack/msgpack"
import { Result } from "effect"
import { type DecodeError, decodeError } from "./DecodeError.js"
import { decodeGetLoad, type GetLoadResponse } from "./GetLoad.js"
import { parseJson } from "./internal/json.js"
import { type Exposition, parseExposition } from "./internal/prometheus.js"
import type { LoadEntry } from "./LoadSnapshot.js"
import { type LoadStat, loadStatFromTagged } from "./LoadStat.js"
import {
  type DecodedMetrics,
  runtimeOfExposition,
  type SglangRankMetrics,
  sglangOfExposition,
  type VllmEngineMetrics,
  vllmOfExposition
} from "./Metrics.js"
import { decodeV1Loads, isoToEpochSeconds, type V1Loads } from "./V1Loads.js"
import { decodeVllmLoggerLines, latestPerEngine } from "./VllmLogger.js"

/**
 * Why a rank's numbers are not trusted (S08): `duplicate-rank` (the payload reported the rank
 * more than once) or `negative-count` (a count, token number or ratio below 0, e.g. a -1 sentinel).
 *
 * **When to use**: deciding how to fall back for an `unknown` row.
 *
 * @category Ledger
 * @since 0.1.0
 */
export type LedgerUnknownReason = "duplicate-rank" | "negative-count"

/**
 * One DP rank (vLLM: one engine) of the ledger. Every load field is present only when the payload
 * reported it: absent is `undefined`, never 0. A row with `unknown` set carries **no** load fields:
 * the rank exists but its load must be treated as unknown (fall back to local counts), never as 0
 * or -1.
 *
 * Sources: `/v1/loads` (wire names), `/get_load` (`numRunningReqs` = `num_reqs` -
 * `num_waiting_reqs`, `numTotalTokens` = `num_tokens`), `LoadStat` (`numTokens`), vLLM
 * `/metrics` and logger (`kvCacheUsage` from `kv_cache_usage_perc` / `gpu_cache_usage_perc` /
 * "GPU KV cache usage"), SGLang `/metrics` (`numWaitingReqs` from `num_queue_reqs`,
 * `kvCacheUsage` = `tokenUsage`).
 *
 * **When to use**: consume it in policies, the simulator and routers; produce it with `decodeLedger`.
 *
 * @category Ledger
 * @since 0.1.0
 */
export interface LedgerRow {
  readonly dpRank: number
  /** Float epoch seconds: the per-rank timestamp, else the envelope's. */
  readonly timestamp?: number
  readonly numRunningReqs?: number
  readonly numWaitingReqs?: number
  readonly numTotalTokens?: number
  /** KV-cache usage, 0..1. */
  readonly kvCacheUsage?: number
  readonly numUsedTokens?: number
  readonly numWaitingUncachedTokens?: number
  readonly numActiveTokens?: number
  readonly numPendingTokens?: number
  readonly numTokens?: number
  readonly maxTotalNumTokens?: number
  readonly maxRunningRequests?: number
  readonly maxPrefillTokens?: number
  readonly contextLen?: number
  readonly tokenUsage?: number
  /** Tokens per second. */
  readonly genThroughput?: number
  readonly cacheHitRate?: number
  readonly utilization?: number
  readonly prefixCacheHitRate?: number
  readonly avgPromptThroughputTokensPerSecond?: number
  readonly avgGenerationThroughputTokensPerSecond?: number
  /** Set when the rank's numbers cannot be trusted; the row then has no load fields. */
  readonly unknown?: { readonly reason: LedgerUnknownReason; readonly message: string }
}

/**
 * Which format {@link decodeLedger} reads; `auto` detects it.
 *
 * **When to use**: pass a kind when the format is known (faster, clearer errors); `auto` otherwise.
 *
 * @category Ledger
 * @since 0.1.0
 */
export type LedgerKind = "auto" | "v1-loads" | "get-load" | "load-stat" | "vllm-metrics" | "sglang-metrics"

type Mutable = { -readonly [K in keyof LedgerRow]: LedgerRow[K] }

const pick = (src: object, keys: ReadonlyArray<string>, to: Mutable) => {
  for (const k of keys) {
    const v = (src as Record<string, unknown>)[k]
    if (typeof v === "number") (to as Record<string, unknown>)[k] = v
  }
}

const entryKeys = [
  "numRunningReqs",
  "numWaitingReqs",
  "numTotalTokens",
  "numUsedTokens",
  "numWaitingUncachedTokens",
  "numActiveTokens",
  "maxTotalNumTokens",
  "maxRunningRequests",
  "tokenUsage",
  "genThroughput",
  "cacheHitRate",
  "utilization"
]

const fromV1Loads = (d: V1Loads): Array<LedgerRow> => {
  const fallback = isoToEpochSeconds(d.response.timestamp)
  return (d.response.loads as ReadonlyArray<LoadEntry>).map((l) => {
    const row: Mutable = { dpRank: l.dpRank ?? 0 }
    const ts = l.timestamp ?? fallback
    if (ts !== undefined) row.timestamp = ts
    pick(l, entryKeys, row)
    if (l.tokenUsage !== undefined) row.kvCacheUsage = l.tokenUsage
    return row
  })
}

const fromGetLoad = (d: GetLoadResponse): Array<LedgerRow> =>
  d.map((e, i) => {
    const row: Mutable = {
      dpRank: e.dpRank ?? i,
      numRunningReqs: e.numReqs - e.numWaitingReqs,
      numWaitingReqs: e.numWaitingReqs,
      numTotalTokens: e.numTokens
    }
    if (e.numPendingTokens !== undefined) row.numPendingTokens = e.numPendingTokens
    return row
  })

const fromLoadStat = (s: LoadStat): LedgerRow => ({
  dpRank: s.attnDpRank,
  numRunningReqs: s.numRunningReqs,
  numWaitingReqs: s.numWaitingReqs,
  numTokens: s.numTokens,
  maxTotalNumTokens: s.maxTotalNumTokens
})

const summaryKeys: Record<string, keyof Mutable> = {
  num_running_reqs: "numRunningReqs",
  num_queue_reqs: "numWaitingReqs",
  num_waiting_reqs: "numWaitingReqs",
  num_total_tokens: "numTotalTokens",
  num_used_tokens: "numUsedTokens",
  token_usage: "kvCacheUsage",
  gen_throughput: "genThroughput"
}

/**
 * Per-rank `key=value` summary lines as people paste them from SGLang's per-rank metrics
 * (`dp_rank=2  num_running_reqs=1  num_queue_reqs=11`), used only by `auto` and only when every
 * line that mentions `dp_rank=` has this shape; other lines (headers) are ignored.
 */
const fromRankSummary = (text: string): Array<LedgerRow> | undefined => {
  const lines = text.split(/\r?\n/).filter((l) => /(^|\s)dp_rank=/.test(l))
  if (lines.length === 0) return undefined
  const rows: Array<LedgerRow> = []
  for (const l of lines) {
    const m = /^\s*dp_rank=(\d+)((?:\s+[a-z_]+=-?\d+(?:\.\d+)?)+)\s*$/.exec(l)
    if (m === null) return undefined
    const row: Mutable = { dpRank: Number(m[1]) }
    for (const kv of m[2]!.trim().split(/\s+/)) {
      const [k, v] = kv.split("=") as [string, string]
      const f = summaryKeys[k]
      if (f !== undefined) (row as Record<string, unknown>)[f] = Number(v)
    }
    rows.push(row)
  }
  return rows
}

const isNeg = (v: unknown) => typeof v === "number" && v < 0

/**
 * S08: a rank reported twice becomes one `duplicate-rank` row; a row with a negative number
 * becomes `negative-count`. Rows come out in ascending rank order.
 */
const audit = (rows: ReadonlyArray<LedgerRow>): Array<LedgerRow> => {
  const byRank = new Map<number, Array<LedgerRow>>()
  for (const r of rows) byRank.set(r.dpRank, [...(byRank.get(r.dpRank) ?? []), r])
  return [...byRank.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([dpRank, rs]): LedgerRow => {
      if (rs.length > 1)
        return {
          dpRank,
          unknown: { reason: "duplicate-rank", message: `dp_rank ${dpRank} reported ${rs.length} times` }
        }
      const r = rs[0]!
      const neg = Object.entries(r).find(([k, v]) => k !== "dpRank" && isNeg(v))
      if (neg !== undefined)
        return { dpRank, unknown: { reason: "negative-count", message: `${neg[0]} is ${String(neg[1])}` } }
      if (dpRank < 0)
        return { dpRank, unknown: { reason: "negative-count", message: `dp_rank is ${dpRank}` } }
      return r
    })
}

const isObj = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const fromJson = (doc: unknown, kind: LedgerKind): Result.Result<Array<LedgerRow>, DecodeError> => {
  const k =
    kind !== "auto"
      ? kind
      : isObj(doc) && "loads" in doc
        ? "v1-loads"
        : Array.isArray(doc) && (doc[0] === "LoadStat" || Array.isArray(doc[0]))
          ? "load-stat"
          : Array.isArray(doc)
            ? "get-load"
            : undefined
  if (k === "v1-loads") return Result.map(decodeV1Loads(doc), fromV1Loads)
  if (k === "get-load") return Result.map(decodeGetLoad(doc), fromGetLoad)
  if (k === "load-stat") {
    const items: ReadonlyArray<unknown> = Array.isArray(doc) && Array.isArray(doc[0]) ? doc : [doc]
    const rows: Array<LedgerRow> = []
    for (let i = 0; i < items.length; i++) {
      const r = loadStatFromTagged(items[i])
      if (Result.isFailure(r)) {
        const path = items === doc ? r.failure.path?.replace(/^\$/, `$[${i}]`) : r.failure.path
        return Result.fail({ ...r.failure, path })
      }
      rows.push(fromLoadStat(r.success))
    }
    return Result.succeed(rows)
  }
  return Result.fail(
    decodeError(
      "UnknownFormat",
      `JSON is not a /v1/loads, /get_load or LoadStat payload${k ? ` (${k})` : ""}`,
      {
        path: "$"
      }
    )
  )
}

const vllmRows = (m: DecodedMetrics<VllmEngineMetrics>): Array<LedgerRow> =>
  m.records.map((e) => {
    const row: Mutable = { dpRank: e.engine }
    if (e.numRequestsRunning !== undefined) row.numRunningReqs = e.numRequestsRunning
    if (e.numRequestsWaiting !== undefined) row.numWaitingReqs = e.numRequestsWaiting
    const kv = e.kvCacheUsagePerc ?? e.gpuCacheUsagePerc
    if (kv !== undefined) row.kvCacheUsage = kv
    return row
  })

const sglangRows = (m: DecodedMetrics<SglangRankMetrics>): Array<LedgerRow> =>
  m.records.map((r) => {
    const row: Mutable = { dpRank: r.dpRank }
    pick(r, [...entryKeys, "maxPrefillTokens", "contextLen"], row)
    if (r.numWaitingReqs === undefined && r.numQueueReqs !== undefined) row.numWaitingReqs = r.numQueueReqs
    if (r.tokenUsage !== undefined) row.kvCacheUsage = r.tokenUsage
    return row
  })

const fromExposition = (
  e: Exposition,
  kind: "vllm-metrics" | "sglang-metrics"
): Result.Result<Array<LedgerRow>, DecodeError> =>
  kind === "vllm-metrics"
    ? Result.map(vllmOfExposition(e), vllmRows)
    : Result.map(sglangOfExposition(e), sglangRows)

const fromText = (text: string, kind: LedgerKind): Result.Result<Array<LedgerRow>, DecodeError> => {
  if (kind === "vllm-metrics" || kind === "sglang-metrics") {
    const e = parseExposition(text)
    return Result.isFailure(e) ? Result.fail(e.failure) : fromExposition(e.success, kind)
  }
  const t = text.trimStart()
  if (kind !== "auto" || t.startsWith("{") || t.startsWith("[")) {
    const doc = parseJson(text)
    return Result.isFailure(doc) ? Result.fail(doc.failure) : fromJson(doc.success, kind)
  }
  if (text.includes("Avg prompt throughput:"))
    return Result.map(decodeVllmLoggerLines(text), (recs) =>
      latestPerEngine(recs).map((e) => {
        const row: Mutable = { dpRank: e.engine }
        pick(
          e,
          [
            "numRunningReqs",
            "numWaitingReqs",
            "kvCacheUsage",
            "prefixCacheHitRate",
            "avgPromptThroughputTokensPerSecond",
            "avgGenerationThroughputTokensPerSecond"
          ],
          row
        )
        return row
      })
    )
  const summary = fromRankSummary(text)
  if (summary !== undefined) return Result.succeed(summary)
  const expo = parseExposition(text)
  if (Result.isFailure(expo)) return Result.fail(expo.failure)
  const rt = runtimeOfExposition(expo.success)
  if (rt !== undefined) return fromExposition(expo.success, rt === "vllm" ? "vllm-metrics" : "sglang-metrics")
  return Result.fail(decodeError("UnknownFormat", "no vLLM or SGLang load metric in the text", { line: 1 }))
}

/**
 * Decode any supported load payload to the normalized per-rank ledger.
 *
 * Kinds: `v1-loads` (SGLang `/v1/loads` JSON, every era), `get-load` (legacy `/get_load` JSON),
 * `load-stat` (msgpack bytes of `["LoadStat", ...]`, possibly several concatenated, or the same as
 * JSON), `vllm-metrics` / `sglang-metrics` (Prometheus text). `auto` (default) detects the format:
 * bytes starting with a msgpack array -> `load-stat` (other bytes are read as UTF-8 text); JSON by shape;
 * vLLM periodic logger lines (latest line per engine);
 * per-rank `dp_rank=N key=value` summary lines; exposition text by metric prefix.
 *
 * Rows: one per rank, ascending `dpRank`, present fields only. S08 rules: an empty `loads` gives no
 * rows; a rank reported twice or with a negative number is marked `unknown` (no load fields).
 * Bad input fails with a {@link DecodeError} naming the field (`path`) or `line`.
 *
 * **When to use**: everywhere a load report enters loadledger; {@link ledgerTotal} sums it.
 *
 * @example
 * ```ts
 * import { decodeLedger } from "@loadledger/schema"
 * const r = decodeLedger('{"loads":[{"dp_rank":0,"num_total_tokens":12000},{"dp_rank":1,"num_total_tokens":0}]}')
 * r._tag === "Success" && r.success // => [{ dpRank: 0, numTotalTokens: 12000 }, { dpRank: 1, numTotalTokens: 0 }]
 * ```
 *
 * @category Ledger
 * @since 0.1.0
 */
export const decodeLedger = (
  input: string | Uint8Array,
  kind: LedgerKind = "auto"
): Result.Result<ReadonlyArray<LedgerRow>, DecodeError> => {
  if (typeof input !== "string") {
    // msgpack arrays start with 0x90-0x9f / 0xdc / 0xdd; JSON and text never do
    const first = input[0] ?? 0
    const msgpackArray = (first >= 0x90 && first <= 0x9f) || first === 0xdc || first === 0xdd
    if (kind === "load-stat" || (kind === "auto" && msgpackArray)) {
      const rows: Array<LedgerRow> = []
      const r = decodeLoadStatStream(input)
      if (Result.isFailure(r)) return Result.fail(r.failure)
      for (const s of r.success) rows.push(fromLoadStat(s))
      return Result.succeed(audit(rows))
    }
    return decodeLedger(new TextDecoder().decode(input), kind)
  }
  return Result.map(fromText(input, kind), audit)
}

const decodeLoadStatStream = (bytes: Uint8Array): Result.Result<ReadonlyArray<LoadStat>, DecodeError> => {
  const out: Array<LoadStat> = []
  try {
    let i = 0
    for (const v of decodeMulti(bytes)) {
      const r = loadStatFromTagged(v)
      if (Result.isFailure(r))
        return Result.fail({ ...r.failure, path: r.failure.path?.replace(/^\$/, `$[message ${i}]`) })
      out.push(r.success)
      i++
    }
  } catch (e) {
    return Result.fail(
      decodeError("SyntaxError", `invalid msgpack: ${e instanceof Error ? e.message : String(e)}`)
    )
  }
  if (out.length === 0) return Result.fail(decodeError("SyntaxError", "empty msgpack input"))
  return Result.succeed(out)
}

/**
 * The total of one numeric field over the ledger, or `undefined` (unknown) when the ledger is
 * empty, any rank is `unknown`, or any rank lacks the field: only complete payloads are summed
 * (S08), so a partial sum is never passed off as the total.
 *
 * @example
 * ```ts
 * import { ledgerTotal } from "@loadledger/schema"
 * ledgerTotal([{ dpRank: 0, numTotalTokens: 12000 }, { dpRank: 1, numTotalTokens: 3000 }], "numTotalTokens") // => 15000
 * ledgerTotal([], "numTotalTokens") // => undefined
 * ```
 *
 * **When to use**: node-level totals (non-DP views of a DP worker); it refuses partial payloads.
 *
 * @category Ledger
 * @since 0.1.0
 */
export const ledgerTotal = (
  rows: ReadonlyArray<LedgerRow>,
  field: LedgerNumericField
): number | undefined => {
  if (rows.length === 0) return undefined
  let sum = 0
  for (const r of rows) {
    const v = r[field]
    if (r.unknown !== undefined || v === undefined) return undefined
    sum += v
  }
  return sum
}

/**
 * Numeric fields of {@link LedgerRow}.
 *
 * **When to use**: naming a field for `ledgerTotal` / `summarizeField`.
 *
 * @category Ledger
 * @since 0.1.0
 */
export type LedgerNumericField = Exclude<keyof LedgerRow, "dpRank" | "unknown">

/**
 * A field summarised over the ranks that reported it: `mean` is over `ranksReporting` only, and
 * `description` says so (e.g. `genThroughput: mean 80.86 over 7 of 8 ranks (missing: 1)`).
 *
 * **When to use**: pod- or node-level views that must keep per-rank spread visible (S11).
 *
 * @category Ledger
 * @since 0.1.0
 */
export interface FieldSummary {
  readonly field: LedgerNumericField
  readonly ranksReporting: ReadonlyArray<number>
  readonly ranksMissing: ReadonlyArray<number>
  readonly sum: number
  readonly mean: number
  readonly min: number
  readonly max: number
  /** max / min (Infinity when min is 0 and max > 0). */
  readonly maxOverMin: number
  readonly description: string
}

/**
 * Summarise one field over the ranks that reported it (S11: expose per-rank max and min, not only
 * a mean). `undefined` when no rank reported it.
 *
 * @example
 * ```ts
 * import { summarizeField } from "@loadledger/schema"
 * const s = summarizeField([{ dpRank: 0, genThroughput: 10 }, { dpRank: 1 }, { dpRank: 2, genThroughput: 40 }], "genThroughput")
 * s?.mean // => 25
 * s?.ranksMissing // => [1]
 * ```
 *
 * **When to use**: reporting a field across ranks without hiding missing ranks or imbalance.
 *
 * @category Ledger
 * @since 0.1.0
 */
export const summarizeField = (
  rows: ReadonlyArray<LedgerRow>,
  field: LedgerNumericField
): FieldSummary | undefined => {
  const have = rows.filter((r) => r.unknown === undefined && r[field] !== undefined)
  if (have.length === 0) return undefined
  const vals = have.map((r) => r[field]!)
  const sum = vals.reduce((a, b) => a + b, 0)
  const min = Math.min(...vals)
  const max = Math.max(...vals)
  const mean = sum / vals.length
  const ranksMissing = rows.filter((r) => !have.includes(r)).map((r) => r.dpRank)
  return {
    field,
    ranksReporting: have.map((r) => r.dpRank),
    ranksMissing,
    sum,
    mean,
    min,
    max,
    maxOverMin: min === 0 ? (max === 0 ? 1 : Number.POSITIVE_INFINITY) : max / min,
    description: `${field}: mean ${mean.toFixed(2)} over ${have.length} of ${rows.length} ranks${
      ranksMissing.length > 0 ? ` (missing: ${ranksMissing.join(", ")})` : ""
    }, min ${min}, max ${max}`
  }
}
