// Rows the step-time-aware tests share.
import type { RankLoad } from "../../src/index.js"

/** A row stamped at `t` with nothing running, waiting or held, plus `extra`. */
export const idleAt = (dpRank: number, t = 0, extra: Partial<RankLoad> = {}): RankLoad => ({
  dpRank,
  timestamp: t,
  numRunningReqs: 0,
  numWaitingReqs: 0,
  numTotalTokens: 0,
  ...extra
})

/**
 * Two ranks at time 0 for the running-slot term: rank 0 runs 64 requests (a cap of 64) with 3
 * waiting and little queued (300 uncached tokens); rank 1 runs 10 with 1 waiting and more queued
 * (4,000).
 */
export const cappedRows: ReadonlyArray<RankLoad> = [
  idleAt(0, 0, {
    numRunningReqs: 64,
    numWaitingReqs: 3,
    numTotalTokens: 64_000,
    numWaitingUncachedTokens: 300
  }),
  idleAt(1, 0, {
    numRunningReqs: 10,
    numWaitingReqs: 1,
    numTotalTokens: 10_000,
    numWaitingUncachedTokens: 4000
  })
]
