/**
 * The report's latency charts: TTFT, ITL and E2E as CDFs on a log time axis, with p50/p90/p99
 * markers per policy.
 *
 * @since 0.2.0
 */
import type { Percentiles } from "@loadledger/sim"
import {
  type ChartSpec,
  cdfPoints,
  DASHES,
  PALETTE,
  type ReportRun,
  runLabel,
  SYMBOLS,
  sig
} from "./model.js"

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
 * charts[0]!.alt?.label // => "tail view p90-p99.9 (share slower, log)"
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
      how: `Each line is one policy: at a given ${n.short} (x, log scale) it shows the share of ${what} that were at least that fast (y). Further left and steeper is better. Dots mark each policy's p50, p90 and p99 (dashed lines). The "tail view" button plots p90 to p99.9 only: the share slower than x on a log scale, every measured point marked, so p90, p99 and p99.9 are as far apart as p50 and p90 (where the curve stops above p99.9, the run had no slower measured point). Each policy has its own colour (colour-blind safe), dash and marker. Drag or scroll to zoom (shift+scroll zooms y); click a legend entry to hide a policy.`,
      height: 420,
      option: cdfOption(runs, key, false),
      alt: {
        label: "tail view p90-p99.9 (share slower, log)",
        back: "CDF view",
        option: cdfOption(runs, key, true)
      }
    }
  })

/**
 * The largest 1-2-5 value (…, 0.01, 0.02, 0.05, 0.1, …) at or below `x > 0` (the smallest at or
 * above it when `up`): round axis ends, so a time axis reads 10 ms and 5 s, never 0.01235.
 *
 * @example
 * ```ts
 * import { niceBound } from "./latency.js"
 * niceBound(0.01235, false) // => 0.01
 * niceBound(57.91, true) // => 100
 * ```
 *
 * @category report
 * @since 0.6.0
 */
export const niceBound = (x: number, up: boolean): number => {
  const e = 10 ** Math.floor(Math.log10(x))
  const steps = up ? [1, 2, 5, 10] : [10, 5, 2, 1]
  const m = steps.find((s) => (up ? s * e >= x * (1 - 1e-9) : s * e <= x * (1 + 1e-9))) ?? 1
  return sig(m * e)
}

/** The tail view's y range: share slower than x from 10% (p90) down to 0.1% (p99.9). */
const TAIL_SHARES = [0.1, 0.01, 0.001] as const

const cdfOption = (runs: ReadonlyArray<ReportRun>, key: Key, tail: boolean): Record<string, unknown> => {
  const y = (share: number) => sig(tail ? 1 - share : share)
  const series = runs.map((run, k) => {
    const r = run.result
    const values = r.latencyCdf[key]
    const points = values ? cdfPoints(r.latencyCdf.quantiles, values) : []
    // the tail: from the last point at or below p90 to the slowest point short of the maximum,
    // every point drawn (a marker each), so no straight line stands in for missing data
    const from = Math.max(
      0,
      points.findLastIndex(([, q]) => q <= 0.9)
    )
    const shown = tail ? points.slice(from).filter(([, q]) => q < 1) : points
    return {
      type: "line",
      name: runLabel(run),
      color: PALETTE[k % PALETTE.length],
      showSymbol: tail,
      symbol: SYMBOLS[k % SYMBOLS.length],
      symbolSize: 6,
      lineStyle: { width: 2, type: DASHES[k % DASHES.length] },
      emphasis: { focus: "series" },
      data: shown.map(([x, q]) => [sig(x), y(q)]),
      markPoint: {
        symbol: "circle",
        symbolSize: 7,
        label: { show: false },
        data: markers(r[key])
          .filter((m) => !tail || m.name !== "p50")
          .map((m) => ({ ...m, coord: [m.coord[0]!, y(m.coord[1]!)] }))
      }
    }
  })
  const xs = series.flatMap((s) => [...s.data.map((d) => d[0]!), ...s.markPoint.data.map((m) => m.coord[0]!)])
  const lo = xs.length ? Math.min(...xs) : 0.001
  const hi = xs.length ? Math.max(...xs) : 1
  const guides = (tail ? [0.9, 0.99, 0.999] : [0.5, 0.9, 0.99]).map((q) => ({
    yAxis: y(q),
    name: `p${sig(q * 100)}`
  }))
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
      // round ends (1-2-5 steps): the axis labels read 20 ms, 500 ms, 2 s
      min: lo > 0 ? niceBound(lo, false) : undefined,
      max: hi > 0 ? niceBound(hi, true) : undefined,
      minorTick: { show: true },
      minorSplitLine: { show: true, lineStyle: { opacity: 0.3 } }
    },
    yAxis: tail
      ? {
          type: "log",
          min: TAIL_SHARES[2],
          max: TAIL_SHARES[0],
          name: "share slower than x (log)",
          nameTextStyle: { align: "left" }
        }
      : { type: "value", min: 0, max: 1, interval: 0.1, name: "share ≤ x" },
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
