/**
 * How the SMG policy adapters turn loadledger's `RankLoad` rows into SMG load reports: a row as a
 * one-scheduler `/v1/loads` report (or `null` when it lacks what the policy reads), loadledger's
 * busiest-known rule for such rows, and one worker's DP ranks as one report (`dp-min-token`).
 *
 * @internal
 */
import type { RankLoad } from "@loadledger/schema"
import type { SmgLoadReport, SmgSchedulerLoad } from "../Types.js"

/** A rank is one worker of one scheduler: that scheduler's DP rank inside the worker is 0. */
export const ONE_SCHEDULER_RANK = 0

/** A `RankLoad` as a one-scheduler `/v1/loads` report, or `null` when it lacks what `need` reads. */
export const asReport = (row: RankLoad, need: "usage" | "leastLoad" | "usedTokens"): SmgLoadReport | null => {
  if (row.unknown !== undefined) return null
  const usage = row.tokenUsage ?? row.kvCacheUsage
  const used = row.numUsedTokens ?? row.numTotalTokens
  if (need === "usage" && usage === undefined) return null
  if (need === "leastLoad" && (usage === undefined || row.numWaitingUncachedTokens === undefined)) return null
  if (need === "usedTokens" && used === undefined) return null
  // what the row reported, nothing more: the `need` check above guarantees what the core reads
  const l: SmgSchedulerLoad = {
    dpRank: row.workerDpRank ?? ONE_SCHEDULER_RANK,
    numRunningReqs: row.numRunningReqs,
    numWaitingReqs: row.numWaitingReqs,
    numWaitingUncachedTokens: row.numWaitingUncachedTokens,
    numTotalReqs:
      row.numRunningReqs !== undefined && row.numWaitingReqs !== undefined
        ? row.numRunningReqs + row.numWaitingReqs
        : undefined,
    numUsedTokens: used,
    maxTotalNumTokens: row.maxTotalNumTokens ?? (used !== undefined ? Number.MAX_SAFE_INTEGER : undefined),
    tokenUsage: usage,
    genThroughput: row.genThroughput,
    cacheHitRate: row.cacheHitRate,
    utilization: row.utilization,
    maxRunningRequests: row.maxRunningRequests
  }
  return { dpRankCount: 1, loads: [l] }
}

/**
 * loadledger's rule for a rank whose row lacks what the policy reads (or is `unknown`): its own
 * reported fields, each missing one read as the busiest value any row of this poll reports for it
 * (highest `tokenUsage`, highest waiting uncached tokens, lowest effective throughput, non-positive
 * read as upstream's 2000 tok/s default), so the rank is never preferred because of what is unknown.
 * Upstream has no such row: a failed poll keeps the old report and a never-polled worker is compared
 * by request counts, which would flip the *other* candidate's known usage to its request count too. A needed field no row reports: `null`
 * (upstream's no-report path, every rank by the router's in-flight count). Full rows are untouched.
 */
export const busiestKnown = (
  loads: ReadonlyArray<RankLoad>,
  need: "usage" | "leastLoad"
): SmgLoadReport | null => {
  const max = (xs: ReadonlyArray<number | undefined>) => {
    const v = xs.filter((x): x is number => x !== undefined)
    return v.length === 0 ? undefined : Math.max(...v)
  }
  const rows = loads.filter((r) => r.unknown === undefined)
  const tokenUsage = max(rows.map((r) => r.tokenUsage ?? r.kvCacheUsage))
  const uncached = max(rows.map((r) => r.numWaitingUncachedTokens))
  if (tokenUsage === undefined || (need === "leastLoad" && uncached === undefined)) return null
  const tps = rows.map((r) => (r.genThroughput !== undefined && r.genThroughput > 0 ? r.genThroughput : 2000))
  const l: SmgSchedulerLoad = {
    dpRank: ONE_SCHEDULER_RANK,
    numWaitingUncachedTokens: uncached,
    tokenUsage,
    genThroughput: tps.length === 0 ? undefined : Math.min(...tps)
  }
  return { dpRankCount: 1, loads: [l] }
}

/** `row`'s own reported fields over the busiest report (an `unknown` row: the busiest report as is). */
export const withBusiest = (row: RankLoad, worst: SmgLoadReport): SmgLoadReport => {
  const w = worst.loads[0]!
  if (row.unknown !== undefined) return worst
  const l: SmgSchedulerLoad = {
    ...w,
    tokenUsage: row.tokenUsage ?? row.kvCacheUsage ?? w.tokenUsage,
    numWaitingUncachedTokens: row.numWaitingUncachedTokens ?? w.numWaitingUncachedTokens,
    genThroughput: row.genThroughput ?? w.genThroughput
  }
  return { dpRankCount: 1, loads: [l] }
}

/** One worker's DP ranks (rank -> used tokens) as its `/v1/loads` report. */
export const asRanks = (m: ReadonlyMap<number, number>): SmgLoadReport => ({
  dpRankCount: m.size,
  // `max_total_num_tokens` only has to be positive for upstream to read the used tokens
  loads: [...m].map(([dpRank, used]) => ({
    dpRank,
    numUsedTokens: used,
    maxTotalNumTokens: Number.MAX_SAFE_INTEGER
  }))
})
