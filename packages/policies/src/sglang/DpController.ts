/**
 * SGLang's DataParallelController decision logic as pure functions: the published snapshot store,
 * the 20 ms refresh throttle, worker status, and `schedule` for the four load-balance methods.
 *
 * Reproduces `python/sglang/srt/managers/data_parallel_controller.py` (sgl-project/sglang, file-index
 * version 54513096567) and the SHM reader of `load_snapshot.py` @ 025177e4, as specified in
 * `fixtures/reference/sglang/README.md` section 1.
 *
 * @since 0.1.0
 */
import { ranksOf } from "../internal/ranksOf.js"
import type { RouteRequest } from "../Policy.js"
import { checkStatus } from "../RankStatus.js"
import * as DpBudget from "./DpBudget.js"
import { schedule } from "./DpControllerSchedule.js"
import { readAll } from "./DpControllerStore.js"
import type { BatchOutcome, DpControllerState, Refreshed, RequestOutcome } from "./DpControllerTypes.js"
import { next } from "./internal/controllerNext.js"

/**
 * `schedule`, defined in `DpControllerSchedule.ts` and re-exported here, so it stays
 * `DpController.schedule`.
 *
 * @since 0.1.0
 */
export { schedule } from "./DpControllerSchedule.js"
/**
 * The snapshot store's `publish` / `readAll`, defined in `DpControllerStore.ts` and re-exported
 * here, so they stay `DpController.publish` and `DpController.readAll`.
 *
 * @since 0.1.0
 */
export { publish, readAll } from "./DpControllerStore.js"
/**
 * The controller's types, defined in the leaf module `DpControllerTypes.ts` and re-exported here, so
 * they stay `DpController.DpControllerState`, `DpController.Scheduled` and so on.
 *
 * @since 0.1.0
 */
export type {
  BatchOutcome,
  DpControllerState,
  Refreshed,
  RequestOutcome,
  Scheduled
} from "./DpControllerTypes.js"

/**
 * Seconds between two budget refreshes (upstream's 20 ms throttle).
 *
 * @example
 * ```ts
 * import { DpController } from "@loadledger/policies"
 * DpController.refreshIntervalSeconds // => 0.02
 * ```
 *
 * @category constants
 * @since 0.1.0
 */
export const refreshIntervalSeconds = 0.02

/**
 * Fresh controller state. `initialShm: "writer_init"` pre-fills every slot with the writer's initial
 * payload `{dpRank: r, timestamp: 0, all counts 0}` (skipped by the budget until the rank has been
 * updated with another timestamp); `"empty"` (default) leaves every slot unpublished.
 *
 * **When to use**: to start a controller for one DP group (the conformance runner and the policies do).
 *
 * @example
 * ```ts
 * import { DpController } from "@loadledger/policies"
 * const s = DpController.init("TOTAL_TOKENS", 4)
 * s.lastRefreshTimeSeconds // => 0
 * s.roundRobinCounter // => 0
 * s.shm // => [undefined, undefined, undefined, undefined]
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const init = (
  method: DpBudget.LoadBalanceMethod,
  size: number,
  initialShm: "empty" | "writer_init" = "empty"
): DpControllerState => {
  const dpSize = ranksOf(size)
  return {
    method,
    dpSize,
    budget: DpBudget.empty(dpSize),
    roundRobinCounter: 0,
    lastRefreshTimeSeconds: 0,
    status: DpBudget.filled(dpSize, true),
    shm: Array.from({ length: dpSize }, (_, r) =>
      initialShm === "writer_init"
        ? { dpRank: r, timestamp: 0, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0 }
        : undefined
    )
  }
}

/**
 * Refresh the budget from the store unless throttled: skipped when
 * `nowSeconds - lastRefreshTimeSeconds < 0.02` (the IEEE subtraction, then a strict compare; so a
 * clock starting at 0 makes refreshes before t = 0.02 no-ops).
 *
 * **When to use**: to replay an explicit refresh; `dispatchRequest` / `dispatchBatch` call it before routing.
 *
 * @example
 * ```ts
 * import { DpController } from "@loadledger/policies"
 * const s = DpController.init("TOTAL_REQUESTS", 2)
 * DpController.refresh(s, 0.01).refreshed // => false
 * DpController.refresh(s, 0.02).refreshed // => true
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const refresh = (state: DpControllerState, nowSeconds: number): Refreshed => {
  if (nowSeconds - state.lastRefreshTimeSeconds < refreshIntervalSeconds) return { refreshed: false, state }
  return {
    refreshed: true,
    state: next(
      state,
      DpBudget.update(state.budget, readAll(state)),
      state.roundRobinCounter,
      nowSeconds,
      state.status,
      state.shm
    )
  }
}

/**
 * Replace worker health. Applied only when `checkStatus` accepts `status`: `status.length ===
 * dpSize` (upstream logs a warning and ignores any other length) and every entry a boolean
 * (loadledger's: the same rule for every policy).
 *
 * **When to use**: on a worker health change (only ROUND_ROBIN reads status).
 *
 * @example
 * ```ts
 * import { DpController } from "@loadledger/policies"
 * DpController.setStatus(DpController.init("ROUND_ROBIN", 2), [true]).applied // => false
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const setStatus = (
  state: DpControllerState,
  status: ReadonlyArray<boolean>
): { readonly applied: boolean; readonly state: DpControllerState } =>
  checkStatus(status, state.dpSize) === undefined
    ? {
        applied: true,
        state: next(
          state,
          state.budget,
          state.roundRobinCounter,
          state.lastRefreshTimeSeconds,
          status.slice(),
          state.shm
        )
      }
    : { applied: false, state }

/**
 * True when the method refreshes the budget before dispatching (`TOTAL_REQUESTS`, `TOTAL_TOKENS`).
 *
 * **When to use**: to know whether a method's route consumes the refresh window.
 *
 * @example
 * ```ts
 * import { DpController } from "@loadledger/policies"
 * DpController.refreshesOnDispatch("ROUND_ROBIN") // => false
 * ```
 *
 * @category getters
 * @since 0.1.0
 */
export const refreshesOnDispatch = (method: DpBudget.LoadBalanceMethod): boolean =>
  method === "TOTAL_REQUESTS" || method === "TOTAL_TOKENS"

/** The refresh a dispatch does first (`TOTAL_*` only; `refreshed` is `undefined` for the others). */
const refreshOnDispatch = (
  state: DpControllerState,
  nowSeconds: number
): { readonly refreshed: boolean | undefined; readonly state: DpControllerState } =>
  refreshesOnDispatch(state.method) ? refresh(state, nowSeconds) : { refreshed: undefined, state }

/**
 * One tokenized request: refresh (for `TOTAL_*`) **before** routing, then {@link schedule}. Routed
 * and failing requests therefore still use up the 20 ms window. Health-check requests get no special
 * treatment (none upstream).
 *
 * **When to use**: one request exactly as upstream handles a tokenized request, with the error and the state after it.
 *
 * @example
 * ```ts
 * import { DpController } from "@loadledger/policies"
 * const out = DpController.dispatchRequest(DpController.init("TOTAL_TOKENS", 2), { requestId: "a", inputLength: 5, routedDpRank: 7 }, 1)
 * out.refreshed // => true
 * out.rank // => undefined
 * out.error?.reason // => "InvalidRoutedRank"
 * out.state.lastRefreshTimeSeconds // => 1
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const dispatchRequest = (
  state: DpControllerState,
  req: RouteRequest,
  nowSeconds: number
): RequestOutcome => {
  const { refreshed, state: s } = refreshOnDispatch(state, nowSeconds)
  const out = schedule(s, req)
  return "_tag" in out
    ? { refreshed, rank: undefined, error: out, state: s }
    : { refreshed, rank: out.rank, state: out.state }
}

/**
 * A batch (`BatchTokenized*ReqInput`): refresh once (for `TOTAL_*`), then schedule every request
 * with no further refresh; the first error stops the loop.
 *
 * **When to use**: a batched request input, exactly as upstream.
 *
 * @example
 * ```ts
 * import { DpController } from "@loadledger/policies"
 * const reqs = [5, 5, 5].map((n, i) => ({ requestId: String(i), inputLength: n }))
 * DpController.dispatchBatch(DpController.init("TOTAL_REQUESTS", 2), reqs, 1).ranks // => [0, 1, 0]
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const dispatchBatch = (
  state: DpControllerState,
  reqs: ReadonlyArray<RouteRequest>,
  nowSeconds: number
): BatchOutcome => {
  const { refreshed, state: refreshedState } = refreshOnDispatch(state, nowSeconds)
  let s = refreshedState
  const ranks: Array<number> = []
  for (const req of reqs) {
    const out = schedule(s, req)
    if ("_tag" in out) return { refreshed, ranks, error: out, state: s }
    ranks.push(out.rank)
    s = out.state
  }
  return { refreshed, ranks, state: s }
}
