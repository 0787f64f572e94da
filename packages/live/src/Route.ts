/**
 * Placing a request on a router value and ending it: `route` (the policy over the usable ranks, or
 * the in-flight fallback), `finish`, and what a placement returns (`Decision`, `RouterError`).
 *
 * Pure: `(state, input, now) -> result`, over the `RouterState` of `Router.ts`.
 *
 * @since 0.1.0
 */
import {
  checkInputLength,
  checkNow,
  checkRequestFields,
  type Explanation,
  type RouteRequest
} from "@loadledger/policies"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import { leastUnderBound, overloaded } from "./internal/overload.js"
import { type PolicyView, refreshView } from "./PolicyView.js"
import { type RouterState, statuses } from "./Router.js"
import type { RankStatus, RouterError } from "./Types.js"

/**
 * Why the fallback decided instead of the policy: `no-known-rank` (no rank's numbers are usable,
 * e.g. before the first poll answers, or every engine serves stale, rejected or undecodable loads,
 * while some engine is still healthy) or `policy-refused` (the policy returned `AllRanksUnavailable`
 * or `NoRanks` over a non-empty view) or `overload-bound` (the policy chose a rank over
 * `overloadBound` while another was under it: the fewest in-flight under the bound is taken).
 *
 * @category models
 * @since 0.2.0
 */
export type FallbackReason = "no-known-rank" | "policy-refused" | "overload-bound"

/**
 * A placement: the global rank index, the virtual worker (`url@dpRank`), who decided (`"policy"`,
 * or `"fallback"` with its `fallbackReason`), the policy's explanation (its `scores` index the
 * view: `details.view` lists the view's global ranks), and every rank's status at decision time.
 *
 * @category models
 * @since 0.1.0
 */
export interface Decision {
  readonly _tag: "Decision"
  readonly requestId: string
  readonly rank: number
  readonly rankId: string
  readonly workerUrl: string
  readonly dpRank: number
  readonly mode: "policy" | "fallback"
  readonly fallbackReason?: FallbackReason | undefined
  readonly explanation: Explanation
  readonly ranks: ReadonlyArray<RankStatus>
}

const bump = (xs: ReadonlyArray<number>, i: number, by: number): ReadonlyArray<number> => {
  const out = xs.slice()
  out[i] = out[i]! + by
  return out
}

const routerError = (
  reason: RouterError["reason"],
  message: string,
  extra?: Partial<RouterError>
): RouterError => ({ _tag: "RouterError", reason, message, ...extra })

const admit = <S>(
  state: RouterState<S>,
  view: PolicyView<S>,
  request: RouteRequest,
  rank: number,
  cursor: number,
  ranks: ReadonlyArray<RankStatus>,
  mode: Decision["mode"],
  explanation: Explanation,
  fallbackReason?: FallbackReason
) => {
  const s = ranks[rank]!
  return {
    _tag: "Routed" as const,
    state: {
      ...state,
      view,
      cursor,
      inflight: HashMap.set(state.inflight, request.requestId, {
        rank,
        generation: view.generation,
        inputLength: request.inputLength
      }),
      inflightPerRank: bump(state.inflightPerRank, rank, 1),
      decisions: bump(state.decisions, rank, 1)
    },
    decision: {
      _tag: "Decision" as const,
      requestId: request.requestId,
      rank,
      rankId: s.id,
      workerUrl: s.workerUrl,
      dpRank: s.dpRank,
      mode,
      fallbackReason,
      explanation,
      ranks
    }
  }
}

/**
 * Place one request at `now`.
 *
 * 0. A router `makeRouter` refused (`state.error`) answers that error, before anything else. Then
 *    the request is checked where it enters: an `inputLength` that is no token count (a safe
 *    non-negative integer, `checkInputLength` of the policies), then a `now` that is not finite
 *    seconds (`checkNow`; e.g. a `clock` returning `NaN`), then a field not of its type (a
 *    `prefixHashes` that is not an array of strings, ..., `checkRequestFields`), is a `RouterError`
 *    `InvalidInput` naming the field.
 * 1. The view is brought up to date (a rank that went stale since the last poll leaves it).
 * 2. When the view has ranks, the policy decides among them (their rows as decoded); its choice is
 *    final. `routedDpRank` is a global rank index: it must be in the view (`InvalidRoutedRank`).
 * 3. Only when no rank is usable by the policy (`FallbackReason`) does the fallback decide: the
 *    fewest in-flight requests of this router times `clientCount`, among the healthy ranks, ties
 *    rotating from the replica's start index `floor(N * clientIndex / clientCount)`. No healthy
 *    rank at all is `NoAvailableRanks`.
 *
 * **Several replicas**: each router counts only the requests it placed itself. vLLM's data-parallel
 * front ends face the same problem and scale their own in-flight count by the number of front ends
 * (score = max(client_count x own in-flight, waiting + running), scan start
 * (N x client_index) // client_count): vllm-project/vllm `vllm/v1/engine/core_client.py`,
 * `DPLBAsyncMPClient.get_core_engine_for_request` @ 00080ee13c7a451fce071ccb8d0e94d395acf5a7. The
 * fallback here does the same; give the policy the same `clientCount` / `clientIndex` (registry
 * `make`) so its own charges are scaled too.
 *
 * 4. With `overloadBound` set, a rank holding that many requests in flight is never chosen while
 *    a usable rank (in the view, else healthy) is under it, and when none is (or the pinned rank is
 *    over) the answer is the `RouterError` `Overloaded`.
 *
 * The request is then in flight on that rank until `finish` (or `abort`).
 *
 * @example
 * ```ts
 * import { makeRouter, route } from "@loadledger/live"
 * import { totalRequests } from "@loadledger/policies"
 * const r0 = makeRouter(totalRequests, [{ url: "u", dpSize: 4 }], { staleAfterSeconds: 2 })
 * const out = route(r0, { requestId: "a", inputLength: 100 }, 0)
 * // no rank has reported yet: the fallback decides, by in-flight counts
 * out._tag === "Routed" && out.decision.mode // => "fallback"
 * out._tag === "Routed" && out.decision.fallbackReason // => "no-known-rank"
 * out._tag === "Routed" && out.decision.rank // => 0
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const route = <S>(
  state: RouterState<S>,
  request: RouteRequest,
  now: number
): { readonly _tag: "Routed"; readonly state: RouterState<S>; readonly decision: Decision } | RouterError => {
  if (state.error !== undefined) return state.error
  // the boundary where a request enters: one check (policies' shared rule), inner code trusts it
  const bad = checkInputLength(request.inputLength) ?? checkNow(now) ?? checkRequestFields(request)
  if (bad !== undefined) return routerError("InvalidInput", bad.message, { field: bad.field })
  if (HashMap.has(state.inflight, request.requestId)) {
    return routerError("DuplicateRequestId", `request ${request.requestId} is already in flight`, {
      field: "requestId"
    })
  }
  const ranks = statuses(state, now)
  const view = refreshView(state.policy, state.view, ranks, now, state.inflight)
  let fallbackReason: FallbackReason = "no-known-rank"
  const bound = state.overloadBound
  const usable = new Set(
    view.members.length > 0
      ? view.members
      : ranks.flatMap((s) => (s.condition === "unhealthy" ? [] : [s.index]))
  )
  if (bound !== undefined && usable.size > 0) {
    const pinned = request.routedDpRank
    if (pinned !== undefined && usable.has(pinned) && state.inflightPerRank[pinned]! >= bound)
      return overloaded(bound, ranks, pinned)
    if (leastUnderBound(state.inflightPerRank, usable, bound, state.cursor, ranks.length) < 0)
      return overloaded(bound, ranks)
  }
  if (view.members.length > 0) {
    let local: RouteRequest = request
    if (request.routedDpRank !== undefined) {
      const l = view.localOf[request.routedDpRank]
      if (l === undefined || l < 0)
        return routerError("InvalidRoutedRank", `routedDpRank ${request.routedDpRank} is not a usable rank`, {
          field: "routedDpRank",
          ranks
        })
      local = { ...request, routedDpRank: l }
    }
    const routed = state.policy.route(view.state, local, now)
    if (routed._tag === "Routed") {
      const rank = view.members[routed.rank]
      if (rank === undefined)
        return routerError(
          "PolicyError",
          `the policy chose rank ${routed.rank} of a view of ${view.members.length}`,
          {
            ranks
          }
        )
      const explanation = {
        ...routed.explanation,
        details: { ...routed.explanation.details, view: view.members }
      }
      if (bound !== undefined && state.inflightPerRank[rank]! >= bound) {
        // the policy's choice is over the bound while another rank is under it: not charged to it
        const under = leastUnderBound(state.inflightPerRank, usable, bound, state.cursor, ranks.length)
        const why = { ...explanation, details: { ...explanation.details, overBound: rank } }
        return admit(state, view, request, under, state.cursor, ranks, "fallback", why, "overload-bound")
      }
      return admit(
        state,
        { ...view, state: routed.state },
        request,
        rank,
        state.cursor,
        ranks,
        "policy",
        explanation
      )
    }
    if (routed.reason !== "AllRanksUnavailable" && routed.reason !== "NoRanks")
      return routerError("PolicyError", `${routed.reason}: ${routed.message}`, { field: routed.field, ranks })
    fallbackReason = "policy-refused"
  }
  const n = ranks.length
  let rank = -1
  for (let k = 0; k < n; k++) {
    const i = (state.cursor + k) % n
    if (ranks[i]!.condition === "unhealthy") continue
    if (bound !== undefined && state.inflightPerRank[i]! >= bound) continue
    if (rank < 0 || state.inflightPerRank[i]! < state.inflightPerRank[rank]!) rank = i
  }
  if (rank < 0)
    return routerError(
      "NoAvailableRanks",
      n === 0 ? "no rank: the router has no workers" : "no healthy rank: every worker failed its last poll",
      { ranks }
    )
  const explanation: Explanation = {
    scores: ranks.map((s, i) =>
      s.condition === "unhealthy" ? Number.POSITIVE_INFINITY : state.clientCount * state.inflightPerRank[i]!
    ),
    tieBreak: "fewest in-flight x clientCount, ties rotate",
    stale: ranks.flatMap((s) => (s.condition === "known" ? [] : [s.index])),
    details: { fallback: fallbackReason }
  }
  return admit(state, view, request, rank, (rank + 1) % n, ranks, "fallback", explanation, fallbackReason)
}

/**
 * End a request (finished or aborted): it leaves the in-flight map, and the policy's bookkeeping
 * when it was placed in the current view. `found` is false (and the state unchanged) for an id that
 * is not in flight, so a double finish or a finish after abort never drives a count below the truth.
 *
 * @example
 * ```ts
 * import { finish, makeRouter, route } from "@loadledger/live"
 * import { totalRequests } from "@loadledger/policies"
 * const r = route(makeRouter(totalRequests, [{ url: "u", dpSize: 2 }], { staleAfterSeconds: 1 }), { requestId: "a", inputLength: 1 }, 0)
 * if (r._tag === "Routed") finish(r.state, "a", 1).state.inflightPerRank // => [0, 0]
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const finish = <S>(
  state: RouterState<S>,
  requestId: string,
  now: number
): { readonly state: RouterState<S>; readonly found: boolean; readonly rank?: number | undefined } => {
  const found = HashMap.get(state.inflight, requestId)
  if (Option.isNone(found)) return { state, found: false }
  const { rank, generation } = found.value
  const view =
    generation === state.view.generation || state.view.carried?.has(requestId) === true
      ? { ...state.view, state: state.policy.finish(state.view.state, [requestId], now) }
      : state.view
  return {
    state: {
      ...state,
      view,
      inflight: HashMap.remove(state.inflight, requestId),
      inflightPerRank: bump(state.inflightPerRank, rank, -1)
    },
    found: true,
    rank
  }
}
