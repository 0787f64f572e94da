/**
 * `makeVllmLb` / `vllmKvPressure`: vLLM's front-end balancer (`VllmLb`) as a `Policy`, fed by `RankLoad` rows instead of coordinator publications, with its beyond-upstream options (KV-saturation guard, abort reporting) off by default.
 *
 * Its observe and route are in `internal/lbPolicy.ts`, its options and state in `VllmLbPolicyTypes.ts`.
 *
 * @since 0.1.0
 */

import { packed } from "../internal/packed.js"
import { checkClientOptions } from "../Options.js"
import type { Policy } from "../Policy.js"
import { checkStatus } from "../RankStatus.js"
import { emptyLb, type LbSettings, observeLb, routeLb, withLb } from "./internal/lbPolicy.js"
import * as VllmLb from "./VllmLb.js"
import type { VllmLbPolicyOptions, VllmLbPolicyState } from "./VllmLbPolicyTypes.js"

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
  const st: LbSettings = { staleAfter, saturatedAt, roomBelow, guardOn, knownFirst, clientError }
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
    observe: (state, loads, now) => observeLb(st, state, loads, now),
    route: (state, request, now) => routeLb(st, state, request, now),
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
