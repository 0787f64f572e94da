/**
 * `loadledger goodput`'s outputs: the ranked terminal table, the JSON document and the HTML
 * report (attainment-versus-rate curves with interval bands).
 *
 * @since 0.5.0
 */
import type { GoodputComparison } from "@loadledger/sim"
import Table from "cli-table3"
import type { ChartSpec } from "../commands/report/model.js"
import { sig } from "../commands/report/model.js"
import { esc } from "../commands/report/table.js"
import type { EngineBoard, LeaderboardRow } from "./run.js"

const f = (x: number, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : "-")
const pct = (x: number) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : "-")
/** A ratio as a signed percentage: 1.034 -> "+3.4%". */
const signed = (r: number) => `${r >= 1 ? "+" : ""}${((r - 1) * 100).toFixed(1)}%`

/**
 * A verdict against the best, in words: "best", "+1.2% [+0.3%, +2.0%] better", "-4.0% [-5.1%,
 * -2.9%] worse", "no significant difference (-0.3% [-1.1%, +0.5%])", or "not comparable: why".
 *
 * @example
 * ```ts
 * import { verdictText } from "./table.js"
 * verdictText({ _tag: "GoodputComparison", ratio: 0.96, ci: [0.949, 0.971], confidence: 0.95, verdict: "worse", excludedWindows: 0 })
 * // => "worse: -4.0% [-5.1%, -2.9%]"
 * verdictText(undefined) // => "best"
 * ```
 *
 * @category goodput
 * @since 0.5.0
 */
export const verdictText = (c: GoodputComparison | undefined): string => {
  if (c === undefined) return "best"
  if (c.verdict === "not comparable")
    return `not comparable: ${(c.reason ?? "").replace("the first policy", "this policy").replace("the second policy", "the best")}`
  const span = `${signed(c.ratio)} [${signed(c.ci[0])}, ${signed(c.ci[1])}]`
  return c.verdict === "no significant difference"
    ? `no significant difference (${span})`
    : `${c.verdict}: ${span}`
}

const label = (r: LeaderboardRow) =>
  r.kind === "clairvoyant"
    ? "clairvoyant (reference)"
    : r.kind === "bound"
      ? "balance-bound (ceiling)"
      : r.policy

/**
 * The ranked table of one engine: rank, policy, goodput (requests per second) with its interval,
 * the rate as a multiple of the trace's own, the share of the balance bound, and the verdict
 * against the best policy. The clairvoyant reference and the bound close the table, unranked.
 *
 * @example
 * ```ts
 * import { estimateGoodput } from "@loadledger/sim"
 * import { type RankInput, rankBoard } from "./run.js"
 * import { boardTable } from "./table.js"
 * const subject = (policy: string, kind: RankInput["kind"], windows: Array<number>): RankInput => {
 *   const goodput = estimateGoodput(windows, 2)
 *   if (goodput._tag === "GoodputError") throw new Error(goodput.message)
 *   return { policy, kind, windows, goodput, probes: [], rejected: 0, curve: [] }
 * }
 * const board = rankBoard("sglang", [subject("a", "policy", [4, 5, 6]), subject("b", "policy", [3, 4, 5]), subject("balance-bound", "bound", [8, 10, 12])], 0.95)
 * const text = boardTable(board, false)
 * text.includes("best") && text.includes("balance-bound (ceiling)") // => true
 * ```
 *
 * @category goodput
 * @since 0.5.0
 */
export const boardTable = (b: EngineBoard, color: boolean): string => {
  const ci = b.rows[0]?.goodput.confidence ?? 0.95
  const t = new Table({
    head: [
      "#",
      "policy",
      "engine",
      `goodput req/s [${Math.round(ci * 100)}% CI]`,
      "x trace rate",
      "share of bound",
      "vs best (paired)",
      "rejected"
    ],
    style: color ? { head: ["cyan"], compact: true } : { head: [], border: [], compact: true }
  })
  let rank = 0
  for (const r of b.rows) {
    const g = r.goodput
    t.push([
      r.kind === "policy" ? String(++rank) : "",
      label(r),
      r.engine,
      `${f(g.requestsPerSecond)} [${f(g.ci[0])}, ${f(g.ci[1])}]`,
      f(g.rate, 3),
      r.kind === "bound" ? "100%" : pct(r.shareOfBound),
      r.kind === "bound" ? "-" : r.policy === b.best ? "best" : verdictText(r.vsBest),
      String(r.rejected)
    ])
  }
  return t.toString()
}

/**
 * How to read the table, printed under it.
 *
 * @example
 * ```ts
 * import { HOW_TO_READ } from "./table.js"
 * HOW_TO_READ.startsWith("How to read it: goodput is the largest arrival rate") // => true
 * ```
 */
export const HOW_TO_READ = `How to read it: goodput is the largest arrival rate (requests/s) at which the SLO above is met,
found by bisection on each window of the trace and averaged over the windows, with a Student t
interval. "vs best" compares each policy with the best on the same windows (the geometric mean of
the per-window ratios, with a paired t interval): "better"/"worse" only when the interval excludes
0, else "no significant difference". Share of bound = goodput / the balance bound's (an idealised
group where each step costs the least any placement could give it: the headroom routing could at
most win back). The clairvoyant reference knows every request's output length.`

/**
 * The JSON document: the SLO and the method, then per engine the ranked rows (goodput with `rate`,
 * `requestsPerSecond`, `ci`, `shareOfBound`, `curve`, `verdict` against the best) and every
 * pairwise verdict.
 *
 * @example
 * ```ts
 * import { estimateGoodput } from "@loadledger/sim"
 * import { type RankInput, rankBoard } from "./run.js"
 * import { boardJson } from "./table.js"
 * const subject = (policy: string, kind: RankInput["kind"], windows: Array<number>): RankInput => {
 *   const goodput = estimateGoodput(windows, 2)
 *   if (goodput._tag === "GoodputError") throw new Error(goodput.message)
 *   return { policy, kind, windows, goodput, probes: [], rejected: 0, curve: [] }
 * }
 * const board = rankBoard("sglang", [subject("a", "policy", [4, 5, 6]), subject("b", "policy", [3, 4, 5]), subject("balance-bound", "bound", [8, 10, 12])], 0.95)
 * const doc = boardJson([board], { slo: "ttft=2s,tpot=100ms" }) as { slo: string; engines: Array<{ best: string }> }
 * doc.slo // => "ttft=2s,tpot=100ms"
 * doc.engines[0]!.best // => "a"
 * ```
 *
 * @category goodput
 * @since 0.5.0
 */
export const boardJson = (boards: ReadonlyArray<EngineBoard>, head: Record<string, unknown>): unknown => ({
  ...head,
  engines: boards.map(engineJson)
})

/**
 * One engine's board as JSON: `engine`, `best`, the ranked `policies` (see {@link boardJson}) and
 * the pairwise `verdicts`.
 *
 * @example
 * ```ts
 * import { estimateGoodput } from "@loadledger/sim"
 * import { type RankInput, rankBoard } from "./run.js"
 * import { engineJson } from "./table.js"
 * const subject = (policy: string, kind: RankInput["kind"], windows: Array<number>): RankInput => {
 *   const goodput = estimateGoodput(windows, 2)
 *   if (goodput._tag === "GoodputError") throw new Error(goodput.message)
 *   return { policy, kind, windows, goodput, probes: [], rejected: 0, curve: [] }
 * }
 * const board = rankBoard("sglang", [subject("a", "policy", [4, 5, 6]), subject("b", "policy", [3, 4, 5]), subject("balance-bound", "bound", [8, 10, 12])], 0.95)
 * engineJson(board).policies.map((p) => p.verdict?.verdict) // => ["best", "worse", undefined]
 * ```
 *
 * @category goodput
 * @since 0.5.0
 */
export const engineJson = (b: EngineBoard) => ({
  engine: b.engine,
  best: b.best,
  policies: b.rows.map((r) => ({
    policy: r.policy,
    kind: r.kind,
    engine: r.engine,
    goodput: {
      rate: r.goodput.rate,
      requestsPerSecond: r.goodput.requestsPerSecond,
      ci: r.goodput.ci,
      rateCi: r.goodput.rateCi,
      windows: r.goodput.windows,
      unattainableWindows: r.goodput.unattainable
    },
    shareOfBound: r.shareOfBound,
    verdict:
      r.kind === "bound"
        ? undefined
        : r.policy === b.best
          ? { verdict: "best" }
          : r.vsBest && {
              verdict: r.vsBest.verdict,
              ratio: r.vsBest.ratio,
              ci: r.vsBest.ci,
              reason: r.vsBest.reason,
              excludedWindows: r.vsBest.excludedWindows
            },
    curve: r.curve,
    probes: r.probes,
    rejected: r.rejected
  })),
  verdicts: b.verdicts
})

/**
 * The curves chart of one engine: mean SLO attainment (over the windows) against the arrival rate
 * for each row, with its interval as a band, and the target as a dashed line.
 *
 * @example
 * ```ts
 * import { estimateGoodput } from "@loadledger/sim"
 * import { type RankInput, rankBoard } from "./run.js"
 * import { curveChart } from "./table.js"
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
 * import { type RankInput, rankBoard } from "./run.js"
 * import { boardHtmlTable } from "./table.js"
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
