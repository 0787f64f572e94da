/**
 * The `route` of each of SGLang's four load-balance policies (`SglangPolicies.ts`): the budget
 * methods' fast paths over the persistent `ChargedState`, the round-robin and bootstrap-room
 * routes, and the general `DpController` path they fall back to, each with the same result as
 * `DpController.schedule` (checked by `sglangPersistent.test.ts` and the golden vectors).
 */
import { floorModRoom } from "../../internal/floorModRoom.js"
import { type Explanation, policyError, type RouteRequest, type RouteResult } from "../../Policy.js"
import { checkInputLength, checkNow, checkRequestFields, isTokenCount } from "../../RequestChecks.js"
import type { LoadBalanceMethod } from "../DpBudget.js"
import * as DpBudget from "../DpBudget.js"
import * as DpController from "../DpController.js"
import * as Charged from "./charged.js"
import { next } from "./controllerNext.js"
import { budgetExplanation, RoomRouted, routedTieBreak, tieBreaks } from "./Explanations.js"
import { pickOf } from "./RankTournament.js"

const explain = (
  before: DpController.DpControllerState,
  req: RouteRequest,
  refreshed: boolean | undefined
): Explanation => {
  const method = before.method
  const tieBreak = req.routedDpRank !== undefined ? routedTieBreak : tieBreaks[method]
  if (method === "TOTAL_REQUESTS" || method === "TOTAL_TOKENS")
    return budgetExplanation(method, before.budget, refreshed === true, tieBreak)
  return {
    tieBreak,
    details: { method, roundRobinCounter: before.roundRobinCounter, status: before.status }
  }
}

/** Whether a route at `now` refreshes the budget first (the test of `DpController.refresh`). */
const refreshDue = (state: DpController.DpControllerState, now: number): boolean =>
  !(now - state.lastRefreshTimeSeconds < DpController.refreshIntervalSeconds)

/** `s` refreshed at `now` (the update of `DpController.refresh`, keeping the persistent representation). */
const refreshCharged = (s: Charged.ChargedState, now: number): Charged.ChargedState =>
  Charged.chargedOf(s, DpBudget.update(s.budget, DpController.readAll(s)), now)

/** Every route not on a method's fast path: the general `DpController` decision, as upstream. */
const routeGeneric = (
  method: LoadBalanceMethod,
  state: DpController.DpControllerState,
  request: RouteRequest,
  now: number
): RouteResult<DpController.DpControllerState> => {
  // every policy's first checks, inputLength's error first, then now's, then checkRequestFields'; a
  // bad inputLength or field alone is refused by DpController.schedule after the refresh, which it
  // consumes (as upstream), so inputLength is checked here only when `now` is bad too
  const badNow = checkNow(now)
  if (badNow !== undefined) return checkInputLength(request.inputLength) ?? badNow
  let before = state
  let refreshed: boolean | undefined
  if (DpController.refreshesOnDispatch(method)) {
    refreshed = refreshDue(state, now)
    if (refreshed) before = refreshCharged(Charged.lift(state), now)
  }
  const out = DpController.schedule(before, request)
  if ("_tag" in out) return before === state ? out : { ...out, state: before }
  return {
    _tag: "Routed",
    rank: out.rank,
    state: out.state,
    explanation: explain(before, request, refreshed)
  }
}

/**
 * TOTAL_REQUESTS: refresh, lowest index among minimal `totalRequests`, +1 there. Same result as
 * `DpController.schedule`. States are `ChargedState`s (a plain state is converted once), so the
 * charge is O(1) and the route allocates one object; the common case takes the inlinable fast
 * path, everything else {@link routeBudgetSlow}.
 */
export const routeTotalRequests = (
  state: DpController.DpControllerState,
  request: RouteRequest,
  now: number
): RouteResult<DpController.DpControllerState> =>
  (isTokenCount(request.inputLength) && checkRequestFields(request) === undefined
    ? Charged.routeRequestsFast(state, request.routedDpRank, now, DpController.refreshIntervalSeconds)
    : undefined) ?? routeBudgetSlow("TOTAL_REQUESTS", state, request, now)

/**
 * TOTAL_TOKENS: refresh, lowest index among minimal `(totalTokens, totalRequests)` (requests only
 * while a rank's tokens are unknown), +1 request and +`inputLength` tokens there. Same result as
 * `DpController.schedule`; paths as in {@link routeTotalRequests}.
 */
export const routeTotalTokens = (
  state: DpController.DpControllerState,
  request: RouteRequest,
  now: number
): RouteResult<DpController.DpControllerState> =>
  (checkRequestFields(request) === undefined
    ? Charged.routeTokensFast(
        state,
        request.routedDpRank,
        request.inputLength,
        now,
        DpController.refreshIntervalSeconds
      )
    : undefined) ?? routeBudgetSlow("TOTAL_TOKENS", state, request, now)

/**
 * A budget method's route off its fast path: a plain state (converted, then routed again), a
 * refresh, a cache to rebuild, a fold, a tournament (more than 16 ranks), a routed rank or an error.
 */
const routeBudgetSlow = (
  method: "TOTAL_REQUESTS" | "TOTAL_TOKENS",
  state: DpController.DpControllerState,
  request: RouteRequest,
  now: number
): RouteResult<DpController.DpControllerState> => {
  if (!Charged.isCharged(state)) {
    const problem = Charged.stateProblem(state)
    return problem === undefined
      ? // the policy's own route (what `sglangPolicies[method].route` is), on the lifted state
        (method === "TOTAL_REQUESTS" ? routeTotalRequests : routeTotalTokens)(
          Charged.lift(state),
          request,
          now
        )
      : policyError("InvalidInput", problem, "state")
  }
  const tokens = method === "TOTAL_TOKENS" ? request.inputLength : 0
  if (
    request.routedDpRank !== undefined ||
    !Number.isFinite(now) ||
    !(state.dpSize > 0) ||
    !isTokenCount(request.inputLength) ||
    checkRequestFields(request) !== undefined
  )
    return routeGeneric(method, state, request, now)
  const refreshed = refreshDue(state, now)
  const before = refreshed
    ? refreshCharged(state as Charged.ChargedState, now)
    : (state as Charged.ChargedState)
  const totals = Charged.totalsOf(before)
  return Charged.routeFrom(before, totals, pickOf(totals), tokens, refreshed)
}

/** ROUND_ROBIN: the next healthy slot after the counter. Same result as `DpController.schedule`. */
export const routeRoundRobin = (
  state: DpController.DpControllerState,
  request: RouteRequest,
  now: number
): RouteResult<DpController.DpControllerState> => {
  if (
    !Number.isFinite(now) ||
    request.routedDpRank !== undefined ||
    !isTokenCount(request.inputLength) ||
    checkRequestFields(request) !== undefined
  )
    return routeGeneric("ROUND_ROBIN", state, request, now)
  const n = state.dpSize
  const status = state.status
  let counter = state.roundRobinCounter
  for (let i = 0; i < n; i++) {
    const slot = counter % n
    counter = (counter + 1) % n
    if (status[slot] === true)
      return {
        _tag: "Routed",
        rank: slot,
        state: {
          method: state.method,
          dpSize: n,
          budget: state.budget,
          roundRobinCounter: counter,
          lastRefreshTimeSeconds: state.lastRefreshTimeSeconds,
          status,
          shm: state.shm
        },
        explanation: {
          tieBreak: tieBreaks.ROUND_ROBIN,
          details: { method: "ROUND_ROBIN", roundRobinCounter: state.roundRobinCounter, status }
        }
      }
  }
  return routeGeneric("ROUND_ROBIN", state, request, now)
}

/** FOLLOW_BOOTSTRAP_ROOM: the room floor-modulo dpSize. Same result as `DpController.schedule`. */
export const routeFollowBootstrapRoom = (
  state: DpController.DpControllerState,
  request: RouteRequest,
  now: number
): RouteResult<DpController.DpControllerState> => {
  const room = request.bootstrapRoom
  if (
    !Number.isFinite(now) ||
    request.routedDpRank !== undefined ||
    room === undefined ||
    !(state.dpSize > 0) ||
    !isTokenCount(request.inputLength) ||
    checkRequestFields(request) !== undefined
  )
    return routeGeneric("FOLLOW_BOOTSTRAP_ROOM", state, request, now)
  const rank = floorModRoom(room, state.dpSize)
  if (rank === undefined) return routeGeneric("FOLLOW_BOOTSTRAP_ROOM", state, request, now)
  return new RoomRouted(rank, state)
}

/**
 * A budget method's `charge` (loadledger's, for a state rebuilt by a live router; upstream's
 * controller is never rebuilt and charges no pinned request): the request pinned to
 * `routedDpRank` is charged there as the method's own placement would charge it (+1 request, and
 * `inputLength` tokens for TOTAL_TOKENS), after the refresh that placement would make, so the
 * snapshot the refresh applies does not wipe the charge. A bad pin, input or state gets the
 * pinned route's answer (its error, or the rank uncharged).
 */
export const chargeBudget = (
  method: "TOTAL_REQUESTS" | "TOTAL_TOKENS",
  state: DpController.DpControllerState,
  request: RouteRequest,
  now: number
): RouteResult<DpController.DpControllerState> => {
  if (!Charged.isCharged(state)) {
    const problem = Charged.stateProblem(state)
    return problem === undefined
      ? chargeBudget(method, Charged.lift(state), request, now)
      : policyError("InvalidInput", problem, "state")
  }
  const rank = request.routedDpRank
  if (
    rank === undefined ||
    !(Number.isInteger(rank) && rank >= 0 && rank < state.dpSize) ||
    !Number.isFinite(now) ||
    !isTokenCount(request.inputLength) ||
    checkRequestFields(request) !== undefined
  )
    return routeGeneric(method, state, request, now)
  const refreshed = refreshDue(state, now)
  const before = refreshed ? refreshCharged(state, now) : state
  const tokens = method === "TOTAL_TOKENS" ? request.inputLength : 0
  return Charged.routeFrom(before, Charged.totalsOf(before), rank, tokens, refreshed)
}

/**
 * ROUND_ROBIN's `charge` (loadledger's, as {@link chargeBudget}): the pinned rank, with the counter
 * moved to the slot after it, so a state rebuilt by charging the requests in flight in the order
 * they were placed goes on where the old one was.
 */
export const chargeRoundRobin = (
  state: DpController.DpControllerState,
  request: RouteRequest,
  now: number
): RouteResult<DpController.DpControllerState> => {
  const r = routeGeneric("ROUND_ROBIN", state, request, now)
  if (r._tag !== "Routed" || request.routedDpRank === undefined) return r
  const counter = (r.rank + 1) % state.dpSize
  return {
    ...r,
    state: next(state, state.budget, counter, state.lastRefreshTimeSeconds, state.status, state.shm),
    explanation: { ...r.explanation, tieBreak: "charged: the counter resumes after the carried rank" }
  }
}
