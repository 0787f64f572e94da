/**
 * The `simulate` command's terminal table (cli-table3).
 *
 * @since 0.1.0
 */
import { keptUp, type PolicyResult } from "@loadledger/sim"
import Table from "cli-table3"

const secs = (x: number | undefined): string =>
  x === undefined ? "-" : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2)
const ms = (x: number | undefined): string => (x === undefined ? "-" : (x * 1000).toFixed(x < 0.1 ? 1 : 0))
const pct = (x: number): string => `${(x * 100).toFixed(1)}%`

/**
 * The bucket bound (`le`) below which a share `q` of the steps' token imbalance ratios fall;
 * `undefined` when no step ran real tokens, `Infinity` past the last bucket.
 *
 * @example
 * ```ts
 * import { imbalanceQuantile } from "./simulateTable.js"
 * imbalanceQuantile({ le: [1, 2], counts: [1, 3, 0] }, 0.5) // => 2
 * ```
 *
 * @category simulate
 * @since 0.1.0
 */
export const imbalanceQuantile = (
  h: { readonly le: ReadonlyArray<number>; readonly counts: ReadonlyArray<number> },
  q: number
): number | undefined => {
  const total = h.counts.reduce((a, b) => a + b, 0)
  if (total === 0) return undefined
  let acc = 0
  for (let i = 0; i < h.counts.length; i++) {
    acc += h.counts[i]!
    if (acc >= q * total) return h.le[i] ?? Number.POSITIVE_INFINITY
  }
  return Number.POSITIVE_INFINITY
}

const le = (x: number | undefined): string =>
  x === undefined ? "-" : x === Number.POSITIVE_INFINITY ? ">64" : `≤${x}`

/**
 * Column headers of the table, in order.
 *
 * @example
 * ```ts
 * import { TABLE_HEAD } from "./simulateTable.js"
 * TABLE_HEAD.slice(0, 5) // => ["policy", "engine", "TTFT p50/p99 s", "ITL p50/p99 ms", "E2E p50/p99 s"]
 * TABLE_HEAD.at(-1) // => "status"
 * ```
 *
 * @since 0.1.0
 */
export const TABLE_HEAD: ReadonlyArray<string> = [
  "policy",
  "engine",
  "TTFT p50/p99 s",
  "ITL p50/p99 ms",
  "E2E p50/p99 s",
  "out tok/s",
  "imbalance p50/p90",
  "sync wait",
  "idle ranks",
  "cache hit",
  "retract",
  "req/rank min-max",
  "status"
]

/**
 * What one run's status cell is written from: how the run ended (`status`, the `SimStatus` tag),
 * the request counts, and whether it kept up with the arrivals (`keptUp` of @loadledger/sim;
 * `undefined` when it cannot tell). A `PolicyResult` gives it through `runOutcome`; a sweep's
 * `SummaryRow` carries these fields itself.
 *
 * @category simulate
 * @since 0.3.0
 */
export interface RunOutcome {
  readonly status: string
  readonly finished: number
  readonly total: number
  readonly rejected: number
  readonly stalled: number
  readonly keptUp: boolean | undefined
}

/**
 * The status cell for one run, as `simulate` and the sweep's tables print it: `ok F/T` when every
 * request finished and the run kept up with the arrivals, `behind F/T` when every request finished
 * but the backlog grew over the trace (`keptUp` is false: the group is above capacity at this
 * rate); otherwise how the run ended (`incomplete` when it completed with requests left over, e.g.
 * rejected, else the status tag: `NoProgress`, `Deadlock`, `TimeLimit`), `F/T` finished of total,
 * and the non-zero counts of requests `rejected` (never ran: too large for the KV pool, or the
 * policy could not place them), `stalled` (held on a rank that could not run them when the run
 * stopped) and `unfinished` (the rest: admitted or waiting when the run stopped). `ok` never
 * stands for a run that left a request unserved.
 *
 * **When to use**: anywhere a run's outcome is shown in one cell (`statusLabel` for a
 * `PolicyResult`); `simulateExitCode` gives the matching process exit code.
 *
 * @example
 * ```ts
 * import { outcomeLabel } from "./simulateTable.js"
 * const all = { status: "Completed", finished: 19366, total: 19366, rejected: 0, stalled: 0, keptUp: true }
 * outcomeLabel(all) // => "ok 19366/19366"
 * outcomeLabel({ ...all, keptUp: false }) // => "behind 19366/19366"
 * outcomeLabel({ ...all, finished: 0, rejected: 19366 }) // => "incomplete 0/19366, 19366 rejected"
 * outcomeLabel({ status: "NoProgress", finished: 4, total: 10, rejected: 1, stalled: 2, keptUp: false })
 * // => "NoProgress 4/10, 1 rejected, 2 stalled, 3 unfinished"
 * ```
 *
 * @category simulate
 * @since 0.3.0
 */
export const outcomeLabel = (o: RunOutcome): string => {
  const rest = o.total - o.finished - o.rejected - o.stalled
  const counted = `${o.finished}/${o.total}`
  if (o.status === "Completed" && o.finished === o.total)
    return `${o.keptUp === false ? "behind" : "ok"} ${counted}`
  const parts = [
    o.rejected > 0 ? `${o.rejected} rejected` : undefined,
    o.stalled > 0 ? `${o.stalled} stalled` : undefined,
    rest > 0 ? `${rest} unfinished` : undefined
  ].filter((x) => x !== undefined)
  const tag = o.status === "Completed" ? "incomplete" : o.status
  return `${tag} ${counted}${parts.length > 0 ? `, ${parts.join(", ")}` : ""}`
}

/**
 * A run's `RunOutcome` from its result: status tag, counts (`stalled` 0 when a result written before
 * it was counted lacks it) and `keptUp` (`undefined` for a result without arrival times).
 *
 * @example
 * ```ts
 * import { runOutcome } from "./simulateTable.js"
 * runOutcome({ status: { _tag: "Completed" }, requests: { total: 3, finished: 2, unfinished: 1, rejected: 1, stalled: 0 } })
 * // => { status: "Completed", finished: 2, total: 3, rejected: 1, stalled: 0, keptUp: undefined }
 * ```
 *
 * @category simulate
 * @since 0.3.0
 */
export const runOutcome = (
  r: Pick<PolicyResult, "status" | "requests"> &
    Partial<Pick<PolicyResult, "firstArrivalSeconds" | "lastArrivalSeconds" | "lastScheduledSeconds">>
): RunOutcome => ({
  status: r.status._tag,
  finished: r.requests.finished,
  total: r.requests.total,
  rejected: r.requests.rejected,
  stalled: r.requests.stalled ?? 0,
  keptUp: r.lastArrivalSeconds === undefined ? undefined : keptUp(r as PolicyResult)
})

/**
 * The table's status cell for one run's result: `outcomeLabel` of its `runOutcome` (`ok F/T` only
 * when every request finished and the run kept up; `behind`, `incomplete` with the rejected count,
 * or the status tag otherwise).
 *
 * **When to use**: to print a `PolicyResult`'s outcome in one cell.
 *
 * @example
 * ```ts
 * import { statusLabel } from "./simulateTable.js"
 * statusLabel({ status: { _tag: "Completed" }, requests: { total: 100, finished: 76, unfinished: 24, rejected: 24, stalled: 0 } })
 * // => "incomplete 76/100, 24 rejected"
 * statusLabel({ status: { _tag: "Completed" }, requests: { total: 3, finished: 3, unfinished: 0, rejected: 0, stalled: 0 } })
 * // => "ok 3/3"
 * const done = { status: { _tag: "Completed" as const }, requests: { total: 1000, finished: 1000, unfinished: 0, rejected: 0, stalled: 0 }, firstArrivalSeconds: 0, lastArrivalSeconds: 100 }
 * statusLabel({ ...done, lastScheduledSeconds: 160 }) // => "behind 1000/1000"
 * ```
 *
 * @category simulate
 * @since 0.2.0
 */
export const statusLabel = (
  r: Pick<PolicyResult, "status" | "requests"> &
    Partial<Pick<PolicyResult, "firstArrivalSeconds" | "lastArrivalSeconds" | "lastScheduledSeconds">>
): string => outcomeLabel(runOutcome(r))

/**
 * The exit code of `loadledger simulate` for its runs: 0 when every request of every run finished;
 * 2 when a run completed or hit `maxSimulatedSeconds` with requests rejected or unfinished; 3 when
 * a run could not go on (`NoProgress` or `Deadlock`: stalled ranks). The worst run decides. 1 is
 * bad input (printed before any run, or a run's `InvalidConfig` status).
 *
 * **When to use**: to turn simulation outcomes into a process status a script or CI can test.
 *
 * @example
 * ```ts
 * import { simulateExitCode } from "./simulateTable.js"
 * const req = { total: 2, finished: 2, unfinished: 0, rejected: 0, stalled: 0 }
 * simulateExitCode([{ status: { _tag: "Completed" }, requests: req }]) // => 0
 * simulateExitCode([{ status: { _tag: "Completed" }, requests: { ...req, finished: 1, unfinished: 1, rejected: 1 } }]) // => 2
 * simulateExitCode([{ status: { _tag: "NoProgress", atSeconds: 1, ranks: [1], message: "" }, requests: req }]) // => 3
 * ```
 *
 * @category simulate
 * @since 0.2.0
 */
export const simulateExitCode = (
  results: ReadonlyArray<Pick<PolicyResult, "status" | "requests">>
): number => {
  let code = 0
  for (const r of results) {
    const tag = r.status._tag
    if (tag === "InvalidConfig") return 1
    const c =
      tag === "NoProgress" || tag === "Deadlock"
        ? 3
        : tag === "TimeLimit" || r.requests.finished < r.requests.total
          ? 2
          : 0
    if (c > code) code = c
  }
  return code
}

/**
 * One row per policy: latencies (p50/p99), output tokens/s, token imbalance ratio (the SGLang bucket
 * holding the median and the 90th percentile step), sync-wait share, idle-rank step share,
 * prefix-cache hit rate, retractions, the fewest and most requests any rank got, and how the run
 * ended (`statusLabel`: `ok` only when every request finished).
 *
 * @example
 * ```ts
 * import { renderTable } from "./simulateTable.js"
 * import { runCell } from "../sweep/runCell.js"
 * const { result } = runCell({
 *   id: "demo", trace: "examples/traces/mooncake/conversation_trace.jsonl", traceName: "conversation", rate: 1,
 *   limit: 8, dp: 2, engine: "sglang", frontEnds: 1, policy: "total-tokens", model: "glm-5.3", gpu: "h200", seed: 0
 * })
 * const lines = renderTable([{ engine: "sglang", result }], false).split("\n")
 * lines.length // => 5
 * const cells = (line: string) => line.split("│").map((c) => c.trim()).slice(1, -1)
 * cells(lines[1]!).slice(0, 3) // => ["policy", "engine", "TTFT p50/p99 s"]
 * cells(lines[3]!)[0] // => "total-tokens"
 * cells(lines[3]!).at(-1) // => "ok 8/8"
 * ```
 *
 * @category simulate
 * @since 0.1.0
 */
export const renderTable = (
  rows: ReadonlyArray<{ readonly engine: string; readonly result: PolicyResult }>,
  color: boolean
): string => {
  const t = new Table({
    head: [...TABLE_HEAD],
    style: color ? { head: ["cyan"], compact: true } : { head: [], border: [], compact: true }
  })
  for (const { engine, result: r } of rows) {
    const perRank = r.requestsPerRank
    t.push([
      r.policy,
      engine,
      `${secs(r.ttftSeconds.p50)} / ${secs(r.ttftSeconds.p99)}`,
      `${ms(r.itlSeconds.p50)} / ${ms(r.itlSeconds.p99)}`,
      `${secs(r.e2eSeconds.p50)} / ${secs(r.e2eSeconds.p99)}`,
      r.outputTokensPerSecond.toFixed(0),
      `${le(imbalanceQuantile(r.imbalanceHistogram, 0.5))} / ${le(imbalanceQuantile(r.imbalanceHistogram, 0.9))}`,
      pct(r.syncWaitShare),
      pct(r.idleRankStepShare),
      pct(r.prefixCacheHitRate),
      String(r.retractions),
      perRank.length === 0 ? "-" : `${Math.min(...perRank)}-${Math.max(...perRank)}`,
      statusLabel(r)
    ])
  }
  return t.toString()
}
