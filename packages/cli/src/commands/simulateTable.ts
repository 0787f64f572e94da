/**
 * The `simulate` command's terminal table (cli-table3).
 *
 * @since 0.1.0
 */
import type { PolicyResult } from "@loadledger/sim"
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

/** Column headers of the table, in order. @since 0.1.0 */
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
 * One row per policy: latencies (p50/p99), output tokens/s, token imbalance ratio (the SGLang bucket
 * holding the median and the 90th percentile step), sync-wait share, idle-rank step share,
 * prefix-cache hit rate, retractions, the fewest and most requests any rank got, and how the run
 * ended.
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
      r.status._tag === "Completed"
        ? `ok ${r.requests.finished}/${r.requests.total}`
        : `${r.status._tag} ${r.requests.finished}/${r.requests.total}`
    ])
  }
  return t.toString()
}
