/**
 * What a sweep's report shows: for every (trace, DP size, front end) of the grid, TTFT p99, ITL p99
 * and sync-wait share per policy across rates (best cell marked), and the full per-run charts of one
 * slice (the first trace, DP size and front end at its highest rate) so the page stays readable.
 *
 * @since 0.2.0
 */
import type { ReportGrid, ReportInput, ReportRun } from "../commands/report/model.js"
import { frontEndLabel } from "./Cells.js"
import type { CellResult } from "./runCell.js"
import type { SweepSpec } from "./SpecTypes.js"

const metrics: ReadonlyArray<{
  readonly name: string
  readonly value: (r: CellResult) => number | undefined
  readonly better: "lower" | "higher"
}> = [
  { name: "TTFT p99 (s)", value: (r) => r.result.ttftSeconds.p99, better: "lower" },
  {
    name: "ITL p99 (ms)",
    value: (r) => (r.result.itlSeconds.p99 === undefined ? undefined : r.result.itlSeconds.p99 * 1000),
    better: "lower"
  },
  { name: "sync-wait share", value: (r) => r.result.syncWaitShare, better: "lower" }
]

const sliceKey = (r: CellResult) => `${r.cell.traceName}, DP ${r.cell.dp}, ${frontEndLabel(r.cell)}`

/**
 * The report input of a sweep (see the module note). A cell that did not complete every request
 * shows no value in the grids (an empty cell, never a number from a partial run).
 *
 * @example
 * ```ts
 * import { sweepReport } from "./report.js"
 * import { parseSpec } from "./Spec.js"
 * const spec = parseSpec("traces: [/t/a.jsonl]\nrates: [1]\npolicies: [total-tokens]", "/s.yaml")
 * sweepReport(spec, []).grids // => []
 * ```
 *
 * @category sweep
 * @since 0.2.0
 */
export const sweepReport = (spec: SweepSpec, results: ReadonlyArray<CellResult>): ReportInput => {
  const slices = new Map<string, Array<CellResult>>()
  for (const r of results) slices.set(sliceKey(r), [...(slices.get(sliceKey(r)) ?? []), r])
  const grids: Array<ReportGrid> = []
  for (const [key, rs] of slices)
    for (const m of metrics)
      grids.push({
        title: `${m.name}: ${key}`,
        metric: m.name,
        xName: "rate scale",
        better: m.better,
        cells: rs.map((r) => ({
          policy: r.cell.policy,
          x: r.cell.rate,
          value: r.result.status._tag === "Completed" ? m.value(r) : undefined
        }))
      })
  const first = [...slices.values()][0] ?? []
  const topRate = Math.max(...first.map((r) => r.cell.rate))
  const runs: Array<ReportRun> = first
    .filter((r) => r.cell.rate === topRate)
    .map((r) => ({ engine: r.cell.engine, result: r.result, label: `${r.cell.policy} @ ${r.cell.rate}x` }))
  return {
    title: `loadledger sweep: ${spec.name}`,
    context: [
      `${results.length} cells: ${spec.traces.map((t) => `${t.name} at ${t.rates.join(", ")}x`).join("; ")}; ${spec.model} on ${spec.gpu}; DP ${spec.dp.join(", ")}; front ends ${spec.frontEnds.map(frontEndLabel).join(", ")}`,
      runs.length > 0
        ? `Per-run charts below: ${[...slices.keys()][0]} at ${topRate}x.`
        : "No finished cells yet."
    ],
    runs,
    grids
  }
}
