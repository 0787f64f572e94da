/**
 * The observe and route of `makeVllmLb` (`VllmLbPolicy.ts`): a coordinator update from `RankLoad`
 * rows (unknown rows filled with the busiest known values), and upstream's scan with the
 * beyond-upstream guards, known-first ties and the explanation.
 *
 * @internal
 */
import * as HashMap from "effect/HashMap"
import { isCount } from "../../internal/counts.js"
import { packed } from "../../internal/packed.js"
import type { Explanation, PolicyError, RankLoad, RouteRequest, RouteResult } from "../../Policy.js"
import { checkInputLength, checkNow, checkRequestFields } from "../../RequestChecks.js"
import * as VllmLb from "../VllmLb.js"
import type { VllmLbPolicyState } from "../VllmLbPolicyTypes.js"
import type { VllmEngineRow, VllmLbState } from "../VllmLbTypes.js"
import { kvGuard, kvTooSmall, observeFreeKv, skipping, snapshotAges, unionRanks } from "./beyondUpstream.js"
import { busiestKnown, busiestKv, withKv } from "./unknownRows.js"

/** `makeVllmLb`'s options, resolved once. @internal */
export interface LbSettings {
  readonly staleAfter: number | undefined
  readonly saturatedAt: number
  readonly roomBelow: number
  readonly guardOn: boolean
  readonly knownFirst: boolean
  readonly clientError: PolicyError | undefined
}

/** How much of rank `r`'s load is unknown: 2 when its counts are, plus 1 when its KV usage is. */
const unknownLevel = (s: VllmLbPolicyState, r: number): number =>
  (s.loadUnknown?.includes(r) === true ? 2 : 0) + (s.kvMissing.includes(r) ? 1 : 0)

/**
 * When the scan chose a rank whose load is less known than another rank of the same least score,
 * the first such better-known rank in scan order (the lowest level first); else `undefined`.
 */
const betterKnown = (
  s: VllmLbPolicyState,
  routed: VllmLb.VllmLbRouted,
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

/** `lb` with other engine rows (every field listed: one object shape, no spread). */
const withEngines = (lb: VllmLbState, lbEngines: ReadonlyArray<VllmEngineRow>): VllmLbState => ({
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

/** An empty front end (a refused `init`). @internal */
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

/** A coordinator update: each row replaces its rank's (see `makeVllmLb`). @internal */
export const observeLb = (
  st: LbSettings,
  state: VllmLbPolicyState,
  loads: ReadonlyArray<RankLoad>,
  now: number
): VllmLbPolicyState => {
  const { guardOn } = st
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
  const freeKv = guardOn ? observeFreeKv(state.freeKvTokens, loads, n) : undefined
  return {
    ...(freeKv === undefined ? {} : { freeKvTokens: freeKv }),
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

/** Upstream's scan over the scored rows, with the guards and known-first ties (see `makeVllmLb`). @internal */
export const routeLb = (
  st: LbSettings,
  state: VllmLbPolicyState,
  request: RouteRequest,
  now: number
): RouteResult<VllmLbPolicyState> => {
  const { staleAfter, saturatedAt, roomBelow, guardOn, knownFirst, clientError } = st
  if (clientError !== undefined) return clientError
  if (state.initError !== undefined) return state.initError
  const bad = checkInputLength(request.inputLength) ?? checkNow(now) ?? checkRequestFields(request)
  if (bad !== undefined) return bad
  const lb = state.lb
  const unhealthy = state.unhealthy
  let skip: ReadonlyArray<boolean> | undefined =
    unhealthy.length > 0 ? state.healthy.map((h) => !h) : undefined
  const missing = state.kvMissing
  const filled = missing.length === 0 ? undefined : busiestKv(lb.lbEngines)
  const scored = filled === undefined ? lb : { ...lb, lbEngines: withKv(lb.lbEngines, missing, filled) }
  // the guard reads the scored rows: a missing gauge counts as the busiest known KV usage, so
  // a rank without one never slips past the guard that holds back a known saturated rank
  const guarded = guardOn
    ? unionRanks(
        kvGuard(scored.lbEngines, state.healthy, saturatedAt, roomBelow),
        kvTooSmall(state.freeKvTokens, state.healthy, request.inputLength)
      )
    : undefined
  if (guarded !== undefined) skip = skipping(state.healthy, guarded)
  let routed = VllmLb.route(scored, request.requestId, request.routedDpRank, skip)
  if (knownFirst && !("_tag" in routed)) {
    const better = betterKnown(state, routed, skip)
    // the same unpinned route with only the better-known rank left: the same state effects
    if (better !== undefined)
      routed = VllmLb.route(
        scored,
        request.requestId,
        undefined,
        scored.lbEngines.map((_, r) => r !== better)
      )
  }
  if ("_tag" in routed)
    return routed.reason === "InvalidRoutedRank" ? { ...routed, field: "routedDpRank" } : routed
  // the busiest known KV stands in for a missing gauge only while scoring: the rows keep it absent
  const r =
    filled === undefined
      ? routed
      : {
          ...routed,
          state: { ...routed.state, lbEngines: withKv(routed.state.lbEngines, missing, undefined) }
        }
  const details: Record<string, unknown> = {
    startIndexUsed: r.startIndexUsed,
    requestWave: r.requestWave,
    firstReq: r.firstReq,
    inflight: r.state.inflight,
    kvMissing: state.kvMissing
  }
  if (state.loadUnknown !== undefined) details["loadUnknown"] = state.loadUnknown
  if (guarded !== undefined) details["kvGuarded"] = guarded
  if (unhealthy.length > 0) details["unhealthy"] = unhealthy
  if (state.rejectedRanks.length > 0) details["rejectedRanks"] = state.rejectedRanks
  const staleness = staleAfter === undefined ? undefined : snapshotAges(state.snapshotAt, now, staleAfter)
  if (staleness !== undefined) {
    details["snapshotAgeSeconds"] = staleness.ages
    details["neverObserved"] = staleness.never
    details["coordinatorFrozen"] = staleness.coordinatorFrozen
  }
  const stale = staleness?.stale
  const explanation: Explanation = {
    scores: r.scores ?? undefined,
    tieBreak:
      r.scores === null
        ? "routedDpRank bypasses scoring and rotation"
        : "first minimum (strict <) in scan order",
    stale,
    details
  }
  return { _tag: "Routed", rank: r.chosen, state: withLb(state, r.state), explanation }
}
