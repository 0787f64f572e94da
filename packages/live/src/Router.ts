/**
 * A router value: what was last heard from each rank, the policy's view of the usable ranks, and
 * exact in-flight bookkeeping.
 *
 * Pure: `(state, input, now) -> result`. The effectful shell (`LiveRouter`) keeps the current value
 * in one cell and feeds it polls and requests.
 *
 * Over 300 lines: one concept (the pure router value: view, route, finish, abort, polls), which share the in-flight bookkeeping; about half are docstrings.
 *
 * @since 0.1.0
 */
import { checkInputLength, type Explanation, type Policy, type RouteRequest } from "@loadledger/policies"
import type { RankLoad } from "@loadledger/schema"
import { HashMap, Option, Result } from "effect"
import {
  eject,
  type LastHeard,
  makeLastHeard,
  type PollFailure,
  recordFailure,
  recordRows,
  type WorkerSpec
} from "./LastHeard.js"
import { buildView, type PolicyView, sameMembers, usableRanks, viewRow } from "./PolicyView.js"
import {
  type LoadField,
  type RankStatus,
  rankStatus,
  type StatusOptions,
  tokenImbalanceRatio
} from "./RankStatus.js"

/**
 * How the router judges ranks. `staleAfterSeconds`: the staleness bound. `requiredFields`: fields
 * the policy reads; a row missing one is unknown (default: running, waiting, total tokens).
 * `ageClock`: see `StatusOptions`. `clientCount` / `clientIndex`: how many router replicas share
 * these engines and which one this is (vLLM's front-end `client_count` / `client_index`); they
 * shape the in-flight fallback (see `route`). Pass the same numbers to the policy (the registry's
 * `make({ clientCount, clientIndex })`).
 *
 * @category models
 * @since 0.1.0
 */
export interface RouterOptions {
  readonly staleAfterSeconds: number
  readonly requiredFields?: ReadonlyArray<LoadField> | undefined
  readonly ageClock?: StatusOptions["ageClock"] | undefined
  readonly clientCount?: number | undefined
  readonly clientIndex?: number | undefined
}

/**
 * Where an admitted request is: its global rank and the view generation it was placed in.
 *
 * @category models
 * @since 0.2.0
 */
export interface Placement {
  readonly rank: number
  readonly generation: number
}

/**
 * The router value. `heard`: what was last heard per rank. `view`: the policy's state over the
 * usable ranks (see `PolicyView`). `inflight` maps each admitted, unfinished request id to its
 * placement (an effect persistent `HashMap`); `inflightPerRank` is its per-rank count; `decisions`
 * counts placements per rank.
 *
 * @category models
 * @since 0.1.0
 */
export interface RouterState<S> {
  readonly policy: Policy<S>
  readonly status: StatusOptions
  readonly heard: LastHeard
  readonly view: PolicyView<S>
  readonly inflight: HashMap.HashMap<string, Placement>
  readonly inflightPerRank: ReadonlyArray<number>
  readonly decisions: ReadonlyArray<number>
  readonly cursor: number
  readonly clientCount: number
}

/**
 * Why the fallback decided instead of the policy: `no-known-rank` (no rank's numbers are usable,
 * e.g. before the first poll answers, or every engine serves stale, rejected or undecodable loads,
 * while some engine is still healthy) or `policy-refused` (the policy returned `AllRanksUnavailable`
 * or `NoRanks` over a non-empty view).
 *
 * @category models
 * @since 0.2.0
 */
export type FallbackReason = "no-known-rank" | "policy-refused"

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

/**
 * Why the router could not place a request: a request that is not valid (`InvalidInput`, e.g. an
 * `inputLength` that is no token count, `field` naming it); no healthy rank at all; a request id
 * already in flight; a `routedDpRank` that is not usable; or the policy's own error (kept in the
 * message).
 *
 * @category errors
 * @since 0.1.0
 */
export interface RouterError {
  readonly _tag: "RouterError"
  readonly reason:
    | "InvalidInput"
    | "NoAvailableRanks"
    | "DuplicateRequestId"
    | "InvalidRoutedRank"
    | "PolicyError"
  readonly message: string
  readonly field?: string | undefined
  readonly ranks?: ReadonlyArray<RankStatus> | undefined
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

/**
 * A fresh router for `workers` (each physical worker expands to `dpSize` ranks) and one policy.
 *
 * @example
 * ```ts
 * import { makeRouter } from "@loadledger/live"
 * import { totalRequests } from "@loadledger/policies"
 * const r = makeRouter(totalRequests, [{ url: "http://127.0.0.1:30000", dpSize: 4 }], { staleAfterSeconds: 2 })
 * r.inflightPerRank // => [0, 0, 0, 0]
 * r.view.members // => []
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const makeRouter = <S>(
  policy: Policy<S>,
  workers: ReadonlyArray<WorkerSpec>,
  options: RouterOptions
): RouterState<S> => {
  const heard = makeLastHeard(workers)
  const n = heard.ranks.length
  const clientCount = options.clientCount ?? 1
  const clientIndex = options.clientIndex === undefined ? 0 : options.clientIndex
  return {
    policy,
    status: {
      staleAfterSeconds: options.staleAfterSeconds,
      requiredFields: options.requiredFields ?? ["numRunningReqs", "numWaitingReqs", "numTotalTokens"],
      ageClock: options.ageClock ?? "publisher-change"
    },
    heard,
    view: { members: [], localOf: Array.from({ length: n }, () => -1), state: policy.init(0), generation: 0 },
    inflight: HashMap.empty(),
    inflightPerRank: Array.from({ length: n }, () => 0),
    decisions: Array.from({ length: n }, () => 0),
    // vLLM's front ends start their scan at floor(N * client_index / client_count)
    cursor: n > 0 ? Math.floor((n * clientIndex) / clientCount) % n : 0,
    clientCount
  }
}

/** The view for `ranks` at `now`: unchanged when the usable set is, rebuilt otherwise. */
const refreshView = <S>(
  state: RouterState<S>,
  ranks: ReadonlyArray<RankStatus>,
  now: number
): PolicyView<S> => {
  const members = usableRanks(ranks)
  return sameMembers(members, state.view.members)
    ? state.view
    : buildView(state.policy, ranks, members, state.view.generation + 1, now)
}

/**
 * Fold one poll of worker `url` (decoded rows, or the failure) into the router: the ledger is
 * updated (`mode` as in `recordRows`); when the set of usable ranks is unchanged, the worker's
 * known rows are handed to `policy.observe` (indexed in the view), otherwise the view is rebuilt.
 * Unknown and unhealthy ranks never reach the policy (it never sees an invented 0 for them).
 *
 * @example
 * ```ts
 * import { applyPoll, makeRouter, statuses } from "@loadledger/live"
 * import { totalRequests } from "@loadledger/policies"
 * import { Result } from "effect"
 * let r = makeRouter(totalRequests, [{ url: "u", dpSize: 2 }], { staleAfterSeconds: 1 })
 * r = applyPoll(r, "u", Result.succeed([{ dpRank: 0, timestamp: 0, numRunningReqs: 1, numWaitingReqs: 0, numTotalTokens: 9 }]), 0)
 * statuses(r, 0).map((s) => s.condition) // => ["known", "unknown"]
 * r.view.members // => [0]
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const applyPoll = <S>(
  state: RouterState<S>,
  url: string,
  polled: Result.Result<ReadonlyArray<RankLoad>, PollFailure>,
  now: number,
  mode: "replace" | "merge" = "replace"
): RouterState<S> => {
  const heard = Result.isFailure(polled)
    ? recordFailure(state.heard, url, polled.failure, now)
    : recordRows(state.heard, url, polled.success, now, mode)
  const next = { ...state, heard }
  const ranks = rankStatus(heard, now, state.status)
  const view = refreshView(next, ranks, now)
  if (view !== state.view || Result.isFailure(polled)) return { ...next, view }
  const rows: Array<RankLoad> = []
  for (const s of ranks)
    if (s.workerUrl === url && s.condition === "known") rows.push(viewRow(s.row, view.localOf[s.index]!))
  if (rows.length === 0) return next
  return { ...next, view: { ...view, state: state.policy.observe(view.state, rows, now) } }
}

/**
 * Eject worker `url` for `holdSeconds` from `now` (see `eject`): its ranks leave the view at once
 * and stay out until the hold ends, even while its polls succeed.
 *
 * @example
 * ```ts
 * import { applyPoll, ejectWorker, makeRouter } from "@loadledger/live"
 * import { totalRequests } from "@loadledger/policies"
 * import { Result } from "effect"
 * let r = makeRouter(totalRequests, [{ url: "a", dpSize: 1 }, { url: "b", dpSize: 1 }], { staleAfterSeconds: 5 })
 * r = applyPoll(r, "a", Result.succeed([{ dpRank: 0, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0 }]), 0)
 * r = applyPoll(r, "b", Result.succeed([{ dpRank: 0, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0 }]), 0)
 * r = ejectWorker(r, "a", 2, "3 consecutive upstream failures", 1)
 * r.view.members // => [1]
 * r = applyPoll(r, "a", Result.succeed([{ dpRank: 0, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0 }]), 3.5)
 * r.view.members // => [0, 1]
 * ```
 *
 * @category combinators
 * @since 0.2.0
 */
export const ejectWorker = <S>(
  state: RouterState<S>,
  url: string,
  holdSeconds: number,
  message: string,
  now: number
): RouterState<S> => {
  const heard = eject(state.heard, url, now + holdSeconds, message)
  const next = { ...state, heard }
  return { ...next, view: refreshView(next, rankStatus(heard, now, state.status), now) }
}

/**
 * Every rank's status at `now` (see `rankStatus`), with this router's options.
 *
 * @example
 * ```ts
 * import { makeRouter, statuses } from "@loadledger/live"
 * import { totalRequests } from "@loadledger/policies"
 * statuses(makeRouter(totalRequests, [{ url: "u", dpSize: 1 }], { staleAfterSeconds: 1 }), 0)[0]?.reason
 * // => "never-reported"
 * ```
 *
 * @category getters
 * @since 0.1.0
 */
export const statuses = <S>(state: RouterState<S>, now: number): ReadonlyArray<RankStatus> =>
  rankStatus(state.heard, now, state.status)

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
      inflight: HashMap.set(state.inflight, request.requestId, { rank, generation: view.generation }),
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
 * 0. The request is checked where it enters: an `inputLength` that is no token count (a safe
 *    non-negative integer, `checkInputLength` of the policies) is a `RouterError` `InvalidInput`.
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
  // the boundary where a request enters: one check (policies' shared rule), inner code trusts it
  const bad = checkInputLength(request.inputLength)
  if (bad !== undefined) return routerError("InvalidInput", bad.message, { field: "inputLength" })
  if (HashMap.has(state.inflight, request.requestId)) {
    return routerError("DuplicateRequestId", `request ${request.requestId} is already in flight`, {
      field: "requestId"
    })
  }
  const ranks = statuses(state, now)
  const view = refreshView(state, ranks, now)
  let fallbackReason: FallbackReason = "no-known-rank"
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
    if (rank < 0 || state.inflightPerRank[i]! < state.inflightPerRank[rank]!) rank = i
  }
  if (rank < 0)
    return routerError("NoAvailableRanks", "no healthy rank: every worker failed its last poll", { ranks })
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
    generation === state.view.generation
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

/**
 * The token imbalance ratio over the known ranks that reported `numTotalTokens` (see
 * `tokenImbalanceRatio`); `undefined` when none did.
 *
 * @example
 * ```ts
 * import { applyPoll, makeRouter, observedImbalance, statuses } from "@loadledger/live"
 * import { totalTokens } from "@loadledger/policies"
 * import { Result } from "effect"
 * const rows = [12000, 0, 0, 3000].map((numTotalTokens, dpRank) => ({ dpRank, numTotalTokens }))
 * const r = applyPoll(makeRouter(totalTokens, [{ url: "u", dpSize: 4 }], { staleAfterSeconds: 1, requiredFields: ["numTotalTokens"], ageClock: "receipt" }), "u", Result.succeed(rows), 0)
 * observedImbalance(statuses(r, 0)) // => 3.2
 * ```
 *
 * @category getters
 * @since 0.1.0
 */
export const observedImbalance = (ranks: ReadonlyArray<RankStatus>): number | undefined => {
  const tokens: Array<number> = []
  for (const s of ranks) {
    const t = s.condition === "known" ? s.row.numTotalTokens : undefined
    if (t !== undefined) tokens.push(t)
  }
  return tokenImbalanceRatio(tokens)
}
