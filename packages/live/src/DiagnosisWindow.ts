/**
 * The live router's diagnosis: the loads it polls, per worker, kept over a sliding window of
 * router seconds and diagnosed by the same pure core as `loadledger diagnose` (`Diagnose.ts`),
 * for its `/metrics` page (`loadledger_rank_diagnosis{worker,dp_rank,kind}`). Pure: time comes in
 * as an argument.
 *
 * @since 0.7.0
 */
import type { RankLoad } from "@loadledger/schema"
import { diagnose } from "./Diagnose.js"
import type { DiagnoseRow, Diagnosis } from "./DiagnoseTypes.js"

/**
 * The reports kept per worker URL: each poll's rows as `DiagnoseRow`s with the router time it
 * arrived (seconds), oldest first.
 *
 * @category diagnose
 * @since 0.7.0
 */
export type DiagnosisWindow = ReadonlyMap<
  string,
  ReadonlyArray<{ readonly atSeconds: number; readonly rows: ReadonlyArray<DiagnoseRow> }>
>

/** At most this many reports per worker (an hour at one poll a second). */
const MAX_REPORTS = 3600

/** A polled row as the diagnosis reads it, or undefined when a required field is absent. */
const rowOf = (l: RankLoad): DiagnoseRow | undefined =>
  l.numRunningReqs === undefined || l.numUsedTokens === undefined || l.utilization === undefined
    ? undefined
    : {
        dpRank: l.workerDpRank ?? l.dpRank,
        numRunningReqs: l.numRunningReqs,
        numUsedTokens: l.numUsedTokens,
        utilization: l.utilization,
        ...(l.numWaitingReqs === undefined ? {} : { numWaitingReqs: l.numWaitingReqs }),
        ...(l.cacheHitRate === undefined ? {} : { cacheHitRate: l.cacheHitRate })
      }

/**
 * Add one poll of `worker` (its rows, one per rank) at `nowSeconds` and drop the reports older
 * than `windowSeconds`. A poll where a rank lacks `numRunningReqs`, `numUsedTokens` or
 * `utilization` (a vLLM page publishes no utilization) adds nothing: the diagnosis needs every
 * rank's. Returns a new window; `window` is not changed.
 *
 * @example
 * ```ts
 * import { addDiagnosisReport } from "@loadledger/live"
 * const row = (dpRank: number) => ({ dpRank, numRunningReqs: 4, numUsedTokens: 4000, utilization: 0.5 })
 * let w = addDiagnosisReport(new Map(), "http://a", [row(0), row(1)], 10, 60)
 * w = addDiagnosisReport(w, "http://a", [row(0), row(1)], 100, 60)
 * w.get("http://a")!.map((r) => r.atSeconds) // => [100]
 * addDiagnosisReport(w, "http://a", [{ dpRank: 0, numRunningReqs: 1 }], 101, 60).get("http://a")!.length // => 1
 * ```
 *
 * @category diagnose
 * @since 0.7.0
 */
export const addDiagnosisReport = (
  window: DiagnosisWindow,
  worker: string,
  rows: ReadonlyArray<RankLoad>,
  nowSeconds: number,
  windowSeconds: number
): DiagnosisWindow => {
  const read = rows.map(rowOf)
  const kept = (window.get(worker) ?? []).filter((r) => r.atSeconds > nowSeconds - windowSeconds)
  const next = new Map(window)
  if (read.length < 2 || read.some((r) => r === undefined)) {
    next.set(worker, kept)
    return next
  }
  const sorted = (read as Array<DiagnoseRow>).sort((a, b) => a.dpRank - b.dpRank)
  next.set(worker, [...kept, { atSeconds: nowSeconds, rows: sorted }].slice(-MAX_REPORTS))
  return next
}

/**
 * Each worker's diagnosis over the window (workers with no report left out).
 *
 * @example
 * ```ts
 * import { addDiagnosisReport, diagnoseWindow } from "@loadledger/live"
 * const row = (dpRank: number, u: number) => ({ dpRank, numRunningReqs: 8, numUsedTokens: 8000, utilization: u })
 * let w = addDiagnosisReport(new Map(), "http://a", [row(0, 0.5), row(1, 0.5), row(2, 0.9)], 1, 60)
 * w = addDiagnosisReport(w, "http://a", [row(0, 0.51), row(1, 0.49), row(2, 0.9)], 2, 60)
 * diagnoseWindow(w)[0]!.diagnosis.ranks.map((r) => r.kind) // => ["ok", "ok", "hardware"]
 * ```
 *
 * @category diagnose
 * @since 0.7.0
 */
export const diagnoseWindow = (
  window: DiagnosisWindow
): ReadonlyArray<{ readonly worker: string; readonly diagnosis: Diagnosis }> =>
  [...window].flatMap(([worker, reports]) =>
    reports.length === 0 ? [] : [{ worker, diagnosis: diagnose(reports.map((r) => r.rows)) }]
  )
