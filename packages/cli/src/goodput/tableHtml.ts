/**
 * The goodput report's HTML parts: the attainment curves chart and the leaderboard table.
 *
 * @since 0.6.0
 */
import type { ChartSpec } from "../commands/report/model.js"
import { sig } from "../commands/report/model.js"
import { esc } from "../commands/report/table.js"
import type { EngineBoard, LeaderboardRow } from "./board.js"
import { f, label, pct, verdictText } from "./format.js"

/**
 * The curves chart of one engine: mean SLO attainment (over the windows) against the arrival rate
 * for each row, with its interval as a band, and the target as a dashed line.
 *
 * @example
 * ```ts
 * import { estimateGoodput } from "@loadledger/sim"
 * import { type RankInput, rankBoard } from "./board.js"
 * import { curveChart } from "./tableHtml.js"
 * const subject = (policy: string, kind: RankInput["kind"], windows: Array<number>): RankInput => {
 *   const goodput = estimateGoodput(windows, 2)
 *   if (goodput._tag === "GoodputError") throw new Error(goodput.message)
 *   return { policy, kind, windows, goodput, probes: [], rejected: 0, curve: [] }
 * }
 * const board = rankBoard("sglang", [subject("a", "policy", [4, 5, 6]), subject("b", "policy", [3, 4, 5]), subject("balance-bound", "bound", [8, 10, 12])], 0.95)
 * curveChart(board, 0.9, "curves-0").id // => "curves-0"
 * ```
 *
 * @category goodput
 * @since 0.5.0
 */
export const curveChart = (b: EngineBoard, target: number, id: string): ChartSpec => {
  const rows = b.rows.filter((r) => r.curve.length > 0)
  const series = rows.flatMap((r, i) => {
    const name = label(r)
    const band = `band-${i}`
    return [
      {
        name,
        type: "line",
        data: r.curve.map((p) => [sig(p.requestsPerSecond), sig(p.attainment)]),
        symbolSize: 5,
        lineStyle: r.kind === "policy" ? { width: 2 } : { width: 2, type: "dashed" },
        ...(i === 0
          ? {
              markLine: {
                silent: true,
                symbol: "none",
                data: [{ yAxis: target, name: "target" }],
                lineStyle: { type: "dotted", color: "#888" },
                label: { formatter: `target ${target}` }
              }
            }
          : {})
      },
      // the band: the lower edge, then the width stacked on it
      {
        name,
        type: "line",
        stack: band,
        data: r.curve.map((p) => [sig(p.requestsPerSecond), sig(p.ci[0])]),
        lineStyle: { opacity: 0 },
        symbol: "none",
        tooltip: { show: false }
      },
      {
        name,
        type: "line",
        stack: band,
        data: r.curve.map((p) => [sig(p.requestsPerSecond), sig(p.ci[1] - p.ci[0])]),
        lineStyle: { opacity: 0 },
        areaStyle: { opacity: 0.15 },
        symbol: "none",
        tooltip: { show: false }
      }
    ]
  })
  return {
    id,
    title: `SLO attainment against arrival rate (${b.engine} engine)`,
    how: "each line is one policy's SLO attainment (share of requests, mean over the trace's windows) at each arrival rate; the shaded band is its confidence interval over the windows; a policy's goodput is where its line crosses the dotted target. Click a legend entry to hide a policy.",
    height: 460,
    option: {
      tooltip: { trigger: "axis" },
      legend: { type: "scroll", top: 0, data: rows.map(label) },
      grid: { top: 60, left: 60, right: 30, bottom: 60 },
      xAxis: { type: "value", name: "requests/s", nameLocation: "middle", nameGap: 30, scale: true },
      // from just below the lowest band or the target (a 0..1 axis squeezes the curves at the top)
      yAxis: {
        type: "value",
        name: "SLO attainment",
        min: Math.max(
          0,
          Math.floor(Math.min(target, ...rows.flatMap((r) => r.curve.map((p) => p.ci[0]))) * 10 - 0.5) / 10
        ),
        max: 1
      },
      dataZoom: [{ type: "inside" }, { type: "slider" }],
      series
    }
  }
}

/**
 * The HTML table of the report: one row per subject of every engine.
 *
 * @example
 * ```ts
 * import { estimateGoodput } from "@loadledger/sim"
 * import { type RankInput, rankBoard } from "./board.js"
 * import { boardHtmlTable } from "./tableHtml.js"
 * const subject = (policy: string, kind: RankInput["kind"], windows: Array<number>): RankInput => {
 *   const goodput = estimateGoodput(windows, 2)
 *   if (goodput._tag === "GoodputError") throw new Error(goodput.message)
 *   return { policy, kind, windows, goodput, probes: [], rejected: 0, curve: [] }
 * }
 * const board = rankBoard("sglang", [subject("a", "policy", [4, 5, 6]), subject("b", "policy", [3, 4, 5]), subject("balance-bound", "bound", [8, 10, 12])], 0.95)
 * boardHtmlTable([board], "t1").startsWith('<table id="t1">') // => true
 * ```
 *
 * @category goodput
 * @since 0.5.0
 */
export const boardHtmlTable = (boards: ReadonlyArray<EngineBoard>, id = "summary"): string => {
  const head = [
    "policy",
    "engine",
    "goodput req/s",
    "CI lo",
    "CI hi",
    "x trace rate",
    "share of bound",
    "vs best"
  ]
  const cells = (r: LeaderboardRow, b: EngineBoard): ReadonlyArray<string> => [
    label(r),
    r.engine,
    f(r.goodput.requestsPerSecond),
    f(r.goodput.ci[0]),
    f(r.goodput.ci[1]),
    f(r.goodput.rate, 3),
    r.kind === "bound" ? "100%" : pct(r.shareOfBound),
    r.kind === "bound" ? "-" : r.policy === b.best ? "best" : verdictText(r.vsBest)
  ]
  return `<table id="${id}"><thead><tr>${head.map((h, i) => `<th scope="col"${i >= 2 ? ' class="n"' : ""} data-col="${i}" tabindex="0">${esc(h)}</th>`).join("")}</tr></thead><tbody>${boards
    .flatMap((b) =>
      b.rows.map(
        (r) =>
          `<tr>${cells(r, b)
            .map((c, i) => `<td${i >= 2 && i < 7 ? ' class="n"' : ""}>${esc(c)}</td>`)
            .join("")}</tr>`
      )
    )
    .join("")}</tbody></table>`
}
