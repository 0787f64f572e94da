/**
 * A sweep's combined view: one row per finished cell with the headline numbers, as JSON rows and as
 * a Markdown table.
 *
 * @since 0.2.0
 */
import { outcomeLabel, runOutcome } from "../commands/simulateTable.js"
import { frontEndLabel } from "./Cells.js"
import type { CellResult } from "./runCell.js"

/**
 * One cell's headline numbers: latencies in seconds (ITL in ms), shares 0..1, `status` as the
 * simulator names it (`Completed` when every request finished or was rejected), the request counts
 * (`rejected` never ran, `stalled` were held on a stuck rank; since 0.3.0).
 *
 * @category sweep
 * @since 0.2.0
 */
export interface SummaryRow {
  readonly id: string
  readonly trace: string
  readonly rate: number
  readonly dp: number
  readonly frontEnd: string
  readonly policy: string
  readonly status: string
  readonly finished: number
  readonly total: number
  readonly rejected: number
  readonly stalled: number
  readonly ttftP50Seconds: number | undefined
  readonly ttftP99Seconds: number | undefined
  readonly itlP50Ms: number | undefined
  readonly itlP99Ms: number | undefined
  readonly e2eP99Seconds: number | undefined
  readonly syncWaitShare: number
  readonly idleRankStepShare: number
  readonly prefixCacheHitRate: number
  /**
   * The run finished every request and kept up with the arrivals (`keptUp` of @loadledger/sim: false
   * when any request was rejected); absent for results written before 0.3.0.
   */
  readonly keptUp: boolean | undefined
  readonly wallSeconds: number
}

const ms = (s: number | undefined) => (s === undefined ? undefined : s * 1000)

/**
 * The summary rows of finished cells, in the order given (grid order).
 *
 * @example
 * ```ts
 * import { runCell } from "./runCell.js"
 * import { summaryRows } from "./Summary.js"
 * const cell = {
 *   id: "demo", trace: "examples/traces/mooncake/conversation_trace.jsonl", traceName: "conversation", rate: 1,
 *   limit: 4, dp: 2, engine: "sglang" as const, frontEnds: 1, policy: "total-tokens", model: "glm-5.3", gpu: "h200", seed: 0
 * }
 * const [row] = summaryRows([runCell(cell)])
 * row?.frontEnd // => "sglang x1"
 * row?.status // => "Completed"
 * row?.finished // => 4
 * ```
 *
 * @category sweep
 * @since 0.2.0
 */
export const summaryRows = (results: ReadonlyArray<CellResult>): ReadonlyArray<SummaryRow> =>
  results.map(({ cell, result, wallSeconds }) => {
    const { status, finished, total, rejected, stalled, keptUp } = runOutcome(result)
    return {
      id: cell.id,
      trace: cell.traceName,
      rate: cell.rate,
      dp: cell.dp,
      frontEnd: frontEndLabel(cell),
      policy: cell.policy,
      status,
      finished,
      total,
      rejected,
      stalled,
      ttftP50Seconds: result.ttftSeconds.p50,
      ttftP99Seconds: result.ttftSeconds.p99,
      itlP50Ms: ms(result.itlSeconds.p50),
      itlP99Ms: ms(result.itlSeconds.p99),
      e2eP99Seconds: result.e2eSeconds.p99,
      syncWaitShare: result.syncWaitShare,
      idleRankStepShare: result.idleRankStepShare,
      prefixCacheHitRate: result.prefixCacheHitRate,
      keptUp,
      wallSeconds
    }
  })

const fmt = (v: number | undefined, digits = 3) =>
  v === undefined ? "-" : Number(v.toPrecision(digits)).toString()
const pct = (v: number) => `${(v * 100).toFixed(1)}%`

/**
 * A Markdown table of the rows: one block per (trace, rate, DP, front end), policies as rows, the
 * lowest TTFT p99 and ITL p99 of each block in bold. Status: `outcomeLabel`, as `simulate` prints it:
 * `ok F/T` only when every request finished and the run kept up, `behind F/T` when it finished
 * every request but fell behind the arrivals (`keptUp`), else `incomplete F/T, R rejected` or the
 * run's status with its rejected, stalled and unfinished counts.
 *
 * @example
 * ```ts
 * import { runCell } from "./runCell.js"
 * import { markdownTable, summaryRows } from "./Summary.js"
 * const cell = {
 *   id: "demo", trace: "examples/traces/mooncake/conversation_trace.jsonl", traceName: "conversation", rate: 1,
 *   limit: 4, dp: 2, engine: "sglang" as const, frontEnds: 1, policy: "total-tokens", model: "glm-5.3", gpu: "h200", seed: 0
 * }
 * const lines = markdownTable(summaryRows([runCell(cell)])).split("\n")
 * lines[0] // => "**conversation at 1x, DP 2, sglang x1**"
 * lines[2]?.startsWith("| policy | TTFT p50 / p99 s |") // => true
 * lines[4]?.startsWith("| total-tokens |") // => true
 * lines[4]?.endsWith("| ok 4/4 |") // => true
 * ```
 *
 * @category sweep
 * @since 0.2.0
 */
export const markdownTable = (rows: ReadonlyArray<SummaryRow>): string => {
  const groups = new Map<string, Array<SummaryRow>>()
  for (const r of rows) {
    const k = `${r.trace} at ${r.rate}x, DP ${r.dp}, ${r.frontEnd}`
    groups.set(k, [...(groups.get(k) ?? []), r])
  }
  const out: Array<string> = []
  for (const [k, rs] of groups) {
    const best = (f: (r: SummaryRow) => number | undefined) =>
      Math.min(...rs.map(f).filter((v): v is number => v !== undefined))
    const bTtft = best((r) => r.ttftP99Seconds)
    const bItl = best((r) => r.itlP99Ms)
    const bold = (v: number | undefined, b: number, d?: number) => (v === b ? `**${fmt(v, d)}**` : fmt(v, d))
    out.push(`**${k}**`, "")
    out.push(
      "| policy | TTFT p50 / p99 s | ITL p50 / p99 ms | E2E p99 s | sync wait | idle ranks | cache hit | status |"
    )
    out.push("|---|---|---|---|---|---|---|---|")
    for (const r of rs)
      out.push(
        `| ${r.policy} | ${fmt(r.ttftP50Seconds)} / ${bold(r.ttftP99Seconds, bTtft)} | ${fmt(r.itlP50Ms)} / ${bold(r.itlP99Ms, bItl)} | ${fmt(r.e2eP99Seconds)} | ${pct(r.syncWaitShare)} | ${pct(r.idleRankStepShare)} | ${pct(r.prefixCacheHitRate)} | ${outcomeLabel(r)} |`
      )
    out.push("")
  }
  return out.join("\n")
}
