/**
 * The per-rank load reports an engine would have published over a run, from its step log: one
 * report per interval of simulated time, each rank's row in `RankLoad`'s terms, ready to be
 * written as SGLang `/v1/loads` responses (the CLI's `simulate --emit-loads`).
 *
 * @since 0.6.0
 */
import type { RankLoad } from "@loadledger/schema"
import type { StepRecord } from "../Result.js"

/**
 * One published report: `timestampSeconds` (simulated seconds at the interval's end) and a row per
 * rank (index = `dpRank`). Each row: `numRunningReqs` / `numWaitingReqs` (at the last step of the
 * interval), `numUsedTokens` (KV tokens held at that step), `cacheHitRate` (0..1: cached over
 * admitted prompt tokens since the run began), `genThroughput` (tokens generated over the interval / its length, tokens/s, as SGLang's
 * `gen_throughput`), `utilization` (0..1: the share of the interval the rank spent in its own
 * forward work, the step less its sync wait; the simulator's reading of the field) and
 * `prefillTokens` (tokens prefilled over the interval, SGLang v2's `total_prefill_uncached_tokens`
 * as a per-interval figure).
 *
 * @category faults
 * @since 0.6.0
 */
export interface LoadReport {
  readonly timestampSeconds: number
  readonly loads: ReadonlyArray<RankLoad & { readonly prefillTokens: number }>
}

interface Acc {
  decoded: number
  prefilled: number
  busy: number
  running: number
  waiting: number
  used: number
  hit: number
}

const fresh = (): Acc => ({ decoded: 0, prefilled: 0, busy: 0, running: 0, waiting: 0, used: 0, hit: 0 })

/**
 * Aggregate a step log (`simulate` with `recordSteps: "loads"`) into one report per `intervalSeconds`
 * (> 0) for `dpSize` ranks; intervals with no step are skipped (an idle engine publishes an idle
 * row, which says nothing about speed). Pure.
 *
 * @example
 * ```ts
 * import { loadReportsOf } from "@loadledger/sim"
 * const rank = (r: number, w: number) => ({ rank: r, tokens: 4, dummyTokens: 0, numDecodes: 4, numRunningReqs: 4, numWaitingReqs: 0, numUsedTokens: 4000, syncWaitSeconds: w })
 * const log = [0, 0.5].map((t) => ({ startSeconds: t, stepSeconds: 0.5, ranks: [rank(0, 0.25), rank(1, 0)] }))
 * const [report] = loadReportsOf(log, 2, 1)
 * report!.loads.map((l) => l.utilization) // => [0.5, 1]
 * report!.loads[0]!.genThroughput // => 8
 * ```
 *
 * @category faults
 * @since 0.6.0
 */
export const loadReportsOf = (
  stepLog: ReadonlyArray<StepRecord>,
  dpSize: number,
  intervalSeconds: number
): ReadonlyArray<LoadReport> => {
  const out: Array<LoadReport> = []
  let window = -1
  let accs: Array<Acc> = []
  const flush = () => {
    if (window < 0) return
    const end = (window + 1) * intervalSeconds
    out.push({
      timestampSeconds: end,
      loads: accs.map((a, dpRank) => ({
        dpRank,
        timestamp: end,
        numRunningReqs: a.running,
        numWaitingReqs: a.waiting,
        numUsedTokens: a.used,
        cacheHitRate: a.hit,
        genThroughput: a.decoded / intervalSeconds,
        utilization: Math.min(1, a.busy / intervalSeconds),
        prefillTokens: a.prefilled
      }))
    })
  }
  for (const s of stepLog) {
    const w = Math.floor(s.startSeconds / intervalSeconds)
    if (w !== window) {
      flush()
      window = w
      accs = Array.from({ length: dpSize }, fresh)
    }
    for (const r of s.ranks) {
      const a = accs[r.rank]
      if (a === undefined) continue
      const decodes = r.numDecodes ?? 0
      a.decoded += decodes
      a.prefilled += r.tokens - decodes
      a.busy += s.stepSeconds - (r.syncWaitSeconds ?? 0)
      a.running = r.numRunningReqs ?? 0
      a.waiting = r.numWaitingReqs ?? 0
      a.used = r.numUsedTokens ?? 0
      const admitted = r.admittedPromptTokens ?? 0
      a.hit = admitted > 0 ? (r.cachedPromptTokens ?? 0) / admitted : 0
    }
  }
  flush()
  return out
}
