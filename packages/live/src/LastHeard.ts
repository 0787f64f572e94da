/**
 * What the router last heard from each rank of each worker, and when: the live side of the load
 * ledger. Rows are @loadledger/schema's `RankLoad`, kept as decoded.
 *
 * Pure and immutable: every function returns a new `LastHeard`; time (`now`, seconds on the
 * router's clock) is an argument.
 *
 * @since 0.2.0
 */
import type { RankLoad } from "@loadledger/schema"

import { checkWorkers } from "./internal/checks.js"
import type { RouterError, WorkerSpec } from "./Types.js"

/**
 * Why a poll of a worker failed. `unreachable` (connection refused/reset), `timeout` (no complete
 * answer within the poll timeout: hung or overloaded) and `http-status` (a non-2xx answer) make the
 * worker unhealthy; `decode` says it answered with a body the schema decoders reject (garbage, a
 * payload era they do not know, a body above the size bound, or a decode over its time budget).
 *
 * @category models
 * @since 0.1.0
 */
export interface PollFailure {
  readonly _tag: "PollFailure"
  readonly kind: "unreachable" | "timeout" | "http-status" | "decode"
  readonly message: string
}

/**
 * One virtual worker `url@dpRank`: its last decoded row (@loadledger/schema's `RankLoad`, exactly
 * as the decoder returned it: the engine's own `dpRank`, absent fields absent, `unknown` kept), when
 * it was received, and when the publisher's own `timestamp` last changed (both on the router's
 * clock, seconds).
 *
 * @category models
 * @since 0.1.0
 */
export interface RankEntry {
  readonly id: string
  readonly workerUrl: string
  readonly dpRank: number
  readonly row?: RankLoad | undefined
  readonly receivedAtSeconds?: number | undefined
  readonly changedAtSeconds?: number | undefined
}

/**
 * Per physical worker: poll counters and the last failure (cleared by the next success).
 *
 * @category models
 * @since 0.1.0
 */
export interface WorkerEntry {
  readonly url: string
  readonly dpSize: number
  readonly polls: number
  readonly fetchFailures: number
  readonly decodeFailures: number
  readonly lastSuccessSeconds?: number | undefined
  readonly failure?: (PollFailure & { readonly atSeconds: number }) | undefined
  /**
   * Set by `eject`: the worker is unhealthy until `untilSeconds`, or until the first successful
   * poll received after `sinceSeconds` (whichever comes first; a hold of `Infinity` only ends
   * with `addWorker`).
   */
  readonly ejected?:
    | { readonly untilSeconds: number; readonly message: string; readonly sinceSeconds?: number | undefined }
    | undefined
}

/**
 * What was last heard: workers in configuration order, ranks worker-major (`ranks[i]` is the
 * router's global rank index `i`). `error`: set when `makeLastHeard` refused its worker list (then
 * there are no workers and no ranks); the functions below keep it.
 *
 * @category models
 * @since 0.2.0
 */
export interface LastHeard {
  readonly workers: ReadonlyArray<WorkerEntry>
  readonly ranks: ReadonlyArray<RankEntry>
  readonly error?: RouterError | undefined
}

/**
 * The virtual worker id `url@dpRank` (SGLang model gateway's DP-aware naming).
 *
 * @example
 * ```ts
 * import { rankId } from "@loadledger/live"

 * rankId("http://127.0.0.1:30000", 3) // => "http://127.0.0.1:30000@3"
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const rankId = (url: string, dpRank: number): string => `${url}@${dpRank}`

/**
 * Nothing heard yet from `workers`: every rank is known to exist and has reported nothing.
 *
 * **When to use**: once, when a router starts.
 *
 * **Errors**: a worker list that is not an array of `WorkerSpec`s (see there: a `url` that is not a
 * non-empty string or is given twice, a `dpSize` that is not an integer from 1 to 1024, a `kind`
 * that is not a `SourceKind`) gives a ledger with no workers and no ranks whose `error` is a
 * `RouterError` `InvalidInput` naming the first field at fault.
 *
 * @example
 * ```ts
 * import { makeLastHeard } from "@loadledger/live"

 * const l = makeLastHeard([{ url: "http://127.0.0.1:30000", dpSize: 2 }])
 * l.ranks.map((r) => r.id) // => ["http://127.0.0.1:30000@0", "http://127.0.0.1:30000@1"]
 * l.error // => undefined
 * const bad = makeLastHeard([{ url: "u", dpSize: 2.5 }])
 * bad.error?.message // => "workers[0].dpSize must be an integer from 1 to 1024, got 2.5"
 * bad.ranks // => []
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const makeLastHeard = (workers: ReadonlyArray<WorkerSpec>): LastHeard => {
  const error = checkWorkers(workers, "workers")
  return error === undefined ? heardNothing(workers) : { workers: [], ranks: [], error }
}

const heardNothing = (workers: ReadonlyArray<WorkerSpec>): LastHeard => ({
  workers: workers.map((w) => ({
    url: w.url,
    dpSize: w.dpSize,
    polls: 0,
    fetchFailures: 0,
    decodeFailures: 0
  })),
  ranks: workers.flatMap((w) =>
    Array.from({ length: w.dpSize }, (_, dpRank) => ({ id: rankId(w.url, dpRank), workerUrl: w.url, dpRank }))
  )
})

/**
 * Fold one successful poll of `url` into the ledger: each rank of that worker takes the row with
 * its `dpRank`; a rank the payload did not report loses its previous row (it becomes unknown, it is
 * not kept at an old value). Rows for ranks the worker does not have are ignored.
 *
 * With `mode: "merge"` (published frames that carry one rank each, such as SGLang's LoadStat) only the
 * ranks present are updated and the others keep their rows.
 *
 * **Gotchas**: `changedAtSeconds` only moves when the publisher's `timestamp` changes, so a
 * publisher that keeps answering with a frozen timestamp ages like one that stopped answering
 * (fault case S04). Rows without a publisher timestamp count as changed on every receipt.
 *
 * @example
 * ```ts
 * import { makeLastHeard, recordRows } from "@loadledger/live"

 * let l = makeLastHeard([{ url: "u", dpSize: 2 }])
 * l = recordRows(l, "u", [{ dpRank: 1, timestamp: 7, numRunningReqs: 2 }], 10)
 * l = recordRows(l, "u", [{ dpRank: 1, timestamp: 7, numRunningReqs: 2 }], 11)
 * l.ranks[1]?.receivedAtSeconds // => 11
 * // same publisher timestamp: the row has not changed since it was first received
 * l.ranks[1]?.changedAtSeconds // => 10
 * l.ranks[0]?.row // => undefined
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const recordRows = (
  ledger: LastHeard,
  url: string,
  rows: ReadonlyArray<RankLoad>,
  now: number,
  mode: "replace" | "merge" = "replace"
): LastHeard => {
  const byRank = new Map<number, RankLoad>()
  for (const r of rows) byRank.set(r.dpRank, r)
  return {
    ...ledger,
    workers: ledger.workers.map((w) =>
      w.url === url
        ? {
            ...w,
            polls: w.polls + 1,
            lastSuccessSeconds: now,
            failure: undefined,
            ejected: clearedBy(w.ejected, now)
          }
        : w
    ),
    ranks: ledger.ranks.map((e) => {
      if (e.workerUrl !== url) return e
      const row = byRank.get(e.dpRank)
      if (row === undefined && mode === "merge") return e
      if (row === undefined)
        return { ...e, row: undefined, receivedAtSeconds: now, changedAtSeconds: undefined }
      const sameTimestamp =
        row.timestamp !== undefined && e.row?.timestamp !== undefined && row.timestamp === e.row.timestamp
      return {
        ...e,
        row,
        receivedAtSeconds: now,
        changedAtSeconds: sameTimestamp ? (e.changedAtSeconds ?? now) : now
      }
    })
  }
}

/**
 * A finite ejection ends with the first good poll received after it began (the state law "a mark
 * is cleared by the first evidence that clears it": sgl-project/sglang #31206, a breaker left
 * half-open, "permanent fake-dead" worker, after its worker recovered). A removal (`Infinity`) stays.
 */
const clearedBy = (ejected: WorkerEntry["ejected"], now: number): WorkerEntry["ejected"] =>
  ejected === undefined ||
  ejected.untilSeconds === Number.POSITIVE_INFINITY ||
  ejected.sinceSeconds === undefined ||
  now <= ejected.sinceSeconds
    ? ejected
    : undefined

/**
 * Record a failed poll of `url`. The worker's ranks keep their last rows (for inspection) but are
 * reported unknown by `rankStatus` until the next successful poll.
 *
 * @example
 * ```ts
 * import { makeLastHeard, recordFailure } from "@loadledger/live"

 * const l = recordFailure(makeLastHeard([{ url: "u", dpSize: 1 }]), "u", { _tag: "PollFailure", kind: "decode", message: "bad" }, 3)
 * l.workers[0]?.decodeFailures // => 1
 * l.workers[0]?.fetchFailures // => 0
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const recordFailure = (
  ledger: LastHeard,
  url: string,
  failure: PollFailure,
  now: number
): LastHeard => ({
  ...ledger,
  workers: ledger.workers.map((w) =>
    w.url === url
      ? {
          ...w,
          polls: w.polls + 1,
          fetchFailures: w.fetchFailures + (failure.kind === "decode" ? 0 : 1),
          decodeFailures: w.decodeFailures + (failure.kind === "decode" ? 1 : 0),
          failure: { ...failure, atSeconds: now }
        }
      : w
  )
})

/**
 * Eject worker `url` until `untilSeconds` (router clock): its ranks are unhealthy until then, or,
 * when `sinceSeconds` (the ejection's time) is given and the hold is finite, until the first
 * successful poll received after `sinceSeconds`: a healthy report is the evidence that clears the
 * mark, so the worker is back within one poll interval (a half-open breaker's probe). For passive
 * health checks: a proxy that sees an engine fail requests (e.g. consecutive 5xx) takes it out;
 * it is ejected again if it keeps failing.
 *
 * @example
 * ```ts
 * import { eject, makeLastHeard, recordRows } from "@loadledger/live"

 * const l = eject(makeLastHeard([{ url: "u", dpSize: 1 }]), "u", 15, "3 consecutive upstream failures")
 * l.workers[0]?.ejected // => { untilSeconds: 15, message: "3 consecutive upstream failures", sinceSeconds: undefined }
 * const m = eject(makeLastHeard([{ url: "u", dpSize: 1 }]), "u", 15, "5xx", 5)
 * recordRows(m, "u", [{ dpRank: 0, numRunningReqs: 0 }], 6).workers[0]?.ejected // => undefined
 * ```
 *
 * @category combinators
 * @since 0.2.0
 */
export const eject = (
  heard: LastHeard,
  url: string,
  untilSeconds: number,
  message: string,
  sinceSeconds?: number
): LastHeard => ({
  ...heard,
  workers: heard.workers.map((w) =>
    w.url === url ? { ...w, ejected: { untilSeconds, message, sinceSeconds } } : w
  )
})
