/**
 * A sweep's grid view: one metric per policy across a swept value (rates), best cell marked.
 *
 * @since 0.2.0
 */
import type { ChartSpec, ReportGrid } from "./model.js"
import { sig } from "./model.js"

/**
 * The best cell of each column (`x` value) of a grid: the policy with the lowest (or highest, by
 * `better`) value; columns with no value have none. Ties keep the first policy in cell order.
 *
 * @example
 * ```ts
 * import { bestPerColumn } from "./grid.js"
 * bestPerColumn({ title: "", metric: "TTFT p99", xName: "rate", better: "lower", cells: [
 *   { policy: "a", x: 1, value: 2 }, { policy: "b", x: 1, value: 1 }, { policy: "a", x: 2, value: 3 }, { policy: "b", x: 2 }
 * ] })
 * // => new Map([["1", "b"], ["2", "a"]])
 * ```
 *
 * @category report
 * @since 0.2.0
 */
export const bestPerColumn = (g: ReportGrid): Map<string, string> => {
  const best = new Map<string, { policy: string; value: number }>()
  for (const c of g.cells) {
    if (c.value === undefined || !Number.isFinite(c.value)) continue
    const key = String(c.x)
    const cur = best.get(key)
    if (cur === undefined || (g.better === "lower" ? c.value < cur.value : c.value > cur.value))
      best.set(key, { policy: c.policy, value: c.value })
  }
  return new Map([...best].map(([k, v]) => [k, v.policy]))
}

/**
 * The grid as a heat map: policies (rows) by `x` (columns), each cell labelled with its value and
 * coloured by how far it is from the best cell of its column (value / best, or best / value when
 * higher is better: 1 = the best, green; 2 and more, red), so a column at a heavy rate is not all
 * red just because every latency is longer there. The best cell of each column gets a thick border
 * and a ★. Data items are `[column, row, ratio to best, value]`.
 *
 * @example
 * ```ts
 * import { gridChart } from "./grid.js"
 * const chart = gridChart({ title: "TTFT p99", metric: "TTFT p99 s", xName: "rate", better: "lower", cells: [
 *   { policy: "a", x: 1, value: 2 }, { policy: "b", x: 1, value: 1 }, { policy: "a", x: 2, value: 3 }, { policy: "b", x: 2 }
 * ] }, "grid-0")
 * chart.id // => "grid-0"
 * const series = chart.option["series"] as Array<{ data: Array<{ value: unknown; label: { formatter: string } }> }>
 * series[0]!.data.map((d) => d.value) // => [[0, 0, 2, 2], [0, 1, 1, 1], [1, 0, 1, 3], [1, 1, "-", "-"]]
 * series[0]!.data.map((d) => d.label.formatter) // => ["2", "★ 1", "★ 3", "-"]
 * ```
 *
 * @category report
 * @since 0.2.0
 */
export const gridChart = (g: ReportGrid, id: string): ChartSpec => {
  const xs = [...new Set(g.cells.map((c) => String(c.x)))]
  const numeric = g.cells.every((c) => typeof c.x === "number")
  if (numeric) xs.sort((a, b) => Number(a) - Number(b))
  const policies = [...new Set(g.cells.map((c) => c.policy))]
  const best = bestPerColumn(g)
  const bestValue = new Map<string, number>()
  for (const c of g.cells)
    if (best.get(String(c.x)) === c.policy && c.value !== undefined) bestValue.set(String(c.x), c.value)
  const ratio = (x: string, v: number): number | "-" => {
    const b = bestValue.get(x)
    if (b === undefined) return "-"
    const r = g.better === "lower" ? v / b : b / v
    return Number.isFinite(r) ? sig(r) : v === b ? 1 : 1e9 // x / 0: as bad as it gets
  }
  const data = g.cells.map((c) => {
    const key = String(c.x)
    const isBest = best.get(key) === c.policy
    const ok = c.value !== undefined && Number.isFinite(c.value)
    const v = ok ? sig(c.value!) : "-"
    return {
      value: [xs.indexOf(key), policies.indexOf(c.policy), ok ? ratio(key, c.value!) : "-", v],
      label: { show: true, formatter: isBest ? `★ ${v}` : `${v}`, fontWeight: isBest ? "bold" : "normal" },
      ...(isBest ? { itemStyle: { borderColor: "#111", borderWidth: 3 } } : {})
    }
  })
  return {
    id,
    title: g.title,
    how: `${g.metric} for each policy (rows) at each ${g.xName} (columns); ${
      g.better === "lower" ? "lower" : "higher"
    } is better. The colour compares a cell with the best of its column (green = the best, red = twice as bad or worse), and the best policy of each column is starred with a thick border. A blank cell did not run or failed. Hover for the value and its ratio to the best.`,
    height: Math.max(220, 100 + policies.length * 40),
    option: {
      grid: { top: 10, left: 160, right: 100, bottom: 50 },
      tooltip: { position: "top" },
      xAxis: { type: "category", data: xs, name: g.xName, nameLocation: "middle", nameGap: 28 },
      yAxis: { type: "category", data: policies, inverse: true },
      visualMap: {
        min: 1,
        max: 2,
        dimension: 2,
        precision: 1,
        calculable: true,
        right: 8,
        top: "middle",
        text: ["≥ 2x best", "best"],
        inRange: { color: ["#1a9850", "#ffffbf", "#d73027"] }
      },
      series: [{ type: "heatmap", name: g.metric, data }]
    }
  }
}
