/**
 * The interactive report of `simulate --report` (and of a sweep): one self-contained HTML file
 * with Apache ECharts inlined, so it opens offline from `file://`.
 *
 * @since 0.1.0
 */
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { gridChart } from "./report/grid.js"
import { latencyCharts } from "./report/latency.js"
import type { ReportInput } from "./report/model.js"
import { page } from "./report/page.js"
import { imbalanceChart, loadHeatmaps, rankCharts } from "./report/ranks.js"
import { summaryTable } from "./report/table.js"

let library: string | undefined
/** The ECharts browser build (read once; ~1.1 MB minified, Apache-2.0). */
const echartsLibrary = (): string => {
  library ??= readFileSync(createRequire(import.meta.url).resolve("echarts/dist/echarts.min.js"), "utf8")
  return library
}

/**
 * Build the report page for one or many simulation runs, with optional sweep grid views.
 *
 * **When to use**: `simulate --report` passes its policies' results; a sweep passes the runs it
 * wants drawn in detail plus `grids` (a metric per policy across rates, best cell marked). The page
 * holds: a sortable per-policy summary table; TTFT, ITL and E2E CDFs (log time axis, p50/p90/p99
 * markers); sync-wait and idle-rank shares; requests and tokens per rank; token-imbalance buckets
 * trimmed to the data; a rank x time heat map of each run's load (downsampled to 400 columns).
 * Every chart has zoom, legend toggles, hover values and a "how to read this" line. Pure apart
 * from reading the ECharts file from `node_modules` once.
 *
 * @example
 * ```ts
 * import { renderReport } from "./simulateReport.js"
 * const html = await renderReport({ title: "empty", runs: [] })
 * html.startsWith("<!doctype html>") // => true
 * html.includes("echarts") // => true
 * ```
 *
 * @category simulate
 * @since 0.1.0
 */
export const renderReport = async (input: ReportInput): Promise<string> => {
  const runs = input.runs
  const imbalance = runs.length > 0 ? imbalanceChart(runs) : undefined
  return page({
    title: input.title,
    context: input.context ?? [],
    table: summaryTable(runs),
    groups: [
      { heading: "Sweep grid", charts: (input.grids ?? []).map((g, i) => gridChart(g, `grid-${i}`)) },
      { heading: "Latency", charts: runs.length > 0 ? latencyCharts(runs) : [] },
      {
        heading: "Balance",
        charts: [...(runs.length > 0 ? rankCharts(runs) : []), ...(imbalance ? [imbalance] : [])]
      },
      { heading: "Load per rank over time", charts: loadHeatmaps(runs) }
    ],
    tableText: input.tableText,
    library: echartsLibrary(),
    libraryName: "Apache ECharts 6 (Apache-2.0)"
  })
}
