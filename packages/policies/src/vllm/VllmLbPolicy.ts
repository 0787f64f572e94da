import { HashMap } from "effect"
import { packed } from "../internal/packed.js"
import type { Explanation, Policy, PolicyError, RankLoad, RouteResult } from "../Policy.js"
import {
  type VllmClientOptions,
  type VllmEngineRow,
  type VllmLbState,
  vllmLbFinish,
  vllmLbInit,
  vllmLbRoute
} from "./VllmLbClient.js"

/**
 * Options of `makeVllmLb`. `clientCount` / `clientIndex` are upstream's (API-server processes and
 * this one's index). The rest are **beyond upstream** and off by default:
 * - `staleAfterSeconds`: a rank whose last snapshot (`RankLoad.timestamp`) is older than this at
 *   routing time is listed in `explanation.stale`; when every observed rank is stale the
 *   explanation says `coordinatorFrozen: true`. Routing itself is unchanged.
 * - `kvSaturationGuard`: never choose a rank with `kvCacheUsage >= saturatedAt` (0.99) and waiting
 *   requests while some healthy rank has `kvCacheUsage < roomBelow` (0.9).
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
  readonly rejectedRanks: ReadonlyArray<number>
  readonly initError?: PolicyError | undefined
}

const withLb = (s: VllmLbPolicyState, lb: VllmLbState): VllmLbPolicyState => ({
  lb,
  snapshotAt: s.snapshotAt,
  healthy: s.healthy,
  unhealthy: s.unhealthy,
  kvMissing: s.kvMissing,
  rejectedRanks: s.rejectedRanks,
  initError: s.initError
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
 * A missing `kvCacheUsage` adds no KV penalty (upstream always has a value; treating unknown as 0
 * would claim "not saturated" without evidence) and is listed in `details.kvMissing`.
 * `route` scores as upstream; `routedDpRank` bypasses scoring. `finish` takes finished or aborted
 * request ids. `setStatus`: upstream has no per-engine health; here unhealthy ranks are skipped by
 * the scan (pinned requests still go where pinned), and `AllRanksUnavailable` is returned when
 * none is healthy.
 *
 * Errors (from `route`): `NoRanks` for `dpSize < 1`, `InvalidInput` for bad `clientCount` /
 * `clientIndex`, `InvalidRoutedRank`, `AllRanksUnavailable`.
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
  const suffix = (guardOn ? "-kv-guard" : "") + (staleAfter !== undefined ? "-stale" : "")
  return {
    name: `vllm-kv-pressure${suffix}`,
    init: (dpSize) => {
      const lb = vllmLbInit(dpSize, options)
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
    observe: (state, loads: ReadonlyArray<RankLoad>) => {
      const n = state.lb.numEngines
      const rows: Array<VllmEngineRow> = state.lb.lbEngines.slice()
      const at = state.snapshotAt.slice()
      const rejected: Array<number> = []
      for (const l of loads) {
        if (!Number.isInteger(l.dpRank) || l.dpRank < 0 || l.dpRank >= n) {
          rejected.push(l.dpRank)
          continue
        }
        rows[l.dpRank] = [l.numWaitingReqs, l.numRunningReqs, l.kvCacheUsage]
        at[l.dpRank] = l.timestamp
      }
      return {
        ...state,
        lb: { ...state.lb, lbEngines: rows },
        snapshotAt: at,
        kvMissing: rows.flatMap((row, i) => (row[2] === undefined ? [i] : [])),
        rejectedRanks: rejected
      }
    },
    route: (state, request, now): RouteResult<VllmLbPolicyState> => {
      if (state.initError !== undefined) return state.initError
      const lb = state.lb
      const unhealthy = state.unhealthy
      let skip: ReadonlyArray<boolean> | undefined =
        unhealthy.length > 0 ? state.healthy.map((h) => !h) : undefined
      const kvGuarded: Array<number> = []
      if (guardOn) {
        const rows = lb.lbEngines
        let room = false
        for (let i = 0; i < rows.length && !room; i++) {
          const kv = rows[i]![2]
          room = state.healthy[i] === true && kv !== undefined && kv < roomBelow
        }
        if (room) {
          for (let i = 0; i < rows.length; i++) {
            const row = rows[i]!
            const kv = row[2]
            if (kv !== undefined && kv >= saturatedAt && row[0] > 0) kvGuarded.push(i)
          }
          if (kvGuarded.length > 0) {
            const healthy = state.healthy
            const sk = new Array<boolean>(healthy.length)
            for (let i = 0; i < healthy.length; i++) sk[i] = !healthy[i]
            for (let i = 0; i < kvGuarded.length; i++) sk[kvGuarded[i]!] = true
            skip = sk
          }
        }
      }
      const r = vllmLbRoute(lb, request.requestId, request.routedDpRank, skip)
      if ("_tag" in r) return r.reason === "InvalidRoutedRank" ? { ...r, field: "routedDpRank" } : r
      const details: Record<string, unknown> = {
        startIndexUsed: r.startIndexUsed,
        requestWave: r.requestWave,
        firstReq: r.firstReq,
        inflight: r.state.inflight,
        kvMissing: state.kvMissing
      }
      if (kvGuarded.length > 0) details["kvGuarded"] = kvGuarded
      if (unhealthy.length > 0) details["unhealthy"] = unhealthy
      if (state.rejectedRanks.length > 0) details["rejectedRanks"] = state.rejectedRanks
      let stale: Array<number> | undefined
      if (staleAfter !== undefined) {
        const at = state.snapshotAt
        const ages = new Array<number | undefined>(at.length)
        const never: Array<number> = []
        stale = []
        for (let i = 0; i < at.length; i++) {
          const t = at[i]
          const age = t === undefined ? undefined : now - t
          ages[i] = age
          if (age === undefined) never.push(i)
          else if (age > staleAfter) stale.push(i)
        }
        details["snapshotAgeSeconds"] = ages
        details["neverObserved"] = never
        details["coordinatorFrozen"] =
          ages.length > never.length && stale.length === ages.length - never.length
      }
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
      const r = vllmLbFinish(state.lb, requestIds)
      return r.state === state.lb ? state : withLb(state, r.state)
    },
    setStatus: (state, status) => {
      const healthy = state.healthy.map((_, i) => status[i] ?? true)
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
