/**
 * The `makeVllmLb` policy's state updates (`VllmLbPolicy.ts`): the fold of one `observe`, the
 * better-known tie-break (`unknownLosesTies`) and the state's copy helpers, which list every field
 * (one object shape, no spread).
 */
import * as HashMap from "effect/HashMap"
import { isCount } from "../../internal/counts.js"
import { packed } from "../../internal/packed.js"
import type { RankLoad } from "../../Policy.js"
import type { VllmLbPolicyState } from "../VllmLbPolicyTypes.js"
import type { VllmEngineRow, VllmLbRouted, VllmLbState } from "../VllmLbTypes.js"
import { busiestKnown } from "./unknownRows.js"

/** How much of rank `r`'s load is unknown: 2 when its counts are, plus 1 when its KV usage is. */
const unknownLevel = (s: VllmLbPolicyState, r: number): number =>
  (s.loadUnknown?.includes(r) === true ? 2 : 0) + (s.kvMissing.includes(r) ? 1 : 0)

/**
 * When the scan chose a rank whose load is less known than another rank of the same least score,
 * the first such better-known rank in scan order (the lowest level first); else `undefined`.
 */
export const betterKnown = (
  s: VllmLbPolicyState,
  routed: VllmLbRouted,
  skip: ReadonlyArray<boolean> | undefined
): number | undefined => {
  const scores = routed.scores
  if (scores === null || (s.loadUnknown === undefined && s.kvMissing.length === 0)) return undefined
  let best = routed.chosen
  let bestLevel = unknownLevel(s, best)
  if (bestLevel === 0) return undefined
  const n = scores.length
  for (let i = 0, r = routed.startIndexUsed % n; i < n; i++, r = r + 1 === n ? 0 : r + 1) {
    if (skip?.[r] === true || scores[r] !== scores[routed.chosen]) continue
    const level = unknownLevel(s, r)
    if (level < bestLevel) {
      best = r
      bestLevel = level
    }
  }
  return best === routed.chosen ? undefined : best
}

/** `s` with another front-end state (every field listed: one object shape, no spread). */
export const withLb = (s: VllmLbPolicyState, lb: VllmLbState): VllmLbPolicyState => ({
  lb,
  snapshotAt: s.snapshotAt,
  healthy: s.healthy,
  unhealthy: s.unhealthy,
  kvMissing: s.kvMissing,
  loadUnknown: s.loadUnknown,
  unknownRows: s.unknownRows,
  rejectedRanks: s.rejectedRanks,
  initError: s.initError
})

export const withEngines = (lb: VllmLbState, lbEngines: ReadonlyArray<VllmEngineRow>): VllmLbState => ({
  numEngines: lb.numEngines,
  clientCount: lb.clientCount,
  clientIndex: lb.clientIndex,
  lbEngines,
  inflight: lb.inflight,
  reqsInFlight: lb.reqsInFlight,
  engStartIndex: lb.engStartIndex,
  currentWave: lb.currentWave,
  enginesRunning: lb.enginesRunning
})

/** The state of a policy whose `init` was refused: no engines. */
export const emptyLb = (): VllmLbState => ({
  numEngines: 0,
  clientCount: 1,
  clientIndex: 0,
  lbEngines: [],
  inflight: [],
  reqsInFlight: HashMap.empty(),
  engStartIndex: 0,
  currentWave: 0,
  enginesRunning: false
})

/**
 * One `observe` (see `makeVllmLb`): each in-range row replaces its rank's engine row, a row that is
 * unknown or lacks a count is filled with the busiest known values (`busiestKnown`), out-of-range
 * dpRanks are listed in `rejectedRanks`; a `now` that is not finite returns `state`.
 */
export const observeLoads = (
  state: VllmLbPolicyState,
  loads: ReadonlyArray<RankLoad>,
  now: number
): VllmLbPolicyState => {
  if (!Number.isFinite(now)) return state
  const n = state.lb.numEngines
  const rows: Array<VllmEngineRow> = state.lb.lbEngines.slice()
  const at = state.snapshotAt.slice()
  const rejected: Array<number> = []
  let unknown: Array<RankLoad | undefined> | undefined
  if (state.unknownRows !== undefined) {
    unknown = packed<RankLoad | undefined>(n, undefined)
    for (const row of state.unknownRows) unknown[row.dpRank] = row
  }
  for (const l of loads) {
    const r = l.dpRank
    if (!Number.isInteger(r) || r < 0 || r >= n) {
      rejected.push(r)
      continue
    }
    // a count that is not a finite non-negative number is no count: the row is unknown
    const waiting = l.unknown === undefined && isCount(l.numWaitingReqs) ? l.numWaitingReqs : undefined
    const running = l.unknown === undefined && isCount(l.numRunningReqs) ? l.numRunningReqs : undefined
    at[r] = l.timestamp ?? now
    if (waiting !== undefined && running !== undefined) {
      rows[r] = [waiting, running, l.kvCacheUsage]
      if (unknown !== undefined) unknown[r] = undefined
    } else {
      unknown ??= packed<RankLoad | undefined>(n, undefined)
      unknown[r] = l
    }
  }
  const unknownRows = unknown === undefined ? undefined : busiestKnown(rows, unknown)
  const kvMissing: Array<number> = []
  for (let i = 0; i < rows.length; i++) if (rows[i]![2] === undefined) kvMissing.push(i)
  return {
    lb: withEngines(state.lb, rows),
    snapshotAt: at,
    healthy: state.healthy,
    unhealthy: state.unhealthy,
    kvMissing,
    loadUnknown: unknownRows?.map((row) => row.dpRank),
    unknownRows,
    rejectedRanks: rejected,
    initError: state.initError
  }
}
