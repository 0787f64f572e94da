/**
 * The ledger projection of SGLang scheduler log lines (`SglangSchedulerLog.ts`): one row per DP
 * rank, each field the value of the latest batch line that carried it.
 */
import * as Result from "effect/Result"
import type { DecodeError } from "../DecodeError.js"
import type { LedgerNotice } from "../LedgerNotice.js"
import type { RankLoad } from "../RankLoad.js"
import { decodeSglangSchedulerLog } from "../SglangSchedulerLog.js"
import type { Field, Mutable } from "./ledgerRows.js"

/** Wire item -> row field, for both batch kinds; `#prealloc-req` differs by kind (below). */
const shared: ReadonlyMap<string, ReadonlyArray<Field>> = new Map([
  ["#running-req", ["numRunningReqs"]],
  ["#token", ["numUsedTokens"]],
  ["token usage", ["tokenUsage", "kvCacheUsage"]],
  ["gen throughput (token/s)", ["genThroughput"]],
  ["#queue-req", ["numWaitingReqs"]],
  ["#transfer-req", ["numDecodeTransferQueueReqs"]],
  ["#retracted-req", ["numDecodeRetractedQueueReqs"]],
  ["#inflight-req", ["numPrefillInflightQueueReqs"]],
  ["pre-allocated usage", ["preAllocatedUsage"]]
])

/**
 * The field an item fills: decode mode's `#prealloc-req` is the decode prealloc queue
 * (`disagg_decode_prealloc_queue`), prefill mode's the bootstrap queue
 * (`disagg_prefill_bootstrap_queue`), as `sglang:num_decode_prealloc_queue_reqs` /
 * `sglang:num_prefill_prealloc_queue_reqs` report them.
 */
const fieldsOf = (batch: "decode" | "prefill", key: string): ReadonlyArray<Field> | undefined =>
  key === "#prealloc-req"
    ? [batch === "decode" ? "numDecodePreallocQueueReqs" : "numPrefillBootstrapQueueReqs"]
    : shared.get(key)

/** Hybrid pools' items, read by `hybridUsage` (no field of their own). */
const hybrid: ReadonlySet<string> = new Set([
  "#full token",
  "full token usage",
  "#swa token",
  "swa token usage"
])
const hybridFields = (key: string): ReadonlyArray<Field> | undefined => (hybrid.has(key) ? [] : undefined)

/**
 * A hybrid model's line (SWA or Mamba layers) prints per-pool usage instead of `token usage`; the
 * scheduler's own `token_usage` / `num_used` for it are the larger of the full and SWA pools
 * (`log_decode_stats`: `max(full_token_usage, swa_token_usage)`; Mamba: the full pool alone).
 */
const hybridUsage = (items: ReadonlyArray<readonly [string, unknown]>, row: Mutable): void => {
  const m = new Map(items)
  const num = (k: string) => (typeof m.get(k) === "number" ? (m.get(k) as number) : undefined)
  const full = num("full token usage")
  if (full !== undefined && !m.has("token usage")) {
    const usage = Math.max(full, num("swa token usage") ?? full)
    row.tokenUsage = usage
    row.kvCacheUsage = usage
  }
  const fullUsed = num("#full token")
  if (fullUsed !== undefined && !m.has("#token"))
    row.numUsedTokens = Math.max(fullUsed, num("#swa token") ?? fullUsed)
}

interface Slot {
  readonly row: Mutable
  readonly tp: number
  readonly pp: number
}

/** Rows of scheduler log text, with notices for every item not modelled and every line not read. */
export const rowsOfSchedulerLog = (
  text: string,
  notices: Array<LedgerNotice>
): Result.Result<Array<RankLoad>, DecodeError> =>
  Result.map(decodeSglangSchedulerLog(text), (log) => {
    const ranked = log.lines.some((l) => l.dpRank !== undefined)
    const slots = new Map<number, Slot>()
    const unmodelled = new Map<string, { entries: number; line: number }>()
    let rankless: { count: number; line: number } | undefined
    let otherTp: { count: number; line: number } | undefined
    for (const l of log.lines) {
      if (ranked && l.dpRank === undefined) {
        rankless ??= { count: 0, line: l.line }
        rankless.count++
        continue
      }
      const dp = l.dpRank ?? 0
      const tp = l.tpRank ?? 0
      const pp = l.ppRank ?? 0
      let slot = slots.get(dp)
      // with metrics on every scheduler, the TP / PP peers of a rank log too: the lowest
      // (TP, PP) rank's lines speak for the DP rank (the attention TP 0 scheduler logs by default)
      if (slot !== undefined && (tp > slot.tp || (tp === slot.tp && pp > slot.pp))) {
        otherTp ??= { count: 0, line: l.line }
        otherTp.count++
        continue
      }
      if (slot === undefined || tp < slot.tp || pp < slot.pp) {
        slot = { row: { dpRank: dp }, tp, pp }
        slots.set(dp, slot)
      }
      for (const [key, value] of l.items) {
        const fields = fieldsOf(l.batch, key) ?? hybridFields(key)
        if (fields === undefined || typeof value !== "number") {
          const u = unmodelled.get(key) ?? { entries: 0, line: l.line }
          u.entries++
          unmodelled.set(key, u)
          continue
        }
        for (const f of fields) slot.row[f] = value
      }
      hybridUsage(l.items, slot.row)
    }
    for (const [key, u] of unmodelled)
      notices.push({
        _tag: "UnknownField",
        field: key,
        entries: u.entries,
        message: `scheduler log item '${key}' (on ${u.entries} batch line(s), first line ${u.line}) is not modelled by the ledger`
      })
    if (!ranked && log.lines.length > 0)
      notices.push({
        _tag: "DefaultedIdentity",
        dpRank: 0,
        line: log.lines[0]!.line,
        message: `scheduler log line ${log.lines[0]!.line} has no DP rank in its prefix (no DP attention): read as rank 0`
      })
    if (rankless !== undefined)
      notices.push({
        _tag: "UnknownSeries",
        series: "batch line without a DP rank",
        samples: rankless.count,
        line: rankless.line,
        message: `${rankless.count} batch line(s) from line ${rankless.line} carry no DP rank beside lines that do: not assigned to any rank`
      })
    if (otherTp !== undefined)
      notices.push({
        _tag: "UnknownSeries",
        series: "batch line of a TP/PP peer",
        samples: otherTp.count,
        line: otherTp.line,
        message: `${otherTp.count} batch line(s) from line ${otherTp.line} come from a TP/PP peer of a rank already read from its lowest TP/PP scheduler: not read`
      })
    if (log.otherLines > 0)
      notices.push({
        _tag: "UnknownSeries",
        series: "other log line",
        samples: log.otherLines,
        line: log.firstOtherLine ?? 1,
        message: `${log.otherLines} log line(s) that are no batch line (first: line ${log.firstOtherLine ?? 1}) were passed over`
      })
    return [...slots.values()].map((s) => s.row as RankLoad)
  })
