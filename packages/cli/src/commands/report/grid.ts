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
 * The grid as a heat map: policies (rows) by `x` (columns), each cell labelled with its value,
 * colour scaled so that better is green; the best cell of each column gets a thick border and a ★.
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
  const values = g.cells.flatMap((c) => (c.value !== undefined && Number.isFinite(c.value) ? [c.value] : []))
  const lo = values.length ? Math.min(...values) : 0
  const hi = values.length ? Math.max(...values) : 1
  const data = g.cells.map((c) => {
    const x = xs.indexOf(String(c.x))
    const y = policies.indexOf(c.policy)
    const isBest = best.get(String(c.x)) === c.policy
    const v = c.value !== undefined && Number.isFinite(c.value) ? sig(c.value) : "-"
    return {
      value: [x, y, v],
      label: { show: true, formatter: isBest ? `★ ${v}` : `${v}`, fontWeight: isBest ? "bold" : "normal" },
      ...(isBest ? { itemStyle: { borderColor: "#111", borderWidth: 3 } } : {})
    }
  })
  const good = "#1a9850"
  const bad = "#d73027"
  return {
    id,
    title: g.title,
    how: `${g.metric} for each policy (rows) at each ${g.xName} (columns); ${
      g.better === "lower" ? "lower" : "higher"
    } is better and greener. The best policy of each column is starred with a thick border; an empty cell ("-") did not run or failed.`,
    height: Math.max(220, 100 + policies.length * 40),
    option: {
      grid: { top: 10, left: 160, right: 90, bottom: 50 },
      tooltip: { position: "top" },
      xAxis: { type: "category", data: xs, name: g.xName, nameLocation: "middle", nameGap: 28 },
      yAxis: { type: "category", data: policies, inverse: true },
      visualMap: {
        min: lo,
        max: hi === lo ? lo + 1 : hi,
        calculable: true,
        right: 8,
        top: "middle",
        text: [g.metric, ""],
        inRange: { color: g.better === "lower" ? [good, "#ffffbf", bad] : [bad, "#ffffbf", good] }
      },
      series: [{ type: "heatmap", name: g.metric, data }]
    }
  }
}
