/**
 * Each rank's kind of slow for the report's heat map: the run's step log (`recordSteps: "loads"`,
 * which `simulate --report` turns on) read as the per-second load reports the engine would have
 * published (`loadReportsOf`) and diagnosed by the same pure core as `loadledger diagnose`.
 *
 * @since 0.7.0
 */
import type { PolicyResult } from "@loadledger/sim"
import { loadReportsOf } from "@loadledger/sim"
import { type DiagnoseRow, diagnose, type RankVerdict } from "../../diagnose/diagnose.js"

/**
 * The kind of each of `dpSize` ranks (index = rank), or `undefined` when the run kept no step log
 * or no report had every rank busy (nothing to judge: the heat map then marks no rank).
 *
 * @example
 * ```ts
 * import { rankKindsOf } from "./rankKinds.js"
 * rankKindsOf({ stepLog: undefined } as never, 2) // => undefined
 * ```
 *
 * @category report
 * @since 0.7.0
 */
export const rankKindsOf = (
  result: PolicyResult,
  dpSize: number
): ReadonlyArray<RankVerdict["kind"]> | undefined => {
  const log = result.stepLog
  if (log === undefined || log.length === 0 || dpSize < 2) return undefined
  // a report where a rank lacks a field the diagnosis needs (a vLLM rank publishes no
  // utilization) is left out, as the live router's window leaves it out: unknown, not 0
  const reports = loadReportsOf(log, dpSize, 1).flatMap((r) => {
    const rows: Array<DiagnoseRow> = []
    for (const l of r.loads) {
      if (l.numRunningReqs === undefined || l.numUsedTokens === undefined || l.utilization === undefined)
        return []
      rows.push({
        dpRank: l.dpRank,
        numRunningReqs: l.numRunningReqs,
        numUsedTokens: l.numUsedTokens,
        utilization: l.utilization,
        ...(l.numWaitingReqs === undefined ? {} : { numWaitingReqs: l.numWaitingReqs }),
        ...(l.cacheHitRate === undefined ? {} : { cacheHitRate: l.cacheHitRate }),
        prefillTokens: l.prefillTokens
      })
    }
    return [rows]
  })
  const d = diagnose(reports)
  return d.group.evidence.reports === 0 ? undefined : d.ranks.map((r) => r.kind)
}
