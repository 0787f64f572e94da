/**
 * SGLang's four DataParallelController load-balance methods as `Policy` objects.
 *
 * Reproduces `python/sglang/srt/managers/data_parallel_controller.py` (sgl-project/sglang, file-index
 * version 54513096567; golden vectors `fixtures/reference/sglang/dp_lb_cases.json`).
 *
 * @since 0.1.0
 */

import { floorModRoom } from "../internal/floorModRoom.js"
import {
  type Explanation,
  type Policy,
  policyError,
  type RankLoad,
  type RouteRequest,
  type RouteResult
} from "../Policy.js"
import type { LoadBalanceMethod } from "./DpBudget.js"
import * as DpBudget from "./DpBudget.js"
import * as DpController from "./DpController.js"

const tieBreaks: Record<LoadBalanceMethod, string> = {
  ROUND_ROBIN: "next healthy slot after the round-robin counter",
  FOLLOW_BOOTSTRAP_ROOM: "bootstrapRoom floor-modulo dpSize",
  TOTAL_REQUESTS: "lowest index among minimal totalRequests",
  TOTAL_TOKENS: "lowest index among minimal (totalTokens, totalRequests)"
}
const routedTieBreak = "routedDpRank bypasses the budget"

const explain = (
  before: DpController.DpControllerState,
  req: RouteRequest,
  refreshed: boolean | undefined
): Explanation => {
  const method = before.method
  const routed = req.routedDpRank !== undefined
  const budget = before.budget
  if (method === "TOTAL_REQUESTS" || method === "TOTAL_TOKENS")
    return {
      scores:
        method === "TOTAL_TOKENS" && budget.tokensUnknown === undefined
          ? budget.totalTokens
          : budget.totalRequests,
      tieBreak: routed ? routedTieBreak : tieBreaks[method],
      refreshed,
      details: { method, budget }
    }
  return {
    tieBreak: routed ? routedTieBreak : tieBreaks[method],
    details: { method, roundRobinCounter: before.roundRobinCounter, status: before.status }
  }
}

/** Every route not on a method's fast path: the general `DpController` decision, as upstream. */
const routeGeneric = (
  method: LoadBalanceMethod,
  state: DpController.DpControllerState,
  request: RouteRequest,
  now: number
): RouteResult<DpController.DpControllerState> => {
  if (!Number.isFinite(now))
    return policyError("InvalidInput", `now must be finite seconds, got ${now}`, "now")
  let before = state
  let refreshed: boolean | undefined
  if (DpController.refreshesOnDispatch(method)) {
    const r = DpController.refresh(state, now)
    refreshed = r.refreshed
    before = r.state
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

/** `s` with a new budget (an explicit literal: one shape, no spread). */
const withBudget = (
  s: DpController.DpControllerState,
  budget: DpBudget.DpBudget
): DpController.DpControllerState => ({
  method: s.method,
  dpSize: s.dpSize,
  budget,
  roundRobinCounter: s.roundRobinCounter,
  lastRefreshTimeSeconds: s.lastRefreshTimeSeconds,
  status: s.status,
  shm: s.shm
})

/** `b` with new request (and token) counts, keeping `tokensUnknown` only when present. */
const budgetWith = (
  b: DpBudget.DpBudget,
  totalRequests: ReadonlyArray<number>,
  totalTokens: ReadonlyArray<number>
): DpBudget.DpBudget =>
  b.tokensUnknown === undefined
    ? { totalRequests, totalTokens, lastTimestamp: b.lastTimestamp }
    : { totalRequests, totalTokens, lastTimestamp: b.lastTimestamp, tokensUnknown: b.tokensUnknown }

/**
 * The refreshed state when the 20 ms window has passed, else `state` (the same test as
 * `DpController.refresh`, inlined so a throttled route allocates nothing for it).
 */
const refreshed = (state: DpController.DpControllerState, now: number): DpController.DpControllerState =>
  now - state.lastRefreshTimeSeconds < DpController.refreshIntervalSeconds
    ? state
    : DpController.refresh(state, now).state

/**
 * TOTAL_REQUESTS: refresh, lowest index among minimal `totalRequests`, +1 there (copy of that one
 * array; tokens, stamps and the rest of the state are shared). Same result as `DpController.schedule`.
 */
const routeTotalRequests = (
  state: DpController.DpControllerState,
  request: RouteRequest,
  now: number
): RouteResult<DpController.DpControllerState> => {
  if (!Number.isFinite(now) || request.routedDpRank !== undefined || state.dpSize === 0)
    return routeGeneric("TOTAL_REQUESTS", state, request, now)
  const before = refreshed(state, now)
  const b = before.budget
  const req = b.totalRequests
  const n = req.length
  let best = 0
  let bestReq = req[0]!
  for (let i = 1; i < n; i++) {
    const v = req[i]!
    if (v < bestReq) {
      bestReq = v
      best = i
    }
  }
  const nextReq = req.slice()
  nextReq[best] = bestReq + 1
  return {
    _tag: "Routed",
    rank: best,
    state: withBudget(before, budgetWith(b, nextReq, b.totalTokens)),
    explanation: {
      scores: req,
      tieBreak: tieBreaks.TOTAL_REQUESTS,
      refreshed: before !== state,
      details: { method: "TOTAL_REQUESTS", budget: b }
    }
  }
}

/**
 * TOTAL_TOKENS: refresh, lowest index among minimal `(totalTokens, totalRequests)` (requests only
 * while a rank's tokens are unknown), +1 request and +`inputLength` tokens there. Same result as
 * `DpController.schedule`.
 */
const routeTotalTokens = (
  state: DpController.DpControllerState,
  request: RouteRequest,
  now: number
): RouteResult<DpController.DpControllerState> => {
  const tokens = request.inputLength
  if (
    !Number.isFinite(now) ||
    request.routedDpRank !== undefined ||
    state.dpSize === 0 ||
    !Number.isSafeInteger(tokens) ||
    tokens < 0
  )
    return routeGeneric("TOTAL_TOKENS", state, request, now)
  const before = refreshed(state, now)
  const b = before.budget
  const req = b.totalRequests
  const tok = b.totalTokens
  const n = req.length
  let best = 0
  if (b.tokensUnknown !== undefined) best = DpBudget.argminRequests(b)
  else {
    let bestTok = tok[0]!
    let bestReq = req[0]!
    for (let i = 1; i < n; i++) {
      const t = tok[i]!
      if (t < bestTok || (t === bestTok && req[i]! < bestReq)) {
        bestTok = t
        bestReq = req[i]!
        best = i
      }
    }
  }
  const nextReq = req.slice()
  nextReq[best] = req[best]! + 1
  let nextTok = tok
  if (tokens !== 0) {
    const t = tok.slice()
    t[best] = tok[best]! + tokens
    nextTok = t
  }
  return {
    _tag: "Routed",
    rank: best,
    state: withBudget(before, budgetWith(b, nextReq, nextTok)),
    explanation: {
      scores: b.tokensUnknown === undefined ? tok : req,
      tieBreak: tieBreaks.TOTAL_TOKENS,
      refreshed: before !== state,
      details: { method: "TOTAL_TOKENS", budget: b }
    }
  }
}

/** ROUND_ROBIN: the next healthy slot after the counter. Same result as `DpController.schedule`. */
const routeRoundRobin = (
  state: DpController.DpControllerState,
  request: RouteRequest,
  now: number
): RouteResult<DpController.DpControllerState> => {
  if (!Number.isFinite(now) || request.routedDpRank !== undefined)
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
const routeFollowBootstrapRoom = (
  state: DpController.DpControllerState,
  request: RouteRequest,
  now: number
): RouteResult<DpController.DpControllerState> => {
  const room = request.bootstrapRoom
  if (!Number.isFinite(now) || request.routedDpRank !== undefined || room === undefined || state.dpSize === 0)
    return routeGeneric("FOLLOW_BOOTSTRAP_ROOM", state, request, now)
  const rank = floorModRoom(room, state.dpSize)
  if (rank === undefined) return routeGeneric("FOLLOW_BOOTSTRAP_ROOM", state, request, now)
  return {
    _tag: "Routed",
    rank,
    state,
    explanation: {
      tieBreak: tieBreaks.FOLLOW_BOOTSTRAP_ROOM,
      details: {
        method: "FOLLOW_BOOTSTRAP_ROOM",
        roundRobinCounter: state.roundRobinCounter,
        status: state.status
      }
    }
  }
}

type Route = Policy<DpController.DpControllerState>["route"]

/** The policy for `method`; `route` is that method's own function (its own type feedback). */
const make = (method: LoadBalanceMethod, route: Route): Policy<DpController.DpControllerState> => ({
  name: method.toLowerCase().replaceAll("_", "-"),
  init: (dpSize: number) => DpController.init(method, dpSize),
  observe: (state: DpController.DpControllerState, loads: ReadonlyArray<RankLoad>) =>
    DpController.publish(state, loads),
  route,
  finish: (state: DpController.DpControllerState) => state,
  setStatus: (state: DpController.DpControllerState, status: ReadonlyArray<boolean>) =>
    DpController.setStatus(state, status).state
})

/**
 * SGLang `ROUND_ROBIN`: the next healthy rank after a counter (the only method that honours status).
 * `route` never refreshes; a `PolicyError` `AllRanksUnavailable` when no rank is healthy.
 *
 * **When to use**: a baseline, or to model an SGLang server started with
 * `--load-balance-method round_robin`.
 *
 * @example
 * ```ts
 * import { roundRobin } from "@loadledger/policies"
 * let s = roundRobin.setStatus(roundRobin.init(3), [true, false, true])
 * const a = roundRobin.route(s, { requestId: "a", inputLength: 1 }, 1)
 * a._tag === "Routed" && a.rank // => 0
 * // rank 1 is unhealthy: the next request goes to 2
 * const b = a._tag === "Routed" ? roundRobin.route(a.state, { requestId: "b", inputLength: 1 }, 1) : a
 * b._tag === "Routed" && b.rank // => 2
 * ```
 *
 * @category policies
 * @since 0.1.0
 */
export const roundRobin: Policy<DpController.DpControllerState> = make("ROUND_ROBIN", routeRoundRobin)

/**
 * SGLang `FOLLOW_BOOTSTRAP_ROOM`: rank = `bootstrapRoom` floor-modulo `dpSize` (BigInt; rooms up to
 * 2^64 and negative ones). A `PolicyError` `MissingBootstrapRoom` without a room. Ignores load and
 * status. With random rooms this is what SGLang's PD disaggregation does by default.
 *
 * **When to use**: to model SGLang PD disaggregation's default routing (random rooms spread by hashing only).
 *
 * @example
 * ```ts
 * import { followBootstrapRoom } from "@loadledger/policies"
 * const r = followBootstrapRoom.route(followBootstrapRoom.init(4), { requestId: "a", inputLength: 1, bootstrapRoom: "18446744073709551623" }, 1)
 * // 2^64 + 7 = 3 mod 4
 * r._tag === "Routed" && r.rank // => 3
 * ```
 *
 * @category policies
 * @since 0.1.0
 */
export const followBootstrapRoom: Policy<DpController.DpControllerState> = make(
  "FOLLOW_BOOTSTRAP_ROOM",
  routeFollowBootstrapRoom
)

/**
 * SGLang `TOTAL_REQUESTS`: refresh the DPBudget from published snapshots at most every 20 ms, then the
 * lowest rank with the fewest requests, charged +1 (no token charge). `observe` publishes snapshots;
 * they reach the budget at the next refresh. `explanation.scores` are the `totalRequests` compared.
 *
 * **When to use**: to model an SGLang server started with `--load-balance-method total_requests`.
 *
 * **Gotchas**: a rank that never published starts at 0 and is preferred (upstream behaviour);
 * status is ignored (upstream behaviour). A failing request that refreshed carries the refreshed
 * state in `PolicyError.state`.
 *
 * @example
 * ```ts
 * import { totalRequests } from "@loadledger/policies"
 * const s = totalRequests.observe(totalRequests.init(2), [
 *   { dpRank: 0, timestamp: 5, numRunningReqs: 3, numWaitingReqs: 0, numTotalTokens: 10 },
 *   { dpRank: 1, timestamp: 5, numRunningReqs: 1, numWaitingReqs: 0, numTotalTokens: 99 }
 * ], 1)
 * const r = totalRequests.route(s, { requestId: "a", inputLength: 10 }, 1)
 * r._tag === "Routed" && r.rank // => 1
 * ```
 *
 * @category policies
 * @since 0.1.0
 */
export const totalRequests: Policy<DpController.DpControllerState> = make(
  "TOTAL_REQUESTS",
  routeTotalRequests
)

/**
 * SGLang `TOTAL_TOKENS`: like {@link totalRequests}, comparing `(totalTokens, totalRequests)`
 * lexicographically and charging the prompt length (`inputLength`) and +1 request to the chosen rank.
 * While a rank's token count is unknown (an invalid snapshot value such as `-1`), compares request
 * counts only (loadledger extension; never fires on SGLang's own snapshots).
 *
 * **When to use**: to model an SGLang server started with `--load-balance-method total_tokens`.
 *
 * @example
 * ```ts
 * import { totalTokens } from "@loadledger/policies"
 * let s = totalTokens.init(2)
 * const a = totalTokens.route(s, { requestId: "a", inputLength: 4096 }, 1)
 * a._tag === "Routed" && a.rank // => 0
 * // 4096 tokens are now charged to rank 0, so rank 1 is preferred
 * const b = a._tag === "Routed" ? totalTokens.route(a.state, { requestId: "b", inputLength: 4096 }, 1) : a
 * b._tag === "Routed" && b.rank // => 1
 * ```
 *
 * @category policies
 * @since 0.1.0
 */
export const totalTokens: Policy<DpController.DpControllerState> = make("TOTAL_TOKENS", routeTotalTokens)

/**
 * The four SGLang policies by their upstream method name.
 *
 * **When to use**: to pick an SGLang policy from a `--load-balance-method` value.
 *
 * @example
 * ```ts
 * import { sglangPolicies } from "@loadledger/policies"
 * sglangPolicies.TOTAL_TOKENS.name // => "total-tokens"
 * ```
 *
 * @category policies
 * @since 0.1.0
 */
export const sglangPolicies: Readonly<Record<LoadBalanceMethod, Policy<DpController.DpControllerState>>> = {
  ROUND_ROBIN: roundRobin,
  FOLLOW_BOOTSTRAP_ROOM: followBootstrapRoom,
  TOTAL_REQUESTS: totalRequests,
  TOTAL_TOKENS: totalTokens
}
