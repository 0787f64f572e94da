/**
 * The report's per-policy summary table (HTML; the page script sorts it on a header click).
 *
 * @since 0.2.0
 */
import type { Percentiles } from "@loadledger/sim"
import { imbalanceQuantile } from "../simulateTable.js"
import { type ReportRun, runLabel } from "./model.js"

/**
 * Escape text for HTML.
 *
 * @example
 * ```ts
 * import { esc } from "./table.js"
 * esc('<a href="x">&</a>') // => "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;"
 * ```
 *
 * @category report
 * @since 0.2.0
 */
export const esc = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

interface Cell {
  readonly text: string
  readonly sort: number | string | undefined
}

const num = (x: number | undefined, digits: number, scale = 1): Cell =>
  x === undefined || !Number.isFinite(x)
    ? { text: "-", sort: undefined }
    : { text: (x * scale).toFixed(digits), sort: x }
const secs = (x: number | undefined): Cell =>
  x === undefined ? { text: "-", sort: undefined } : num(x, x >= 100 ? 0 : x >= 10 ? 1 : 3)
const pct = (x: number): Cell => num(x, 1, 100)
const p = (ps: Percentiles, k: "p50" | "p90" | "p99", ms = false): Cell =>
  ms ? num(ps[k], ps[k] !== undefined && ps[k] < 0.1 ? 1 : 0, 1000) : secs(ps[k])

/**
 * Column headers (with a tooltip each) of the summary table.
 *
 * @example
 * ```ts
 * import { SUMMARY_COLUMNS } from "./table.js"
 * SUMMARY_COLUMNS.length // => 19
 * SUMMARY_COLUMNS[4] // => { head: "TTFT p99 s", title: "time to first token, 99th percentile" }
 * ```
 *
 * @category report
 * @since 0.2.0
 */
export const SUMMARY_COLUMNS: ReadonlyArray<{ readonly head: string; readonly title: string }> = [
  { head: "policy", title: "routing policy" },
  { head: "engine", title: "engine model it ran on" },
  { head: "TTFT p50 s", title: "time to first token, median" },
  { head: "TTFT p90 s", title: "time to first token, 90th percentile" },
  { head: "TTFT p99 s", title: "time to first token, 99th percentile" },
  { head: "ITL p50 ms", title: "inter-token latency, median" },
  { head: "ITL p99 ms", title: "inter-token latency, 99th percentile" },
  { head: "E2E p50 s", title: "end-to-end latency, median" },
  { head: "E2E p99 s", title: "end-to-end latency, 99th percentile" },
  { head: "out tok/s", title: "output tokens per second over the run" },
  { head: "imbalance p90", title: "token imbalance bucket holding the 90th percentile step" },
  { head: "sync wait %", title: "share of rank time waiting at the lockstep barrier" },
  { head: "idle ranks %", title: "share of rank-steps that ran an idle batch" },
  { head: "cache hit %", title: "prompt tokens served from the prefix cache" },
  { head: "retract", title: "requests retracted (KV pool full)" },
  { head: "req/rank min", title: "fewest requests any rank got" },
  { head: "req/rank max", title: "most requests any rank got" },
  { head: "finished", title: "requests finished of total" },
  { head: "status", title: "how the run ended" }
]

const row = (run: ReportRun): Array<Cell> => {
  const r = run.result
  const imb = imbalanceQuantile(r.imbalanceHistogram, 0.9)
  const perRank = r.requestsPerRank
  return [
    { text: runLabel(run), sort: runLabel(run) },
    { text: run.engine, sort: run.engine },
    p(r.ttftSeconds, "p50"),
    p(r.ttftSeconds, "p90"),
    p(r.ttftSeconds, "p99"),
    p(r.itlSeconds, "p50", true),
    p(r.itlSeconds, "p99", true),
    p(r.e2eSeconds, "p50"),
    p(r.e2eSeconds, "p99"),
    num(r.outputTokensPerSecond, 0),
    imb === undefined
      ? { text: "-", sort: undefined }
      : { text: imb === Number.POSITIVE_INFINITY ? "> 64" : `≤ ${imb}`, sort: imb === Infinity ? 1e9 : imb },
    pct(r.syncWaitShare),
    pct(r.idleRankStepShare),
    pct(r.prefixCacheHitRate),
    num(r.retractions, 0),
    perRank.length ? num(Math.min(...perRank), 0) : { text: "-", sort: undefined },
    perRank.length ? num(Math.max(...perRank), 0) : { text: "-", sort: undefined },
    {
      text: `${r.requests.finished}/${r.requests.total}`,
      sort: r.requests.finished / Math.max(1, r.requests.total)
    },
    { text: r.status._tag === "Completed" ? "ok" : r.status._tag, sort: r.status._tag }
  ]
}

/**
 * The summary table: one row per run, a sortable header (`data-sort` holds the raw value each cell
 * sorts by; "-" cells sort last), numbers right-aligned.
 *
 * @example
 * ```ts
 * import { summaryTable } from "./table.js"
 * import { runCell } from "../../sweep/runCell.js"
 * const { result } = runCell({
 *   id: "demo", trace: "examples/traces/mooncake/conversation_trace.jsonl", traceName: "conversation", rate: 1,
 *   limit: 8, dp: 2, engine: "sglang", frontEnds: 1, policy: "total-tokens", model: "glm-5.3", gpu: "h200", seed: 0
 * })
 * const html = summaryTable([{ engine: "sglang", result }])
 * html.startsWith('<table id="summary"><thead><tr><th scope="col" title="routing policy"') // => true
 * html.match(/<tr>/g)?.length // => 2
 * ```
 *
 * @category report
 * @since 0.2.0
 */
export const summaryTable = (runs: ReadonlyArray<ReportRun>): string => {
  const head = SUMMARY_COLUMNS.map(
    (c, i) =>
      `<th scope="col"${i >= 2 ? ' class="n"' : ""} title="${esc(c.title)}" data-col="${i}" tabindex="0">${esc(c.head)}</th>`
  ).join("")
  const body = runs
    .map(
      (run) =>
        `<tr>${row(run)
          .map(
            (c, i) =>
              `<td${i >= 2 ? ' class="n"' : ""}${c.sort === undefined ? "" : ` data-sort="${esc(String(c.sort))}"`}>${esc(c.text)}</td>`
          )
          .join("")}</tr>`
    )
    .join("\n")
  return `<table id="summary"><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>`
}
