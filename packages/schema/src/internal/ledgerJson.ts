/**
 * The ledger projections of the JSON formats: `/v1/loads`, `/get_load`, `LoadStat` (JSON or
 * msgpack-decoded). One projection per wire format; identity rule: a missing `dp_rank` is the
 * entry's list index, with a `DefaultedIdentity` notice.
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { type DecodeError, decodeError, decodeWith } from "../DecodeError.js"
import { decodeGetLoad } from "../GetLoad.js"
import { isoToEpochSeconds } from "../IsoTimestamp.js"
import type { LedgerNotice } from "../LedgerNotice.js"
import type { LoadEntry } from "../LoadEntry.js"
import { type LoadStat, loadStatFromTagged } from "../LoadStat.js"
import type { RankLoad, RanklessLoad } from "../RankLoad.js"
import { decodeSmgLoads, looksLikeSmgLoads } from "../Smg.js"
import { decodeTrtllmIterationStats, looksLikeTrtllmIterationStats } from "../trtllm/IterationStats.js"
import { decodeV1Loads, type V1Loads } from "../V1Loads.js"
import {
  type Field,
  type Mutable,
  pickNumbers,
  prefer,
  type Scrubbed,
  scrub,
  unknownRow
} from "./ledgerRows.js"
import { strictly } from "./numbers.js"
import { v1LoadsEntryKeys, v1LoadsGauges } from "./v1LoadsKeys.js"
import { wireStruct } from "./wire.js"

const isObj = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

// dp_rank is identity, not load: a bad one fails the strict Schema instead of being scrubbed
const v1Skip = new Set(["dp_rank", "decode_moments", "decode_metrics_windows"])
const disaggKeys: ReadonlyArray<readonly [string, Field]> = [
  ["prefill_bootstrap_queue_reqs", "numPrefillBootstrapQueueReqs"],
  ["prefill_inflight_queue_reqs", "numPrefillInflightQueueReqs"],
  ["decode_prealloc_queue_reqs", "numDecodePreallocQueueReqs"],
  ["decode_transfer_queue_reqs", "numDecodeTransferQueueReqs"],
  ["decode_retracted_queue_reqs", "numDecodeRetractedQueueReqs"]
]

const countOf = (m: ReadonlyMap<string, number>, k: string): number => {
  const c = m.get(k)
  return c === undefined ? 0 : c
}

/** Scrub each entry of a list; the positions whose numbers were bad, and the cleaned list. */
const scrubList = (
  list: ReadonlyArray<unknown>,
  known: ReadonlySet<string>,
  skip: ReadonlySet<string>,
  at: (i: number) => string
) => {
  const bad = new Map<number, Scrubbed>()
  const clean = list.map((e, i) => {
    const s = scrub(e, known, skip, at(i))
    if (s === undefined) return e
    bad.set(i, s.why)
    return s.copy
  })
  return { bad, clean }
}

const identity = (
  wire: number | null | undefined,
  i: number,
  path: string,
  notices: Array<LedgerNotice>
): number => {
  if (typeof wire === "number") return wire
  notices.push({
    _tag: "DefaultedIdentity",
    dpRank: i,
    path,
    message: `${path} is ${wire === null ? "null" : "absent"}: the entry is read as rank ${i} (its list index)`
  })
  return i
}

const v1Row = (
  l: LoadEntry,
  raw: unknown,
  dpRank: number,
  fallback: number | undefined,
  notices: Array<LedgerNotice>
) => {
  const row: Mutable = { dpRank }
  const ts = l.timestamp ?? fallback
  if (ts !== undefined) row.timestamp = ts
  pickNumbers(l, v1LoadsGauges, row)
  if (l.tokenUsage !== undefined) row.kvCacheUsage = l.tokenUsage
  const q = l.queues
  if (q !== null && q !== undefined) {
    prefer(
      row,
      "numWaitingReqs",
      { name: "num_waiting_reqs", value: l.numWaitingReqs },
      { name: "queues.waiting", value: q.waiting },
      notices
    )
    row.numGrammarQueueReqs = q.grammar
    row.numPausedReqs = q.paused
    row.numRetractedReqs = q.retracted
    if ("preallocReady" in q) row.numPreallocReadyReqs = q.preallocReady
  }
  // the disaggregation Schema fills upstream defaults: read the wire, so absent stays absent
  const d = isObj(raw) && isObj(raw["disaggregation"]) ? raw["disaggregation"] : undefined
  if (d !== undefined) for (const [k, f] of disaggKeys) if (typeof d[k] === "number") row[f] = d[k] as number
  if (l.memory !== null && l.memory !== undefined) row.tokenCapacity = l.memory.tokenCapacity
  const kv = "kvCapacity" in l ? l.kvCapacity : undefined
  if (kv !== null && kv !== undefined) {
    if (kv.fullAvailableTokens !== undefined) row.kvAvailableTokens = kv.fullAvailableTokens
    if (kv.fullEvictableTokens !== undefined) row.kvEvictableTokens = kv.fullEvictableTokens
  }
  return row
}

const fromV1Loads = (
  doc: Record<string, unknown>,
  notices: Array<LedgerNotice>
): Result.Result<Array<RankLoad>, DecodeError> => {
  const list = Array.isArray(doc["loads"]) ? doc["loads"] : undefined
  const { bad, clean } =
    list === undefined
      ? { bad: new Map<number, Scrubbed>(), clean: undefined }
      : scrubList(list, v1LoadsEntryKeys, v1Skip, (i) => `$.loads[${i}]`)
  return Result.map(decodeV1Loads(clean === undefined ? doc : { ...doc, loads: clean }), (d: V1Loads) => {
    const fallback = isoToEpochSeconds(d.response.timestamp)
    const unknownKeys = new Map<string, number>()
    const rows = (d.response.loads as ReadonlyArray<LoadEntry>).map((l, i) => {
      const raw = list?.[i]
      if (isObj(raw))
        for (const k of Object.keys(raw))
          if (!v1LoadsEntryKeys.has(k)) unknownKeys.set(k, countOf(unknownKeys, k) + 1)
      const dpRank = identity(l.dpRank, i, `$.loads[${i}].dp_rank`, notices)
      const why = bad.get(i)
      return why === undefined
        ? v1Row(l, raw, dpRank, fallback, notices)
        : unknownRow(dpRank, why.reason, why.message)
    })
    for (const [field, entries] of unknownKeys)
      notices.push({
        _tag: "UnknownField",
        field,
        entries,
        message: `/v1/loads entry key ${field} (in ${entries} entries) is not read`
      })
    return rows
  })
}

/**
 * `/get_load` entries as the ledger reads them: every count optional and nullable, so an entry that
 * lacks one or carries `null` (a proxy's rewrite, a fork's older shape) is a partial row with that
 * field absent rather than a refusal of every rank's entry, as a `/v1/loads` entry is read.
 */
const count = Schema.optionalKey(Schema.NullOr(Schema.Int))
const GetLoadEntries = Schema.Array(
  wireStruct({
    dpRank: count,
    numReqs: count,
    numWaitingReqs: count,
    numTokens: count,
    numPendingTokens: count,
    tsTic: Schema.optionalKey(Schema.NullOr(Schema.Finite))
  })
)
type GetLoadEntries = typeof GetLoadEntries.Type
const decodeGetLoadEntries = strictly(decodeWith(GetLoadEntries), new Set(["tsTic"]))

const getLoadKnown = new Set(["dp_rank", "num_reqs", "num_waiting_reqs", "num_tokens", "num_pending_tokens"])
// read (`ts_tic`) or documented as carrying no load (`rid`, `http_worker_ipc`): no notice
const getLoadQuiet = new Set([...getLoadKnown, "ts_tic", "rid", "http_worker_ipc"])

const fromGetLoad = (
  doc: ReadonlyArray<unknown>,
  notices: Array<LedgerNotice>
): Result.Result<Array<RankLoad>, DecodeError> => {
  const { bad, clean } = scrubList(doc, getLoadKnown, new Set(["dp_rank"]), (i) => `$[${i}]`)
  const unknownKeys = new Map<string, number>()
  for (const raw of doc)
    if (isObj(raw))
      for (const k of Object.keys(raw))
        if (!getLoadQuiet.has(k)) unknownKeys.set(k, countOf(unknownKeys, k) + 1)
  return Result.map(decodeGetLoadEntries(clean), (d: GetLoadEntries) => {
    for (const [field, entries] of unknownKeys)
      notices.push({
        _tag: "UnknownField",
        field,
        entries,
        message: `/get_load entry key ${field} (in ${entries} entries) is not read`
      })
    return d.map((e, i) => {
      const dpRank = identity(e.dpRank, i, `$[${i}].dp_rank`, notices)
      const why = bad.get(i)
      if (why !== undefined) return unknownRow(dpRank, why.reason, why.message)
      // an entry without a count is a partial row: that field absent (running needs both counts)
      const row: Mutable = { dpRank }
      if (typeof e.numReqs === "number" && typeof e.numWaitingReqs === "number")
        row.numRunningReqs = e.numReqs - e.numWaitingReqs
      if (typeof e.numWaitingReqs === "number") row.numWaitingReqs = e.numWaitingReqs
      if (typeof e.numTokens === "number") row.numTotalTokens = e.numTokens
      if (typeof e.numPendingTokens === "number") row.numPendingTokens = e.numPendingTokens
      return row
    })
  })
}

/** One `LoadStat` row. */
export const loadStatRow = (s: LoadStat): RankLoad => ({
  dpRank: s.attnDpRank,
  numRunningReqs: s.numRunningReqs,
  numWaitingReqs: s.numWaitingReqs,
  numTokens: s.numTokens,
  maxTotalNumTokens: s.maxTotalNumTokens
})

/**
 * A tagged `["LoadStat", ...]` value as a row: bad counts make the row `unknown`; a bad or
 * missing rank is an error (the row could not be attributed).
 */
export const loadStatItem = (item: unknown, path: string): Result.Result<RankLoad, DecodeError> => {
  if (!Array.isArray(item) || item.length !== 6) {
    const r = loadStatFromTagged(item)
    if (Result.isFailure(r)) return Result.fail({ ...r.failure, path: r.failure.path?.replace(/^\$/, path) })
    return Result.succeed(loadStatRow(r.success))
  }
  const s = scrub(item.slice(0, 5), new Set(), new Set(), path)
  const r = loadStatFromTagged(s === undefined ? item : [...(s.copy as Array<unknown>), item[5]])
  if (Result.isFailure(r)) return Result.fail({ ...r.failure, path: r.failure.path?.replace(/^\$/, path) })
  return Result.succeed(
    s === undefined ? loadStatRow(r.success) : unknownRow(r.success.attnDpRank, s.why.reason, s.why.message)
  )
}

/** Rows of a parsed JSON document of the given (or detected) kind. */
export const rowsOfJson = (
  doc: unknown,
  kind: string,
  notices: Array<LedgerNotice>,
  rankless: Array<RanklessLoad> = []
): Result.Result<Array<RankLoad>, DecodeError> => {
  const k =
    kind !== "auto"
      ? kind
      : looksLikeSmgLoads(doc)
        ? "smg-loads"
        : isObj(doc) && "loads" in doc
          ? "v1-loads"
          : looksLikeTrtllmIterationStats(doc)
            ? "trtllm-iteration-stats"
            : Array.isArray(doc) && (doc[0] === "LoadStat" || Array.isArray(doc[0]))
              ? "load-stat"
              : Array.isArray(doc)
                ? "get-load"
                : undefined
  if (k === "v1-loads") {
    if (!isObj(doc)) return decodeV1Loads(doc) as never
    return fromV1Loads(doc, notices)
  }
  if (k === "trtllm-iteration-stats") return decodeTrtllmIterationStats(doc, notices)
  if (k === "smg-loads") return decodeSmgLoads(doc, notices, rankless)
  if (k === "get-load") return Array.isArray(doc) ? fromGetLoad(doc, notices) : (decodeGetLoad(doc) as never)
  if (k === "load-stat") {
    const many = Array.isArray(doc) && Array.isArray(doc[0])
    const items: ReadonlyArray<unknown> = many ? (doc as Array<unknown>) : [doc]
    const rows: Array<RankLoad> = []
    for (let i = 0; i < items.length; i++) {
      const r = loadStatItem(items[i], many ? `$[${i}]` : "$")
      if (Result.isFailure(r)) return Result.fail(r.failure)
      rows.push(r.success)
    }
    return Result.succeed(rows)
  }
  return Result.fail(
    decodeError(
      "UnknownFormat",
      `JSON is not a /v1/loads, /get_load, LoadStat or TensorRT-LLM iteration stats payload${k ? ` (${k})` : ""}`,
      { path: "$" }
    )
  )
}
