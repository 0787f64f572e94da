/**
 * Which ranks the router may trust right now, and how old their data is.
 *
 * @since 0.1.0
 */
import type { RankLoad } from "@loadledger/policies"
import type { Ledger, PollFailure, RankEntry } from "./Ledger.js"

/**
 * A load field a policy can read from a rank's row.
 *
 * @category models
 * @since 0.1.0
 */
export type LoadField = "numRunningReqs" | "numWaitingReqs" | "numTotalTokens" | "kvCacheUsage"

/**
 * Why a rank is unknown: it never reported; its worker's last payload had no row for it; its data is
 * older than the staleness bound; its worker's last poll was refused or answered non-2xx
 * (`unreachable`); its last poll timed out (`poll-timeout`: slow, not known dead); the last body did
 * not decode; the decoder rejected that rank's row (`rejected-row`: duplicate rank, negative count;
 * see `LedgerRow.unknown` in @loadledger/schema); or a field the policy needs is absent.
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
  | "decode-failed"
  | "rejected-row"
  | "missing-field"

/**
 * How to judge ranks. `staleAfterSeconds`: data older than this is unknown. `requiredFields`: a row
 * missing any of them is unknown. `ageClock`: `"publisher-change"` ages a rank from the last time
 * its publisher's `timestamp` changed (a frozen publisher goes stale), `"receipt"` from the last
 * time a row arrived.
 *
 * @category models
 * @since 0.1.0
 */
export interface StatusOptions {
  readonly staleAfterSeconds: number
  readonly requiredFields: ReadonlyArray<LoadField>
  readonly ageClock: "publisher-change" | "receipt"
}

/**
 * One rank as the router sees it at `now`. `known` ranks carry the `load` handed to the policy;
 * `reachable` is false while the worker's last poll was refused (connection) or answered non-2xx.
 * `ageSeconds` is absent for a rank that never reported. `assumedZero` lists counts the policy does
 * not require that the source did not report (sent to the policy as 0; see `requiredFields`).
 *
 * @category models
 * @since 0.1.0
 */
export interface RankStatus {
  readonly index: number
  readonly id: string
  readonly workerUrl: string
  readonly dpRank: number
  readonly known: boolean
  readonly reachable: boolean
  readonly reason?: UnknownReason | undefined
  readonly missing?: ReadonlyArray<LoadField> | undefined
  readonly ageSeconds?: number | undefined
  readonly load?: RankLoad | undefined
  readonly assumedZero?: ReadonlyArray<LoadField> | undefined
}

/**
 * Judge every rank of the ledger at time `now` (seconds, router clock).
 *
 * **When to use**: before each decision, and for metrics; it is cheap (one pass over the ranks).
 * A rank is never "idle" by default: no data, old data, failed polls and missing fields all make it
 * unknown (fault cases S04, S08, S09).
 *
 * @example
 * ```ts
 * import { makeLedger, rankStatus, recordRows } from "@loadledger/live"
 * let l = makeLedger([{ url: "u", dpSize: 2 }])
 * l = recordRows(l, "u", [{ dpRank: 0, numRunningReqs: 1, numWaitingReqs: 0, numTotalTokens: 10 }], 5)
 * const s = rankStatus(l, 6, { staleAfterSeconds: 2, requiredFields: ["numRunningReqs"], ageClock: "receipt" })
 * s[0]?.known // => true
 * s[0]?.ageSeconds // => 1
 * s[1]?.known // => false
 * s[1]?.reason // => "not-in-payload"
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const rankStatus = (
  ledger: Ledger,
  now: number,
  options: StatusOptions
): ReadonlyArray<RankStatus> => {
  const failures = new Map<string, PollFailure | undefined>()
  for (const w of ledger.workers) failures.set(w.url, w.failure)
  const out: Array<RankStatus> = new Array(ledger.ranks.length)
  for (let index = 0; index < ledger.ranks.length; index++) {
    const e = ledger.ranks[index]!
    out[index] = judge(e, index, failures.get(e.workerUrl), now, options)
  }
  return out
}

const countFields = ["numRunningReqs", "numWaitingReqs", "numTotalTokens"] as const

const judge = (
  e: RankEntry,
  index: number,
  failure: PollFailure | undefined,
  now: number,
  options: StatusOptions
): RankStatus => {
  const reachable = failure === undefined || failure.kind === "decode" || failure.kind === "timeout"
  const since = options.ageClock === "receipt" ? e.receivedAtSeconds : e.changedAtSeconds
  const row = e.row
  const ageSeconds = row !== undefined && since !== undefined ? Math.max(0, now - since) : undefined
  let reason: UnknownReason | undefined
  let missing: Array<LoadField> | undefined
  if (failure !== undefined) {
    reason =
      failure.kind === "decode"
        ? "decode-failed"
        : failure.kind === "timeout"
          ? "poll-timeout"
          : "unreachable"
  } else if (e.receivedAtSeconds === undefined) reason = "never-reported"
  else if (row === undefined) reason = "not-in-payload"
  else if (row.unknown !== undefined) reason = "rejected-row"
  else {
    for (const f of options.requiredFields) {
      if (row[f] !== undefined) continue
      if (missing === undefined) missing = []
      missing.push(f)
    }
    if (missing !== undefined) reason = "missing-field"
    else if (ageSeconds === undefined || ageSeconds > options.staleAfterSeconds) reason = "stale"
  }
  if (reason !== undefined || row === undefined) {
    return {
      index,
      id: e.id,
      workerUrl: e.workerUrl,
      dpRank: e.dpRank,
      known: false,
      reachable,
      reason,
      missing,
      ageSeconds
    }
  }
  let assumedZero: Array<LoadField> | undefined
  for (const f of countFields) {
    if (row[f] !== undefined) continue
    if (assumedZero === undefined) assumedZero = []
    assumedZero.push(f)
  }
  const load: RankLoad = {
    dpRank: index,
    timestamp: row.timestamp ?? e.changedAtSeconds ?? now,
    numRunningReqs: row.numRunningReqs ?? 0,
    numWaitingReqs: row.numWaitingReqs ?? 0,
    numTotalTokens: row.numTotalTokens ?? 0,
    kvCacheUsage: row.kvCacheUsage
  }
  return {
    index,
    id: e.id,
    workerUrl: e.workerUrl,
    dpRank: e.dpRank,
    known: true,
    reachable,
    ageSeconds,
    load,
    assumedZero
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
