/**
 * `simulate --emit-loads FILE`: the simulator's per-rank load reports (`loadReportsOf`) written as
 * SGLang `/v1/loads` responses, one JSON object a line, through @loadledger/schema's encoder
 * (`LoadSnapshotV2` and `toDict`, the shape of sglang `v1_loads.py` @ 0564b521), so
 * `decodeV1Loads` reads every line back.
 *
 * @since 0.6.0
 */
import { LoadSnapshotV2, toDict } from "@loadledger/schema"
import type { LoadReport } from "@loadledger/sim"
import * as Schema from "effect/Schema"

const snapshot = Schema.decodeUnknownSync(LoadSnapshotV2)

/**
 * One report as a `/v1/loads` response body (shm-v2 era): the envelope's `timestamp` (ISO-8601,
 * simulated seconds from the Unix epoch), `num_accelerators`, and per rank the core keys with
 * `total_prefill_uncached_tokens` the rank's running total `prefilled` (tokens, index = rank).
 * `policy` names the run (an extra key: readers ignore it).
 *
 * @example
 * ```ts
 * import { v1LoadsBody } from "./emitLoads.js"
 * const report = { timestampSeconds: 1, loads: [{ dpRank: 0, timestamp: 1, numRunningReqs: 2, numWaitingReqs: 0, numUsedTokens: 900, cacheHitRate: 0, genThroughput: 80, utilization: 0.5, prefillTokens: 100 }] }
 * const body = v1LoadsBody(report, [100], "round-robin")
 * String(body.timestamp) // => "1970-01-01T00:00:01.000Z"
 * const rows = body.loads as Array<Record<string, unknown>>
 * rows[0]!.gen_throughput // => 80
 * ```
 *
 * @category diagnose
 * @since 0.6.0
 */
export const v1LoadsBody = (
  report: LoadReport,
  prefilled: ReadonlyArray<number>,
  policy: string
): Record<string, unknown> => ({
  timestamp: new Date(report.timestampSeconds * 1000).toISOString(),
  policy,
  num_accelerators: report.loads.length,
  loads: report.loads.map((l, i) => {
    const s = snapshot({
      timestamp: l.timestamp,
      dp_rank: l.dpRank,
      num_running_reqs: l.numRunningReqs,
      num_waiting_reqs: l.numWaitingReqs,
      num_used_tokens: l.numUsedTokens,
      gen_throughput: l.genThroughput,
      cache_hit_rate: l.cacheHitRate,
      utilization: l.utilization,
      total_prefill_uncached_tokens: Math.round(prefilled[i] ?? 0)
    })
    const d = toDict(s, ["core"], "shm-v2")
    if (d._tag === "Failure") throw new Error(d.failure.message) // ["core"] is a valid include
    return d.success
  })
})

/**
 * Every report of a run as JSON lines (`\n`-terminated), with running prefill totals.
 *
 * @example
 * ```ts
 * import { v1LoadsLines } from "./emitLoads.js"
 * v1LoadsLines([], "round-robin") // => ""
 * ```
 *
 * @category diagnose
 * @since 0.6.0
 */
export const v1LoadsLines = (reports: ReadonlyArray<LoadReport>, policy: string): string => {
  const totals: Array<number> = []
  let out = ""
  for (const r of reports) {
    r.loads.forEach((l, i) => {
      totals[i] = (totals[i] ?? 0) + l.prefillTokens
    })
    out += `${JSON.stringify(v1LoadsBody(r, totals, policy))}\n`
  }
  return out
}
