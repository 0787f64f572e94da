/**
 * How the router judges each rank right now: known, unknown or unhealthy, and the contract row
 * (@loadledger/schema's `RankLoad`) it stands for.
 *
 * @since 0.1.0
 */
import type { RankLoad, RankUnknownReason } from "@loadledger/schema"

import { checkStatusOptions } from "./internal/checks.js"

import { absent, corruptCount, loadCounts } from "./internal/rowFields.js"

import type { LastHeard, PollFailure, RankEntry, WorkerEntry } from "./LastHeard.js"
import type { LoadField, RankStatus, StatusOptions, UnknownReason } from "./Types.js"

/**
 * The contract reason (@loadledger/schema's `RankUnknownReason`) for a router reason: unhealthy
 * reasons are `unreachable`, `stale` is `stale`, and a rank whose numbers never arrived in usable
 * form (never reported, not in the payload, body not decoded, no load count or a required field absent) is
 * `not-reported`, as is one judged with refused options (`invalid-options`). A rejected row keeps the decoder's own reason.
 *
 * @example
 * ```ts
 * import { contractReason } from "@loadledger/live"

 * contractReason("poll-timeout") // => "unreachable"
 * contractReason("missing-field") // => "not-reported"
 * ```
 *
 * @category getters
 * @since 0.2.0
 */
export const contractReason = (reason: Exclude<UnknownReason, "rejected-row">): RankUnknownReason => {
  switch (reason) {
    case "unreachable":
    case "poll-timeout":
    case "http-status":
    case "ejected":
      return "unreachable"
    case "stale":
      return "stale"
    default:
      return "not-reported"
  }
}

/**
 * Judge every rank at time `now` (seconds, router clock).
 *
 * **When to use**: before each decision, and for metrics; one pass over the ranks. A rank is never
 * "idle" by default: no data, old data, failed polls, corrupt counts and rows without any load
 * count all make it unknown or unhealthy (fault cases S04, S08, S09). A partial row (some counts
 * reported, others absent, as on a cut-off vLLM `/metrics` page, fault case S04's second block)
 * is known with what it reported: its absent fields stay absent, never 0 (see `StatusOptions`).
 *
 * **Errors**: `options` are checked first (see `StatusOptions`: `staleAfterSeconds` a finite
 * number above 0, `requiredFields` absent or an array of `LoadField`s, `ageClock` absent or one of its two
 * clocks, `publishedFieldsByWorker` absent or a `Map` to arrays of `LoadField`s). Options refused
 * judge no rank: every rank is `unknown` with reason `invalid-options`, and its row's
 * `unknown.message` is the check's message, naming the field (`options.staleAfterSeconds must be a
 * finite number of seconds > 0, got NaN`); never a `NaN` bound read as "never stale".
 *
 * @example
 * ```ts
 * import { makeLastHeard, rankStatus, recordRows } from "@loadledger/live"

 * let l = makeLastHeard([{ url: "u", dpSize: 3 }])
 * const rows = [{ dpRank: 0, numRunningReqs: 1, numWaitingReqs: 0 }, { dpRank: 1, numRunningReqs: 5 }]
 * l = recordRows(l, "u", rows, 5)
 * const published = new Map([["u", ["numRunningReqs", "numWaitingReqs"] as const]])
 * const s = rankStatus(l, 6, { staleAfterSeconds: 2, publishedFieldsByWorker: published, ageClock: "receipt" })
 * s[0]?.condition // => "known"
 * s[0]?.row // => { dpRank: 0, worker: "u", workerDpRank: 0, numRunningReqs: 1, numWaitingReqs: 0 }
 * // partial: known with the count it reported; the waiting count stays absent
 * const partial = s[1]
 * partial?.condition // => "known"
 * partial?.missing // => ["numWaitingReqs"]
 * partial?.row.numWaitingReqs // => undefined
 * s[2]?.reason // => "not-in-payload"
 * s[2]?.row.unknown?.reason // => "not-reported"
 * // an explicit requiredFields makes the partial row unknown
 * rankStatus(l, 6, { staleAfterSeconds: 2, requiredFields: ["numWaitingReqs"], ageClock: "receipt" })[1]?.reason
 * // => "missing-field"
 * // options it refuses judge no rank
 * const refused = rankStatus(l, 6, { staleAfterSeconds: Number.NaN, ageClock: "receipt" })
 * refused.map((r) => r.reason) // => ["invalid-options", "invalid-options", "invalid-options"]
 * refused[0]?.row.unknown?.message // => "options.staleAfterSeconds must be a finite number of seconds > 0, got NaN"
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const rankStatus = (
  heard: LastHeard,
  now: number,
  options: StatusOptions
): ReadonlyArray<RankStatus> => {
  const refused = checkStatusOptions(options)
  if (refused !== undefined)
    return heard.ranks.map((e, index) => ({
      index,
      id: e.id,
      workerUrl: e.workerUrl,
      dpRank: e.dpRank,
      condition: "unknown",
      reason: "invalid-options",
      row: {
        dpRank: index,
        worker: e.workerUrl,
        workerDpRank: e.dpRank,
        unknown: { reason: "not-reported", message: refused.message }
      }
    }))
  const workers = new Map<string, WorkerEntry>()
  for (const w of heard.workers) workers.set(w.url, w)
  const out: Array<RankStatus> = new Array(heard.ranks.length)
  for (let index = 0; index < heard.ranks.length; index++) {
    const e = heard.ranks[index]!
    out[index] = judge(e, index, workers.get(e.workerUrl), now, options)
  }
  return out
}

const failureReason = (f: PollFailure): Exclude<UnknownReason, "rejected-row"> =>
  f.kind === "decode"
    ? "decode-failed"
    : f.kind === "timeout"
      ? "poll-timeout"
      : f.kind === "http-status"
        ? "http-status"
        : "unreachable"

/**
 * Stale, by the clock in use. `receipt`: nothing received for `staleAfterSeconds`. `publisher-change`:
 * a row received more than `staleAfterSeconds` after the publisher's timestamp last changed still
 * carried it (a frozen publisher, proven by hearing it), or nothing at all was received for twice the
 * bound (a silent one). Measuring a frozen publisher by what was heard, not by the router's clock
 * alone, keeps a router whose own event loop stalled for a moment from calling every rank stale.
 */
const isStale = (e: RankEntry, now: number, options: StatusOptions): boolean => {
  const bound = options.staleAfterSeconds
  const received = e.receivedAtSeconds
  if (received === undefined) return true
  if (options.ageClock === "receipt") return now - received > bound
  const changed = e.changedAtSeconds
  if (changed === undefined) return true
  return received - changed > bound || now - received > 2 * bound
}

const judge = (
  e: RankEntry,
  index: number,
  worker: WorkerEntry | undefined,
  now: number,
  options: StatusOptions
): RankStatus => {
  const failure = worker?.failure
  const since = options.ageClock === "receipt" ? e.receivedAtSeconds : e.changedAtSeconds
  const row = e.row
  const ageSeconds = row !== undefined && since !== undefined ? Math.max(0, now - since) : undefined
  const identity = { index, id: e.id, workerUrl: e.workerUrl, dpRank: e.dpRank, ageSeconds }
  const unknownRow = (unknown: RankLoad["unknown"]): RankLoad => ({
    dpRank: index,
    worker: e.workerUrl,
    workerDpRank: e.dpRank,
    unknown
  })
  const ejected = worker?.ejected
  if (ejected !== undefined && now < ejected.untilSeconds)
    return {
      ...identity,
      condition: "unhealthy",
      reason: "ejected",
      row: unknownRow({ reason: "unreachable", message: `ejected: ${ejected.message}` })
    }
  if (failure !== undefined) {
    const reason = failureReason(failure)
    return {
      ...identity,
      condition: failure.kind === "decode" ? "unknown" : "unhealthy",
      reason,
      row: unknownRow({ reason: contractReason(reason), message: `${reason}: ${failure.message}` })
    }
  }
  const unknown = (
    reason: Exclude<UnknownReason, "rejected-row">,
    message: string,
    missing?: Array<LoadField>
  ) => ({
    ...identity,
    condition: "unknown" as const,
    reason,
    missing,
    row: unknownRow({ reason: contractReason(reason), message })
  })
  if (e.receivedAtSeconds === undefined)
    return unknown("never-reported", "the worker has not answered a poll yet")
  if (row === undefined)
    return unknown("not-in-payload", `the last payload of ${e.workerUrl} had no row for rank ${e.dpRank}`)
  if (row.unknown !== undefined)
    return { ...identity, condition: "unknown", reason: "rejected-row", row: unknownRow(row.unknown) }
  const corrupt = corruptCount(row)
  if (corrupt !== undefined)
    return { ...identity, condition: "unknown", reason: "rejected-row", row: unknownRow(corrupt) }
  const published = options.publishedFieldsByWorker?.get(e.workerUrl) ?? loadCounts
  if (options.requiredFields !== undefined) {
    const lacking = absent(row, options.requiredFields)
    if (lacking !== undefined) return unknown("missing-field", `not reported: ${lacking.join(", ")}`, lacking)
  } else if (!loadCounts.some((f) => row[f] !== undefined))
    return unknown(
      "missing-field",
      "no load count reported (numRunningReqs, numWaitingReqs, numTotalTokens)",
      absent(row, published) ?? absent(row, loadCounts)
    )
  if (isStale(e, now, options))
    return unknown(
      "stale",
      `last change ${ageSeconds?.toFixed(3)} s ago, bound ${options.staleAfterSeconds} s`
    )
  return {
    ...identity,
    condition: "known",
    missing: absent(row, published),
    row: { ...row, dpRank: index, worker: e.workerUrl, workerDpRank: e.dpRank }
  }
}
