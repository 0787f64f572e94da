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
 * The table's status cell for one run: `ok F/T` when every request finished and the run kept up
 * with the arrivals, `behind F/T` when every request finished but the backlog grew over the trace
 * (`keptUp` of @loadledger/sim is false: the group is above capacity at this rate); otherwise how
 * the run ended (`incomplete` when it completed with requests left over, else the status tag:
 * `NoProgress`, `Deadlock`, `TimeLimit`), `F/T` finished of total, and the non-zero counts of
 * requests `rejected` (never ran: too large for the KV pool, or the policy could not place them),
 * `stalled` (held on a rank that could not run them when the run stopped) and `unfinished` (the
 * rest: admitted or waiting when the run stopped).
 *
 * **When to use**: anywhere a run's outcome is shown in one cell; `simulateExitCode` gives the
 * matching process exit code.
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
): string => {
  const q = r.requests
  const stalled = q.stalled ?? 0
  const rest = q.unfinished - q.rejected - stalled
  const counted = `${q.finished}/${q.total}`
  if (r.status._tag === "Completed" && q.finished === q.total) {
    const behind = r.lastArrivalSeconds !== undefined && keptUp(r as PolicyResult) === false
    return `${behind ? "behind" : "ok"} ${counted}`
  }
  const parts = [
    q.rejected > 0 ? `${q.rejected} rejected` : undefined,
    stalled > 0 ? `${stalled} stalled` : undefined,
    rest > 0 ? `${rest} unfinished` : undefined
  ].filter((x) => x !== undefined)
  const tag = r.status._tag === "Completed" ? "incomplete" : r.status._tag
  return `${tag} ${counted}${parts.length > 0 ? `, ${parts.join(", ")}` : ""}`
}

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
