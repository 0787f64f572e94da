/**
 * Reading a `/v1/loads` time series (JSON lines, as `simulate --emit-loads` writes or a recorder
 * of a live engine) into the rows `diagnose` reads, through @loadledger/schema's `decodeV1Loads`.
 *
 * @since 0.6.0
 */
import { decodeV1Loads, type LoadEntry } from "@loadledger/schema"
import type { DiagnoseRow } from "./diagnose.js"

/**
 * A line that is not a `/v1/loads` body, or an entry missing a field the diagnosis needs. `line`:
 * 1-based; `field` (since 0.7.0): the absent required field's path in the line's body
 * (`loads[j].num_running_reqs`, `loads[j].num_used_tokens`, `loads[j].utilization`), absent
 * when the line itself is bad.
 *
 * @category diagnose
 * @since 0.6.0
 */
export interface LoadsLineError {
  readonly _tag: "LoadsLineError"
  readonly line: number
  readonly field?: string | undefined
  readonly message: string
}

/** The fields the diagnosis needs, wire name by row name. */
const REQUIRED = [
  ["numRunningReqs", "num_running_reqs"],
  ["numUsedTokens", "num_used_tokens"],
  ["utilization", "utilization"]
] as const

/**
 * Parse JSON lines into one array of rows per report (blank lines skipped). `prefillTokens` is the
 * growth of each rank's `total_prefill_uncached_tokens` since its previous report (its total for
 * the first). A missing `num_running_reqs`, `num_used_tokens` or `utilization` is an error naming
 * the line and field; an absent `num_waiting_reqs`, `cache_hit_rate` or
 * `total_prefill_uncached_tokens` stays absent in the row (unknown, never read as 0), and the
 * diagnosis' evidence says so.
 *
 * @example
 * ```ts
 * import { parseLoadsLines } from "./readLoads.js"
 * const line = (t: number, p: number) => JSON.stringify({ loads: [{ timestamp: t, dp_rank: 0, num_running_reqs: 3, num_used_tokens: 90, utilization: 0.5, gen_throughput: 40, cache_hit_rate: 0, total_prefill_uncached_tokens: p }] })
 * const r = parseLoadsLines(`${line(1, 100)}\n${line(2, 160)}\n`)
 * Array.isArray(r) && r.map((rows) => rows[0]!.prefillTokens) // => [100, 60]
 * const bad = parseLoadsLines('{"loads":[{"dp_rank":0}]}') as { field?: string; message?: string }
 * bad.message // => "line 1: loads[0] has no num_running_reqs"
 * bad.field // => "loads[0].num_running_reqs"
 * const rows = parseLoadsLines('{"loads":[{"dp_rank":0,"num_running_reqs":2,"num_used_tokens":50,"utilization":0.4}]}')
 * Array.isArray(rows) && rows[0]![0] // => { dpRank: 0, numRunningReqs: 2, numUsedTokens: 50, utilization: 0.4 }
 * ```
 *
 * @category diagnose
 * @since 0.6.0
 */
export const parseLoadsLines = (text: string): ReadonlyArray<ReadonlyArray<DiagnoseRow>> | LoadsLineError => {
  const out: Array<ReadonlyArray<DiagnoseRow>> = []
  const last = new Map<number, number>()
  const lines = text.split("\n")
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!.trim()
    if (text === "") continue
    const err = (message: string, field?: string): LoadsLineError => ({
      _tag: "LoadsLineError",
      line: i + 1,
      ...(field === undefined ? {} : { field }),
      message: `line ${i + 1}: ${message}`
    })
    let raw: unknown
    try {
      raw = JSON.parse(text)
    } catch (e) {
      return err(`not JSON (${(e as Error).message})`)
    }
    const d = decodeV1Loads(raw)
    if (d._tag === "Failure") return err(d.failure.message)
    const rows: Array<DiagnoseRow> = []
    const loads = d.success.response.loads as ReadonlyArray<LoadEntry>
    for (let j = 0; j < loads.length; j++) {
      const l = loads[j]!
      for (const [name, wire] of REQUIRED)
        if (l[name] === undefined) return err(`loads[${j}] has no ${wire}`, `loads[${j}].${wire}`)
      const dpRank = l.dpRank ?? j
      const total = "totalPrefillUncachedTokens" in l ? l.totalPrefillUncachedTokens : undefined
      rows.push({
        dpRank,
        numRunningReqs: l.numRunningReqs!,
        ...(l.numWaitingReqs === undefined ? {} : { numWaitingReqs: l.numWaitingReqs }),
        numUsedTokens: l.numUsedTokens!,
        utilization: l.utilization!,
        ...(l.cacheHitRate === undefined ? {} : { cacheHitRate: l.cacheHitRate }),
        ...(total === undefined ? {} : { prefillTokens: Math.max(0, total - (last.get(dpRank) ?? 0)) })
      })
      if (total !== undefined) last.set(dpRank, total)
    }
    out.push(rows)
  }
  return out
}
