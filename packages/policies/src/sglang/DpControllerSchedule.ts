/**
 * The controller's routing step (`DpController.ts`): `schedule`, one request for any of the four
 * load-balance methods, without a refresh. Re-exported by `DpController.ts`, so it is called as
 * `DpController.schedule`.
 *
 * Reproduces the dispatch of `python/sglang/srt/managers/data_parallel_controller.py`
 * (sgl-project/sglang, file-index version 54513096567), as specified in
 * `fixtures/reference/sglang/README.md` section 1.
 *
 * @since 0.1.0
 */
import { floorModRoom } from "../internal/floorModRoom.js"
import { type PolicyError, policyError, type RouteRequest } from "../Policy.js"
import { checkInputLength, checkRequestFields } from "../RequestChecks.js"
import * as DpBudget from "./DpBudget.js"
import type { DpControllerState, Scheduled } from "./DpControllerTypes.js"
import { next } from "./internal/controllerNext.js"

/**
 * Choose the rank for one request, without refreshing (upstream `DataParallelController` dispatch).
 *
 * **When to use**: to route with no refresh (the inner step of a batch); prefer `dispatchRequest` for one request.
 *
 * - `routedDpRank` set: returned as is (no counter, budget or status change); outside `[0, dpSize)`
 *   is a `PolicyError` `InvalidRoutedRank` (upstream `ValueError "DP rank r is not active."`).
 * - `ROUND_ROBIN`: the next healthy slot after the counter; `AllRanksUnavailable` (upstream
 *   `RuntimeError`) when none is healthy, the counter then back where it started.
 * - `FOLLOW_BOOTSTRAP_ROOM`: `bootstrapRoom` floor-modulo `dpSize` with BigInt (rooms reach 2^64 and
 *   may be negative); `MissingBootstrapRoom` (upstream `AssertionError`) when absent.
 * - `TOTAL_REQUESTS` / `TOTAL_TOKENS`: {@link DpBudget.dispatch} with 0 / `inputLength` tokens.
 *
 * Every method first checks `inputLength` ({@link checkInputLength}: a `PolicyError` `InvalidInput`
 * when it is not a token count, pinned requests included), then the other fields' types
 * ({@link checkRequestFields}), loadledger additions: upstream's tokenized requests always carry a
 * whole number of tokens and typed fields.
 *
 * Status is ignored by every method except `ROUND_ROBIN`, as upstream.
 *
 * @example
 * ```ts
 * import { DpController } from "@loadledger/policies"
 * const s = DpController.init("FOLLOW_BOOTSTRAP_ROOM", 4)
 * const r = DpController.schedule(s, { requestId: "a", inputLength: 1, bootstrapRoom: "-1" })
 * "rank" in r && r.rank // => 3
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const schedule = (state: DpControllerState, req: RouteRequest): Scheduled | PolicyError => {
  const bad = checkInputLength(req.inputLength) ?? checkRequestFields(req)
  if (bad !== undefined) return bad
  const n = state.dpSize
  if (req.routedDpRank !== undefined) {
    const r = req.routedDpRank
    if (!Number.isInteger(r) || r < 0 || r >= n)
      return policyError("InvalidRoutedRank", `DP rank ${r} is not active.`, "routedDpRank")
    return { rank: r, state }
  }
  switch (state.method) {
    case "ROUND_ROBIN": {
      let counter = state.roundRobinCounter
      for (let i = 0; i < n; i++) {
        const slot = counter % n
        counter = (counter + 1) % n
        if (state.status[slot] === true)
          return {
            rank: slot,
            state: next(state, state.budget, counter, state.lastRefreshTimeSeconds, state.status, state.shm)
          }
      }
      return policyError(
        "AllRanksUnavailable",
        `Cannot route request: all ${n} active DP workers are unavailable.`,
        "status"
      )
    }
    case "FOLLOW_BOOTSTRAP_ROOM": {
      if (req.bootstrapRoom === undefined)
        return policyError(
          "MissingBootstrapRoom",
          "req.bootstrap_room should not be None. Do not send requests directly to prefill or decode instances; send to the router instead.",
          "bootstrapRoom"
        )
      if (!(Number.isInteger(n) && n > 0)) return policyError("NoRanks", `dpSize is ${n}`, "dpSize")
      const rank = floorModRoom(req.bootstrapRoom, n)
      if (rank === undefined)
        return policyError(
          "InvalidInput",
          `bootstrapRoom is not an integer: ${req.bootstrapRoom}`,
          "bootstrapRoom"
        )
      return { rank, state }
    }
    default: {
      const tokens = state.method === "TOTAL_TOKENS" ? req.inputLength : 0
      const d = DpBudget.dispatch(state.budget, state.method, tokens)
      if (d.rank === undefined) return policyError("NoRanks", "dpSize is 0", "dpSize")
      return {
        rank: d.rank,
        state: next(
          state,
          d.budget,
          state.roundRobinCounter,
          state.lastRefreshTimeSeconds,
          state.status,
          state.shm
        )
      }
    }
  }
}
