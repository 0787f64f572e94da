/**
 * The ledger projections of the text formats: Prometheus exposition (vLLM, SGLang), vLLM logger
 * lines, and per-rank `dp_rank=N key=value` summaries. Identity rule: a sample or line without a
 * rank label is rank 0, with a `DefaultedIdentity` notice.
 */
import * as Result from "effect/Result"
import { type DecodeError, decodeError } from "../DecodeError.js"
import type { LedgerNotice } from "../LedgerNotice.js"
import { sglangOfExposition, vllmOfExposition } from "../Metrics.js"
import type { DecodedMetrics, SglangRankMetrics, VllmEngineMetrics } from "../MetricsRecords.js"
import type { RankLoad, RanklessLoad } from "../RankLoad.js"
import { latestPerEngine, readLoggerLines } from "../VllmLogger.js"
import { type Field, type Mutable, pickNumbers, prefer } from "./ledgerRows.js"
import { sglangNames, vllmNames } from "./metricNames.js"
import type { Exposition } from "./prometheus.js"

const vllmRow = (e: VllmEngineMetrics, notices: Array<LedgerNotice>): RankLoad => {
  const row: Mutable = { dpRank: e.engine }
  const worker = (e as { worker?: unknown }).worker
  if (typeof worker === "string") row.worker = worker
  if (e.numRequestsRunning !== undefined) row.numRunningReqs = e.numRequestsRunning
  if (e.numRequestsWaiting !== undefined) row.numWaitingReqs = e.numRequestsWaiting
  if (e.numRequestsSwapped !== undefined) row.numSwappedReqs = e.numRequestsSwapped
  if (e.cpuCacheUsagePerc !== undefined) row.cpuKvCacheUsage = e.cpuCacheUsagePerc
  prefer(
    row,
    "kvCacheUsage",
    { name: "vllm:kv_cache_usage_perc", value: e.kvCacheUsagePerc },
    { name: "vllm:gpu_cache_usage_perc", value: e.gpuCacheUsagePerc },
    notices
  )
  return row
}

// every field an SGLang `/metrics` rank carries to its row (`numWaitingReqs` aside, chosen below),
// in the row's order: the `/v1/loads` gauges (v1LoadsKeys.ts) are a subset, the collector's limits
// and queue gauges the rest
const sglangFields: ReadonlyArray<Field> = [
  "numRunningReqs",
  "numTotalTokens",
  "numUsedTokens",
  "numWaitingUncachedTokens",
  "numActiveTokens",
  "numPreallocReadyTokens",
  "maxTotalNumTokens",
  "maxRunningRequests",
  "maxPrefillTokens",
  "contextLen",
  "tokenUsage",
  "genThroughput",
  "cacheHitRate",
  "utilization",
  "numRetractedReqs",
  "numPausedReqs",
  "numGrammarQueueReqs",
  "numPrefillBootstrapQueueReqs",
  "numPrefillInflightQueueReqs",
  "numDecodePreallocQueueReqs",
  "numDecodeTransferQueueReqs",
  "kvAvailableTokens",
  "kvEvictableTokens"
]

const sglangRow = (r: SglangRankMetrics, notices: Array<LedgerNotice>): RankLoad => {
  const row: Mutable = { dpRank: r.dpRank }
  const worker = (r as { worker?: unknown }).worker
  if (typeof worker === "string") row.worker = worker
  pickNumbers(r, sglangFields, row)
  prefer(
    row,
    "numWaitingReqs",
    { name: "sglang_num_waiting_reqs", value: r.numWaitingReqs },
    { name: "sglang:num_queue_reqs", value: r.numQueueReqs },
    notices
  )
  if (r.tokenUsage !== undefined) row.kvCacheUsage = r.tokenUsage
  return row
}

const metricNotices = (
  e: Exposition,
  m: DecodedMetrics<unknown>,
  names: ReadonlyMap<string, string>,
  label: string,
  notices: Array<LedgerNotice>
): void => {
  for (const n of e.notes)
    notices.push(
      n.kind === "underflow"
        ? {
            _tag: "Underflow",
            series: n.name,
            line: n.line,
            message: `${n.name} (line ${n.line}): ${n.text} is below the smallest float64 and was read as 0`
          }
        : {
            _tag: "AfterEof",
            line: n.line,
            lines: n.lines,
            message: `${n.lines} line(s) from line ${n.line} follow the page's # EOF: not read`
          }
    )
  for (const n of m.declaredWithoutSamples)
    notices.push({
      _tag: "DeclaredWithoutSamples",
      series: n,
      message: `${n} is declared without samples: its field is absent on every rank (not 0)`
    })
  for (const u of m.unmodelledSeries)
    notices.push({
      _tag: "UnknownSeries",
      series: u.name,
      samples: u.samples,
      line: u.line,
      message: `${u.name}${u.type === undefined ? "" : ` (${u.type})`}: ${u.samples} sample(s) from line ${u.line} not modelled by the ledger`
    })
  if (m.rankless !== undefined)
    notices.push({
      _tag: "UnknownSeries",
      series: `series without a ${label} label`,
      samples: Object.keys(m.rankless).length,
      line: m.ranklessLine ?? 1,
      message: `modelled series without a ${label} label (first on line ${m.ranklessLine ?? 1}) beside per-rank ones: kept rank-less (decodeLedgerReport's rankless), not read as rank 0`
    })
  const unlabelled =
    m.rankless === undefined
      ? e.samples.find((s) => names.has(s.name) && s.labels[label] === undefined)
      : undefined
  if (unlabelled !== undefined)
    notices.push({
      _tag: "DefaultedIdentity",
      dpRank: 0,
      line: unlabelled.line,
      message: `${unlabelled.name} (line ${unlabelled.line}) has no ${label} label: read as rank 0`
    })
}

const withoutRank = (row: RankLoad): RanklessLoad => {
  const { dpRank: _rank, ...rest } = row
  return rest
}

/** Rows of an exposition; fails with `UnknownSeries` when no sample belongs to a modelled series. */
export const rowsOfExposition = (
  e: Exposition,
  kind: "vllm-metrics" | "sglang-metrics",
  notices: Array<LedgerNotice>,
  rankless: Array<RanklessLoad> = []
): Result.Result<Array<RankLoad>, DecodeError> => {
  const vllm = kind === "vllm-metrics"
  const names = vllm ? vllmNames : sglangNames
  const label = vllm ? "engine" : "dp_rank"
  // a vLLM page whose engines carry only counters and histograms yet (no gauge set, or gauges a
  // release renamed) still names its engines: each is a row with no field, never "no load series"
  const enginesNamed =
    vllm &&
    [...e.others.values()].some((o) => o.name.startsWith("vllm:") && (o.ranks.get("engine")?.size ?? 0) > 0)
  if (
    (e.samples.length > 0 || e.others.size > 0) &&
    !enginesNamed &&
    !e.samples.some((s) => names.has(s.name))
  ) {
    const seen = [...new Set([...e.samples.map((s) => s.name), ...e.others.keys()])]
    return Result.fail(
      decodeError(
        "UnknownSeries",
        `no ${vllm ? "vLLM" : "SGLang"} load series in the text; series not modelled: ${seen.slice(0, 12).join(", ")}${seen.length > 12 ? `, ... (${seen.length} in all)` : ""}`,
        { line: Math.min(e.samples[0]?.line ?? Infinity, e.others.values().next().value?.line ?? Infinity) }
      )
    )
  }
  if (vllm)
    return Result.map(vllmOfExposition(e, false), (m) => {
      metricNotices(e, m, names, label, notices)
      if (m.rankless !== undefined)
        rankless.push(withoutRank(vllmRow({ ...m.rankless, engine: 0 } as VllmEngineMetrics, notices)))
      return m.records.map((r) => vllmRow(r, notices))
    })
  return Result.map(sglangOfExposition(e, false), (m) => {
    metricNotices(e, m, names, label, notices)
    if (m.rankless !== undefined)
      rankless.push(withoutRank(sglangRow({ ...m.rankless, dpRank: 0 } as SglangRankMetrics, notices)))
    return m.records.map((r) => sglangRow(r, notices))
  })
}

const loggerFields: ReadonlyArray<Field> = [
  "numRunningReqs",
  "numWaitingReqs",
  "kvCacheUsage",
  "cpuKvCacheUsage",
  "numSwappedReqs",
  "prefixCacheHitRate",
  "avgPromptThroughputTokensPerSecond",
  "avgGenerationThroughputTokensPerSecond"
]

/** Rows of vLLM logger lines (the latest line per engine). */
export const rowsOfLogger = (
  text: string,
  notices: Array<LedgerNotice>
): Result.Result<Array<RankLoad>, DecodeError> =>
  Result.map(readLoggerLines(text), ({ records, skipped }) => {
    for (const [label, line] of skipped)
      notices.push({
        _tag: "UnknownSeries",
        series: label,
        samples: records.length,
        line,
        message: `logger item '${label}' (first on line ${line}) is not modelled by the ledger`
      })
    const lines = text.split(/\r?\n/)
    const bare = records.find((r) => !/Engine \d{1,9}: Avg prompt throughput:/.test(lines[r.line - 1] ?? ""))
    if (bare !== undefined)
      notices.push({
        _tag: "DefaultedIdentity",
        dpRank: 0,
        line: bare.line,
        message: `logger line ${bare.line} has no 'Engine NNN:' prefix: read as engine 0`
      })
    return latestPerEngine(records).map((e) => {
      const row: Mutable = { dpRank: e.engine }
      pickNumbers(e, loggerFields, row)
      return row
    })
  })

const summaryKeys: ReadonlyMap<string, Field> = new Map([
  ["num_running_reqs", "numRunningReqs"],
  ["num_queue_reqs", "numWaitingReqs"],
  ["num_waiting_reqs", "numWaitingReqs"],
  ["num_total_tokens", "numTotalTokens"],
  ["num_used_tokens", "numUsedTokens"],
  ["token_usage", "kvCacheUsage"],
  ["gen_throughput", "genThroughput"]
])

/**
 * Per-rank `key=value` summary lines as people paste them from SGLang's per-rank metrics
 * (`dp_rank=2  num_running_reqs=1  num_queue_reqs=11`), used only by `auto` and only when every
 * line that mentions `dp_rank=` has this shape; other lines (headers) are ignored.
 */
export const rowsOfRankSummary = (
  text: string,
  notices: Array<LedgerNotice>
): Array<RankLoad> | undefined => {
  const lines = text.split(/\r?\n/).filter((l) => /(^|\s)dp_rank=/.test(l))
  if (lines.length === 0) return undefined
  const rows: Array<RankLoad> = []
  const unread = new Set<string>()
  for (const l of lines) {
    const m = /^\s*dp_rank=(\d{1,9})((?:\s+[a-z_]+=-?\d+(?:\.\d+)?)+)\s*$/.exec(l)
    if (m === null) return undefined
    const row: Mutable = { dpRank: Number(m[1]) }
    for (const kv of m[2]!.trim().split(/\s+/)) {
      const [k, v] = kv.split("=") as [string, string]
      const f = summaryKeys.get(k)
      if (f !== undefined) row[f] = Number(v)
      else unread.add(k)
    }
    rows.push(row)
  }
  for (const k of unread)
    notices.push({
      _tag: "UnknownSeries",
      series: k,
      samples: rows.length,
      line: 1,
      message: `summary key ${k} is not modelled by the ledger`
    })
  return rows
}
