/**
 * How the router judges each rank right now: known, unknown or unhealthy, and the contract row
 * (@loadledger/schema's `RankLoad`) it stands for.
 *
 * @since 0.1.0
 */
import type { RankLoad, RankUnknownReason } from "@loadledger/schema"
import type { LastHeard, PollFailure, RankEntry, WorkerEntry } from "./LastHeard.js"

/**
 * A load field a policy can require from a rank's row.
 *
 * @category models
 * @since 0.1.0
 */
export type LoadField = "numRunningReqs" | "numWaitingReqs" | "numTotalTokens" | "kvCacheUsage"

/**
 * Why a rank's load is not usable. Unhealthy (the worker did not answer its last poll): `unreachable`
 * (connection refused or reset), `poll-timeout` (no complete answer within the poll timeout),
 * `http-status` (non-2xx), `ejected` (taken out for a while by a passive health check, see `eject`). Unknown (the worker answers, its numbers cannot be used): `never-reported`,
 * `not-in-payload` (the last payload had no row for the rank), `stale` (older than the staleness
 * bound, or a frozen publisher timestamp), `decode-failed` (the body did not decode),
 * `rejected-row` (the decoder marked the row `unknown`: duplicate rank, negative count, invalid
 * number), `missing-field` (a required field is absent).
 *
 * @category models
 * @since 0.1.0
 */
export type UnknownReason =
  | "never-reported"
  | "not-in-payload"
  | "stale"
  | "unreachable"
  | "poll-timeout"
  | "http-status"
  | "ejected"
  | "decode-failed"
  | "rejected-row"
  | "missing-field"

/**
 * How to judge ranks. `staleAfterSeconds`: data older than this is unknown. `requiredFields`: a row
 * missing any of them is unknown. `requiredFieldsByWorker` (optional): per worker URL, the fields
 * that worker's rows must have instead of `requiredFields` (`makeRouter` fills it from each
 * source's `kind`, see `sourceRequiredFields`). `ageClock`: `"publisher-change"` ages a rank from the last time
 * its publisher's `timestamp` changed (a frozen publisher goes stale once a row received more than
 * `staleAfterSeconds` after that change still carries it; a rank not heard at all for twice the
 * bound is stale too), `"receipt"` from the last time a row arrived.
 *
 * @category models
 * @since 0.1.0
 */
export interface StatusOptions {
  readonly staleAfterSeconds: number
  readonly requiredFields: ReadonlyArray<LoadField>
  readonly requiredFieldsByWorker?: ReadonlyMap<string, ReadonlyArray<LoadField>> | undefined
  readonly ageClock: "publisher-change" | "receipt"
}

/**
 * One rank as the router sees it at `now`.
 *
 * - `condition`: `"known"` (fresh, decoded, every required field present), `"unknown"` (the worker
 *   answers but this rank's numbers cannot be used; `reason` says why) or `"unhealthy"` (the worker
 *   did not answer its last poll).
 * - `row`: the contract row for the rank, indexed for the router: `dpRank` is the router's global
 *   rank index, `worker` the worker URL, `workerDpRank` the engine's own rank. A known rank's row
 *   carries the decoded load fields as they came (absent stays absent); any other rank's row
 *   carries `unknown: { reason, message }` and no load fields.
 * - `ageSeconds`: age of the last row (see `ageClock`), absent for a rank that never reported.
 *
 * @category models
 * @since 0.2.0
 */
export interface RankStatus {
  readonly index: number
  readonly id: string
  readonly workerUrl: string
  readonly dpRank: number
  readonly condition: "known" | "unknown" | "unhealthy"
  readonly reason?: UnknownReason | undefined
  readonly missing?: ReadonlyArray<LoadField> | undefined
  readonly ageSeconds?: number | undefined
  readonly row: RankLoad
}

/**
 * The contract reason (@loadledger/schema's `RankUnknownReason`) for a router reason: unhealthy
 * reasons are `unreachable`, `stale` is `stale`, and a rank whose numbers never arrived in usable
 * form (never reported, not in the payload, body not decoded, a required field absent) is
 * `not-reported`. A rejected row keeps the decoder's own reason.
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
 * "idle" by default: no data, old data, failed polls and missing fields all make it unknown or
 * unhealthy (fault cases S04, S08, S09).
 *
 * @example
 * ```ts
 * import { makeLastHeard, rankStatus, recordRows } from "@loadledger/live"
 * let l = makeLastHeard([{ url: "u", dpSize: 2 }])
 * l = recordRows(l, "u", [{ dpRank: 0, numRunningReqs: 1, numWaitingReqs: 0 }], 5)
 * const s = rankStatus(l, 6, { staleAfterSeconds: 2, requiredFields: ["numRunningReqs"], ageClock: "receipt" })
 * s[0]?.condition // => "known"
 * s[0]?.row // => { dpRank: 0, worker: "u", workerDpRank: 0, numRunningReqs: 1, numWaitingReqs: 0 }
 * s[1]?.reason // => "not-in-payload"
 * s[1]?.row.unknown?.reason // => "not-reported"
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
  let missing: Array<LoadField> | undefined
  for (const f of options.requiredFieldsByWorker?.get(e.workerUrl) ?? options.requiredFields) {
    if (row[f] !== undefined) continue
    if (missing === undefined) missing = []
    missing.push(f)
  }
  if (missing !== undefined) return unknown("missing-field", `not reported: ${missing.join(", ")}`, missing)
  if (isStale(e, now, options))
    return unknown(
      "stale",
      `last change ${ageSeconds?.toFixed(3)} s ago, bound ${options.staleAfterSeconds} s`
    )
  return {
    ...identity,
    condition: "known",
    row: { ...row, dpRank: index, worker: e.workerUrl, workerDpRank: e.dpRank }
  }
}

/**
 * The token imbalance ratio the router sees: max over mean of `numTotalTokens` across the known
 * ranks that reported it (1 = balanced, N = all tokens on one of N ranks; 1 when every rank is
 * empty). Absent (`undefined`) when no known rank reported tokens. Same shape as SGLang's
 * `sglang:dp_attention_token_imbalance_ratio` histogram (buckets 1 … 64), named in
 * `fixtures/payloads/README.md`.
 *
 * @example
 * ```ts
 * import { tokenImbalanceRatio } from "@loadledger/live"
 * tokenImbalanceRatio([12000, 0, 0, 3000]) // => 3.2
 * ```
 *
 * @category metrics
 * @since 0.1.0
 */
export const tokenImbalanceRatio = (tokens: ReadonlyArray<number>): number | undefined => {
  if (tokens.length === 0) return undefined
  const max = Math.max(...tokens)
  const mean = tokens.reduce((a, b) => a + b, 0) / tokens.length
  return mean === 0 ? 1 : max / mean
}

/**
 * The token imbalance ratio over the known ranks that reported `numTotalTokens` (see
 * `tokenImbalanceRatio`); `undefined` when none did.
 *
 * @example
 * ```ts
 * import { applyPoll, makeRouter, observedImbalance, statuses } from "@loadledger/live"
 * import { totalTokens } from "@loadledger/policies"
 * import { Result } from "effect"
 * const rows = [12000, 0, 0, 3000].map((numTotalTokens, dpRank) => ({ dpRank, numTotalTokens }))
 * const r = applyPoll(makeRouter(totalTokens, [{ url: "u", dpSize: 4 }], { staleAfterSeconds: 1, requiredFields: ["numTotalTokens"], ageClock: "receipt" }), "u", Result.succeed(rows), 0)
 * observedImbalance(statuses(r, 0)) // => 3.2
 * ```
 *
 * @category getters
 * @since 0.1.0
 */
export const observedImbalance = (ranks: ReadonlyArray<RankStatus>): number | undefined => {
  const tokens: Array<number> = []
  for (const s of ranks) {
    const t = s.condition === "known" ? s.row.numTotalTokens : undefined
    if (t !== undefined) tokens.push(t)
  }
  return tokenImbalanceRatio(tokens)
}
