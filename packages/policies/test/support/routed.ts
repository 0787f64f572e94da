// Helpers the own-policy tests share: the placement of a route result (a test that expects one
// fails on anything else) and an idle, fresh snapshot row.
import type { RankLoad, Routed, RouteResult } from "../../src/index.js"

export const routed = <S>(r: RouteResult<S>): Routed<S> => {
  if (r._tag !== "Routed") throw new Error(`expected Routed, got ${JSON.stringify(r)}`)
  return r
}

/** A row stamped at 1 s with nothing running, waiting or held, plus `extra`. */
export const idle = (dpRank: number, extra: Partial<RankLoad> = {}): RankLoad => ({
  dpRank,
  timestamp: 1,
  numRunningReqs: 0,
  numWaitingReqs: 0,
  numTotalTokens: 0,
  ...extra
})
