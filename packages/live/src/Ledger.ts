/**
 * The live ledger: what the router last heard from each rank of each worker, and when.
 *
 * Pure and immutable: every function returns a new `Ledger`; time (`now`, seconds on the router's
 * clock) is an argument.
 *
 * @since 0.1.0
 */
import type { LedgerRow as SchemaLedgerRow } from "@loadledger/schema"

/**
 * One rank's decoded load, exactly as `decodeLedger` of @loadledger/schema returns it: the row the
 * ledger keeps for the virtual worker `url@dpRank` until the next poll of that worker.
 *
 * **When to use**: to build rows yourself for {@link recordRows} (tests, a custom transport, a
 * replay), or to read `RankEntry.row`. Rows from a live poll come from the schema decoders.
 *
 * Shape: `dpRank` (0-based, the engine index for vLLM) and optional load fields named from the wire,
 * e.g. `numRunningReqs`, `numWaitingReqs` (requests), `numTotalTokens` (tokens), `kvCacheUsage`
 * (0..1), `timestamp` (float epoch seconds on the publisher's clock; it drives `changedAtSeconds`).
 * A field the payload did not report is absent (`undefined`), never 0. A row with `unknown` set
 * (duplicate rank, negative count) carries no load fields: the rank's load is unknown. Payloads the
 * decoders reject never become rows: they are a {@link PollFailure} with `kind: "decode"`.
 *
 * Upstream: the load fields of SGLang `/v1/loads` (sgl-project/sglang
 * `python/sglang/srt/entrypoints/v1_loads.py` @ 0564b5215b333749d722348c3b3d9b92c3de8c44),
 * `/get_load` (`python/sglang/srt/entrypoints/http_server.py`) and vLLM's per-engine counts
 * (vllm-project/vllm `vllm/v1/engine/coordinator.py` @ 00080ee13c7a451fce071ccb8d0e94d395acf5a7),
 * as normalized by `LedgerRow` in @loadledger/schema (`packages/schema/src/Ledger.ts`).
 *
 * @example
 * ```ts
 * import { type LedgerRow, makeLedger, recordRows } from "@loadledger/live"
 * const row: LedgerRow = { dpRank: 1, timestamp: 7, numRunningReqs: 2, numTotalTokens: 900 }
 * const l = recordRows(makeLedger([{ url: "u", dpSize: 2 }]), "u", [row], 10)
 * l.ranks[1]?.row // => { dpRank: 1, timestamp: 7, numRunningReqs: 2, numTotalTokens: 900 }
 * l.ranks[0]?.row // => undefined
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type LedgerRow = SchemaLedgerRow

/**
 * One physical worker (one base URL) and how many DP ranks it serves. A worker with `dpSize` N
 * becomes N virtual workers `url@0 … url@N-1` in the ledger, all filled from one fetch.
 *
 * @category models
 * @since 0.1.0
 */
export interface WorkerSpec {
  readonly url: string
  readonly dpSize: number
}

/**
 * Why a poll of a worker failed. `unreachable` (connection refused/reset), `timeout` and `http-status`
 * (a non-2xx answer) say the worker cannot be reached; `decode` says it answered with a body the
 * schema decoders reject (garbage, or a payload era they do not know).
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
 * One virtual worker `url@dpRank`: its last decoded row, when it was received, and when the
 * publisher's own `timestamp` last changed (both on the router's clock, seconds).
 *
 * @category models
 * @since 0.1.0
 */
export interface RankEntry {
  readonly id: string
  readonly workerUrl: string
  readonly dpRank: number
  readonly row?: LedgerRow | undefined
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
}

/**
 * The whole ledger: workers in configuration order, ranks worker-major (`ranks[i]` is the router's
 * global rank index `i`).
 *
 * @category models
 * @since 0.1.0
 */
export interface Ledger {
  readonly workers: ReadonlyArray<WorkerEntry>
  readonly ranks: ReadonlyArray<RankEntry>
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
 * An empty ledger for `workers`: every rank is known to exist and has reported nothing yet.
 *
 * **When to use**: once, when a router starts.
 *
 * @example
 * ```ts
 * import { makeLedger } from "@loadledger/live"
 * const l = makeLedger([{ url: "http://127.0.0.1:30000", dpSize: 2 }])
 * l.ranks.map((r) => r.id) // => ["http://127.0.0.1:30000@0", "http://127.0.0.1:30000@1"]
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const makeLedger = (workers: ReadonlyArray<WorkerSpec>): Ledger => ({
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
 * import { makeLedger, recordRows } from "@loadledger/live"
 * let l = makeLedger([{ url: "u", dpSize: 2 }])
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
  ledger: Ledger,
  url: string,
  rows: ReadonlyArray<LedgerRow>,
  now: number,
  mode: "replace" | "merge" = "replace"
): Ledger => {
  const byRank = new Map<number, LedgerRow>()
  for (const r of rows) byRank.set(r.dpRank, r)
  return {
    workers: ledger.workers.map((w) =>
      w.url === url ? { ...w, polls: w.polls + 1, lastSuccessSeconds: now, failure: undefined } : w
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
 * Record a failed poll of `url`. The worker's ranks keep their last rows (for inspection) but are
 * reported unknown by `rankStatus` until the next successful poll.
 *
 * @example
 * ```ts
 * import { makeLedger, recordFailure } from "@loadledger/live"
 * const l = recordFailure(makeLedger([{ url: "u", dpSize: 1 }]), "u", { _tag: "PollFailure", kind: "decode", message: "bad" }, 3)
 * l.workers[0]?.decodeFailures // => 1
 * l.workers[0]?.fetchFailures // => 0
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const recordFailure = (ledger: Ledger, url: string, failure: PollFailure, now: number): Ledger => ({
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
  ),
  ranks: ledger.ranks
})
