/**
 * The HTML report of `loadledger goodput --report`: the leaderboard table and the curves, one
 * self-contained file (Apache ECharts inlined).
 *
 * @since 0.5.0
 */
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import type { ChartSpec } from "../commands/report/model.js"
import { page } from "../commands/report/page.js"

/**
 * Render the goodput report page.
 *
 * @example
 * ```ts
 * import { renderGoodputReport } from "./report.js"
 * const html = await renderGoodputReport({ title: "t", context: [], table: "<table></table>", charts: [] })
 * html.startsWith("<!doctype html>") // => true
 * ```
 *
 * @category goodput
 * @since 0.5.0
 */
export const renderGoodputReport = async (o: {
  readonly title: string
  readonly context: ReadonlyArray<string>
  readonly table: string
  readonly charts: ReadonlyArray<ChartSpec>
}): Promise<string> =>
  page({
    title: o.title,
    context: o.context,
    table: o.table,
    // no curves (--no-curves): no chart section, rather than an empty one
    groups: o.charts.length > 0 ? [{ heading: "SLO attainment against rate", charts: o.charts }] : [],
    library: readFileSync(createRequire(import.meta.url).resolve("echarts/dist/echarts.min.js"), "utf8"),
    libraryName: "Apache ECharts 6 (Apache-2.0)"
  })
