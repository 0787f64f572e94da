/**
 * `makeVllmLb` / `vllmKvPressure`: vLLM's front-end balancer (`VllmLb`) as a `Policy`, fed by `RankLoad` rows instead of coordinator publications, with its beyond-upstream options (KV-saturation guard, abort reporting) off by default.
 *
 * Over 300 lines by its docstrings: one adapter (options, state, `observe` / `route` / `finish`), whose unknown-row and health rules are documented where they apply.
 *
 * @since 0.1.0
 */

import * as HashMap from "effect/HashMap"
import { isCount } from "../internal/counts.js"
import { packed } from "../internal/packed.js"
import { checkClientOptions } from "../Options.js"
import type { Explanation, Policy, PolicyError, RankLoad, RouteResult } from "../Policy.js"
import { checkStatus } from "../RankStatus.js"
import { checkInputLength, checkNow, checkRequestFields } from "../RequestChecks.js"
import {
  kvGuard,
  kvTooSmall,
  observeFreeKv,
  skipping,
  snapshotAges,
  unionRanks
} from "./internal/beyondUpstream.js"
import { busiestKnown, busiestKv, withKv } from "./internal/unknownRows.js"
import type { VllmClientOptions, VllmEngineRow, VllmLbState } from "./VllmLb.js"
import * as VllmLb from "./VllmLb.js"

/**
 * Options of `makeVllmLb`. `clientCount` / `clientIndex` are upstream's (API-server processes and
 * this one's index). The rest are **beyond upstream** and off by default:
 * - `staleAfterSeconds`: a rank whose last snapshot (`RankLoad.timestamp`) is older than this at
 *   routing time is listed in `explanation.stale`; when every observed rank is stale the
 *   explanation says `coordinatorFrozen: true`. Routing itself is unchanged.
 * - `kvSaturationGuard`: never choose a rank with `kvCacheUsage >= saturatedAt` (0.99) and waiting
 *   requests while some healthy rank has `kvCacheUsage < roomBelow` (0.9); and, when rows carry
 *   the KV capacity (`kvAvailableTokens`, or `tokenCapacity` / `maxTotalNumTokens` with used tokens
 *   or `kvCacheUsage`), never a rank whose free KV tokens are fewer than the prompt's `inputLength`
 *   while some healthy rank's are not (a size check, not a usage threshold; issue 30).
 * - `unknownLosesTies`: on a tie for the least score, a rank whose load is better known wins (its
 *   counts known before unknown ones, then its KV usage known before missing), then the scan order:
 *   unknown is never attractive. Upstream always has every field, so it never meets the case; off,
 *   a tie goes to the scan order whatever is known (loadledger's `vllm-kv-pressure`).
 *
 * @category vllm
 * @since 0.1.0
 */
export interface VllmLbPolicyOptions extends VllmClientOptions {
  readonly staleAfterSeconds?: number | undefined
  readonly kvSaturationGuard?:
    | boolean
    | { readonly saturatedAt?: number | undefined; readonly roomBelow?: number | undefined }
    | undefined
  readonly unknownLosesTies?: boolean | undefined
}

/**
 * State of the `makeVllmLb` policy: the upstream front-end state `lb`, plus per-rank snapshot
 * timestamps (`snapshotAt`, seconds, absent until a rank is observed), health, and the dpRanks of
 * the last `observe` that were out of range (`rejectedRanks`, never silently dropped).
 *
 * @category vllm
 * @since 0.1.0
 */
export interface VllmLbPolicyState {
  readonly lb: VllmLbState
  readonly snapshotAt: ReadonlyArray<number | undefined>
  readonly healthy: ReadonlyArray<boolean>
  /** Ranks marked unhealthy (derived from `healthy`, kept so routing does not rebuild it). */
  readonly unhealthy: ReadonlyArray<number>
  /** Ranks whose last row has no `kvCacheUsage` (derived at `observe`). */
  readonly kvMissing: ReadonlyArray<number>
  /**
   * Ranks whose last row was `unknown` or lacked `numWaitingReqs` / `numRunningReqs`: their row in
   * `lb.lbEngines` holds what they reported and the busiest known values for the rest (see
   * `makeVllmLb`). Absent when none.
   */
  readonly loadUnknown?: ReadonlyArray<number> | undefined
  /** The last rows of the `loadUnknown` ranks, as received (in `loadUnknown` order). */
  readonly unknownRows?: ReadonlyArray<RankLoad> | undefined
  readonly rejectedRanks: ReadonlyArray<number>
  readonly initError?: PolicyError | undefined
  /** With the KV guard: each rank's last known free KV tokens (absent while no row carried a capacity). */
  readonly freeKvTokens?: ReadonlyArray<number | undefined> | undefined
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

const withLb = (s: VllmLbPolicyState, lb: VllmLbState): VllmLbPolicyState => ({
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

const emptyLb = (): VllmLbState => ({
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
 * vLLM's data-parallel load balancer (`DPLBAsyncMPClient`) as a loadledger `Policy`.
 *
 * **When to use**: to simulate, replay or run vLLM's internal DP balancing from published loads.
 * `observe` is a coordinator update: each `RankLoad` replaces that rank's row with
 * `[numWaitingReqs, numRunningReqs, kvCacheUsage]` (local bumps on that row are lost; in-flight
 * counts kept). Upstream always sends every rank; ranks missing from `loads` keep their row.
 *
 * **Unknown, absent, stale, unhealthy** (loadledger's extension; upstream's coordinator always
 * sends every field, and with every field present routing is exactly upstream's). The fields it
 * needs are `numWaitingReqs` and `numRunningReqs`. A row that is `unknown`, or lacks either, is
 * never attractive: each field it did not report (`kvCacheUsage` included) becomes the busiest
 * known value, the maximum over the ranks whose counts are known, as held at that `observe` (local
 * bumps included); the fields it did report are kept. Such ranks are listed in
 * `details.loadUnknown`. When no rank has both counts, the busiest value the partial rows reported
 * stands in for each field a row lacks (a field none reported counts alike on every rank), so a
 * `/metrics` page cut before its waiting family still ranks engines by their running counts; when
 * no row reported any count, the ranks keep their previous row (every rank is then equally unknown). A row
 * with the counts but without `kvCacheUsage` is scored with the busiest KV usage any rank reports
 * (no penalty when no rank reports one) and listed in `details.kvMissing`; its stored row keeps the
 * gauge absent (0.1.0 added no penalty, which made a rank without the gauge more attractive than a
 * known saturated one). A row without `timestamp` counts as observed at `now`. A stale row is used as it is
 * (upstream has no staleness; `staleAfterSeconds` only explains). Unhealthy ranks: see `setStatus`.
 * `route` scores as upstream; `routedDpRank` bypasses scoring. `finish` takes finished or aborted
 * request ids. `setStatus`: upstream has no per-engine health; here unhealthy ranks are skipped by
 * the scan (pinned requests still go where pinned), and `AllRanksUnavailable` is returned when
 * none is healthy.
 *
 * Errors (from `route`): `NoRanks` for `dpSize < 1`, `InvalidInput` for bad `clientCount` /
 * `clientIndex` or an `inputLength` that is not a token count, `InvalidRoutedRank`,
 * `AllRanksUnavailable`.
 *
 * Reproduces vllm-project/vllm `vllm/v1/engine/core_client.py` (`DPLBAsyncMPClient`) at commit
 * `00080ee13c7a451fce071ccb8d0e94d395acf5a7`; with default options it routes exactly as upstream.
 *
 * @example
 * ```ts
 * import { makeVllmLb } from "@loadledger/policies"
 * const p = makeVllmLb({ clientCount: 1, clientIndex: 0 })
 * let s = p.init(2)
 * s = p.observe(s, [
 *   { dpRank: 0, timestamp: 0, numWaitingReqs: 3, numRunningReqs: 0, numTotalTokens: 0, kvCacheUsage: 0.1 },
 *   { dpRank: 1, timestamp: 0, numWaitingReqs: 0, numRunningReqs: 1, numTotalTokens: 0, kvCacheUsage: 0.1 }
 * ], 0)
 * const r = p.route(s, { requestId: "a", inputLength: 10 }, 0)
 * r._tag === "Routed" && r.rank // => 1
 * ```
 *
 * @category vllm
 * @since 0.1.0
 */
export const makeVllmLb = (options: VllmLbPolicyOptions = {}): Policy<VllmLbPolicyState> => {
  const staleAfter = options.staleAfterSeconds
  const guard = options.kvSaturationGuard
  const saturatedAt = typeof guard === "object" ? (guard.saturatedAt ?? 0.99) : 0.99
  const roomBelow = typeof guard === "object" ? (guard.roomBelow ?? 0.9) : 0.9
  const guardOn = guard !== undefined && guard !== false
  const knownFirst = options.unknownLosesTies === true
  // a refused clientCount / clientIndex fails every route first, whatever dpSize `init` got
  const clientError = checkClientOptions(options.clientCount, options.clientIndex)
  const suffix = (guardOn ? "-kv-guard" : "") + (staleAfter !== undefined ? "-stale" : "")
  return {
    name: `vllm-kv-pressure${suffix}`,
    init: (dpSize) => {
      const lb = VllmLb.init(dpSize, options)
      if ("_tag" in lb)
        return {
          lb: emptyLb(),
          snapshotAt: [],
          healthy: [],
          unhealthy: [],
          kvMissing: [],
          rejectedRanks: [],
          initError: lb
        }
      return {
        lb,
        snapshotAt: packed<number | undefined>(dpSize, undefined),
        healthy: packed(dpSize, true),
        unhealthy: [],
        kvMissing: [],
        rejectedRanks: []
      }
    },
    observe: (state, loads: ReadonlyArray<RankLoad>, now) => {
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
    },
    route: (state, request, now): RouteResult<VllmLbPolicyState> => {
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
    },
    finish: (state, requestIds) => {
      const r = VllmLb.finish(state.lb, requestIds)
      return r.state === state.lb ? state : withLb(state, r.state)
    },
    setStatus: (state, status) => {
      if (checkStatus(status, state.healthy.length) !== undefined) return state
      const healthy = status.slice()
      return { ...state, healthy, unhealthy: healthy.flatMap((h, i) => (h ? [] : [i])) }
    }
  }
}

/**
 * `makeVllmLb()` with one front end (`clientCount = 1`) and no beyond-upstream options: vLLM's
 * DP balancer exactly.
 *
 * **When to use**: the default vLLM balancer for a single API server; use `makeVllmLb` for several front ends or the opt-in extras.
 *
 * @example
 * ```ts
 * import { vllmKvPressure } from "@loadledger/policies"
 * const r = vllmKvPressure.route(vllmKvPressure.init(4), { requestId: "a", inputLength: 1 }, 0)
 * r._tag === "Routed" && r.rank // => 0
 * ```
 *
 * @category vllm
 * @since 0.1.0
 */
export const vllmKvPressure: Policy<VllmLbPolicyState> = makeVllmLb()
