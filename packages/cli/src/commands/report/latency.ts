/**
 * The report's latency charts: TTFT, ITL and E2E as CDFs on a log time axis, with p50/p90/p99
 * markers per policy.
 *
 * @since 0.2.0
 */
import type { Percentiles } from "@loadledger/sim"
import { type ChartSpec, cdfPoints, type ReportRun, runLabel, sig } from "./model.js"

type Key = "ttftSeconds" | "itlSeconds" | "e2eSeconds"

const NAMES: Record<Key, { short: string; long: string }> = {
  ttftSeconds: { short: "TTFT", long: "Time to first token (TTFT)" },
  itlSeconds: { short: "ITL", long: "Inter-token latency (ITL)" },
  e2eSeconds: { short: "E2E", long: "End-to-end latency (E2E)" }
}

const markers = (p: Percentiles) =>
  (["p50", "p90", "p99"] as const).flatMap((k) => {
    const v = p[k]
    const share = k === "p50" ? 0.5 : k === "p90" ? 0.9 : 0.99
    return v !== undefined && v > 0
      ? [{ name: k, coord: [sig(v), share], value: `${k} ${fmtSeconds(v)}` }]
      : []
  })

/**
 * A latency in seconds, written for a reader: ms below one second.
 *
 * @example
 * ```ts
 * import { fmtSeconds } from "./latency.js"
 * fmtSeconds(0.0123) // => "12.3 ms"
 * fmtSeconds(4.56) // => "4.56 s"
 * ```
 *
 * @category report
 * @since 0.2.0
 */
export const fmtSeconds = (s: number): string =>
  s < 1 ? `${Number((s * 1000).toPrecision(3))} ms` : `${Number(s.toPrecision(3))} s`

/**
 * One CDF chart per latency (TTFT, ITL, E2E): a line per run, log x axis from the fastest to the slowest point (no blank decade past the data), the
 * p50/p90/p99 of each run as markers on its curve, dashed guides at 50/90/99%. Each chart has an
 * alternate "tail" view (share slower than x, log y axis) where p90 and p99 get as much room as
 * the median. A run without CDF points for a latency (an ITL from a result written before ITL
 * CDFs existed) shows its markers only.
 *
 * @example
 * ```ts
 * import { latencyCharts } from "./latency.js"
 * import { runCell } from "../../sweep/runCell.js"
 * const { result } = runCell({
 *   id: "demo", trace: "examples/traces/mooncake/conversation_trace.jsonl", traceName: "conversation", rate: 1,
 *   limit: 8, dp: 2, engine: "sglang", frontEnds: 1, policy: "total-tokens", model: "glm-5.3", gpu: "h200", seed: 0
 * })
 * const charts = latencyCharts([{ engine: "sglang", result }])
 * charts.map((c) => c.id) // => ["cdf-ttftSeconds", "cdf-itlSeconds", "cdf-e2eSeconds"]
 * charts[0]!.alt?.label // => "tail view (share slower, log)"
 * ```
 *
 * @category report
 * @since 0.2.0
 */
export const latencyCharts = (runs: ReadonlyArray<ReportRun>): Array<ChartSpec> =>
  (["ttftSeconds", "itlSeconds", "e2eSeconds"] as const).map((key) => {
    const n = NAMES[key]
    const what = key === "itlSeconds" ? "token gaps" : "requests"
    return {
      id: `cdf-${key}`,
      title: `${n.long}: distribution per policy`,
      how: `Each line is one policy: at a given ${n.short} (x, log scale) it shows the share of ${what} that were at least that fast (y). Further left and steeper is better. Dots mark each policy's p50, p90 and p99 (dashed lines). The "tail view" button plots the share slower than x on a log scale instead, so p90 and p99 are as far apart as p50 and p90. Drag or scroll to zoom (shift+scroll zooms y); click a legend entry to hide a policy.`,
      height: 420,
      option: cdfOption(runs, key, false),
      alt: { label: "tail view (share slower, log)", back: "CDF view", option: cdfOption(runs, key, true) }
    }
  })

const cdfOption = (runs: ReadonlyArray<ReportRun>, key: Key, tail: boolean): Record<string, unknown> => {
  const y = (share: number) => sig(tail ? 1 - share : share)
  const series = runs.map((run) => {
    const r = run.result
    const values = r.latencyCdf[key]
    const points = values ? cdfPoints(r.latencyCdf.quantiles, values) : []
    return {
      type: "line",
      name: runLabel(run),
      showSymbol: false,
      lineStyle: { width: 2 },
      emphasis: { focus: "series" },
      data: points.filter(([, q]) => !tail || q < 1).map(([x, q]) => [sig(x), y(q)]),
      markPoint: {
        symbol: "circle",
        symbolSize: 7,
        label: { show: false },
        data: markers(r[key]).map((m) => ({ ...m, coord: [m.coord[0]!, y(m.coord[1]!)] }))
      }
    }
  })
  const xs = series.flatMap((s) => [...s.data.map((d) => d[0]!), ...s.markPoint.data.map((m) => m.coord[0]!)])
  const lo = xs.length ? Math.min(...xs) : 0.001
  const hi = xs.length ? Math.max(...xs) : 1
  const guides = [0.5, 0.9, 0.99].map((q) => ({ yAxis: y(q), name: `p${Math.round(q * 100)}` }))
  if (series[0]) (series[0] as Record<string, unknown>).markLine = guideLines(guides)
  return {
    legend: { top: 0, type: "scroll" },
    grid: { top: 40, left: 64, right: 48, bottom: 80 },
    tooltip: { trigger: "axis", axisPointer: { type: "cross" } },
    xAxis: {
      type: "log",
      name: "seconds (log)",
      nameLocation: "middle",
      nameGap: 28,
      min: sig(lo),
      max: sig(hi),
      minorTick: { show: true },
      minorSplitLine: { show: true, lineStyle: { opacity: 0.3 } }
    },
    yAxis: tail
      ? { type: "log", min: 0.01, max: 1, name: "share slower than x (log)" }
      : { type: "value", min: 0, max: 1, name: "share ≤ x" },
    dataZoom: [
      { type: "inside", xAxisIndex: 0, filterMode: "none" },
      { type: "slider", xAxisIndex: 0, filterMode: "none", bottom: 8, height: 18 },
      {
        type: "inside",
        yAxisIndex: 0,
        filterMode: "none",
        zoomOnMouseWheel: "shift",
        moveOnMouseWheel: false
      }
    ],
    series
  }
}
const guideLines = (data: ReadonlyArray<{ yAxis: number; name: string }>) => ({
  silent: true,
  symbol: "none",
  lineStyle: { type: "dashed", color: "#888", width: 1 },
  label: { formatter: "{b}", position: "insideEndTop", color: "#666" },
  data
})
