/**
 * A router value: one policy's state, the live ledger, and exact in-flight bookkeeping.
 *
 * Pure: `(state, input, now) -> result`. The effectful shell (`LiveRouter`) keeps the current value
 * in one cell and feeds it polls and requests.
 *
 * @since 0.1.0
 */
import type { Explanation, Policy, RouteRequest } from "@loadledger/policies"
import { HashMap, Option, Result } from "effect"
import type { LedgerRow } from "./internal/decode.js"
import {
  type Ledger,
  makeLedger,
  type PollFailure,
  recordFailure,
  recordRows,
  type WorkerSpec
} from "./Ledger.js"
import {
  type LoadField,
  type RankStatus,
  rankStatus,
  type StatusOptions,
  tokenImbalanceRatio
} from "./RankStatus.js"

/**
 * How the router treats ranks. `staleAfterSeconds`: the staleness bound. `unknownRanks`: what to do
 * while some reachable rank is unknown: `"exclude"` it (the policy decides among known ranks only),
 * or decide by the router's own in-flight counts over all reachable ranks (`"inflight"`, the
 * default). Unreachable workers (connection refused, non-2xx) are excluded in both modes; a poll that
 * timed out only makes the ranks unknown (slow is not dead).
 * `requiredFields`: fields the policy reads; a row missing one is unknown (default: running, waiting,
 * total tokens).
 *
 * @category models
 * @since 0.1.0
 */
export interface RouterOptions {
  readonly staleAfterSeconds: number
  readonly unknownRanks?: "exclude" | "inflight" | undefined
  readonly requiredFields?: ReadonlyArray<LoadField> | undefined
  readonly ageClock?: StatusOptions["ageClock"] | undefined
}

/**
 * The router value. `inflight` maps each admitted, unfinished request id to its rank index (an
 * effect persistent `HashMap`: O(log n) per route/finish however many requests are in flight);
 * `inflightPerRank` is its per-rank count; `decisions` counts placements per rank.
 *
 * @category models
 * @since 0.1.0
 */
export interface RouterState<S> {
  readonly policy: Policy<S>
  readonly policyState: S
  readonly status: StatusOptions
  readonly unknownRanks: "exclude" | "inflight"
  readonly ledger: Ledger
  readonly inflight: HashMap.HashMap<string, number>
  readonly inflightPerRank: ReadonlyArray<number>
  readonly decisions: ReadonlyArray<number>
  readonly cursor: number
}

/**
 * A placement: the global rank index, the virtual worker (`url@dpRank`), how it was decided
 * (`"policy"`, or `"inflight"` when unknown ranks forced the in-flight fallback), the policy's
 * explanation, and every rank's status (known/unknown, reason, age in seconds) at decision time.
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
  readonly mode: "policy" | "inflight"
  readonly explanation: Explanation
  readonly ranks: ReadonlyArray<RankStatus>
}

/**
 * Why the router could not place a request: no reachable (or, when excluding, known) rank; a request
 * id already in flight; or the policy's own error (kept in `policyError`).
 *
 * @category errors
 * @since 0.1.0
 */
export interface RouterError {
  readonly _tag: "RouterError"
  readonly reason: "NoAvailableRanks" | "DuplicateRequestId" | "PolicyError"
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
  const ledger = makeLedger(workers)
  const n = ledger.ranks.length
  return {
    policy,
    policyState: policy.init(n),
    status: {
      staleAfterSeconds: options.staleAfterSeconds,
      requiredFields: options.requiredFields ?? ["numRunningReqs", "numWaitingReqs", "numTotalTokens"],
      ageClock: options.ageClock ?? "publisher-change"
    },
    unknownRanks: options.unknownRanks ?? "inflight",
    ledger,
    inflight: HashMap.empty(),
    inflightPerRank: Array.from({ length: n }, () => 0),
    decisions: Array.from({ length: n }, () => 0),
    cursor: 0
  }
}

/**
 * Fold one poll of worker `url` (decoded rows, or the failure) into the router: the ledger is
 * updated (`mode` as in `recordRows`), and the worker's ranks that are now known are handed to
 * `policy.observe`. Unknown ranks
 * are never observed (a policy never sees an invented 0 for them).
 *
 * @example
 * ```ts
 * import { applyPoll, makeRouter, statuses } from "@loadledger/live"
 * import { totalRequests } from "@loadledger/policies"
 * import { Result } from "effect"
 * let r = makeRouter(totalRequests, [{ url: "u", dpSize: 2 }], { staleAfterSeconds: 1 })
 * r = applyPoll(r, "u", Result.succeed([{ dpRank: 0, numRunningReqs: 1, numWaitingReqs: 0, numTotalTokens: 9 }]), 0)
 * statuses(r, 0).map((s) => s.known) // => [true, false]
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const applyPoll = <S>(
  state: RouterState<S>,
  url: string,
  polled: Result.Result<ReadonlyArray<LedgerRow>, PollFailure>,
  now: number,
  mode: "replace" | "merge" = "replace"
): RouterState<S> => {
  if (Result.isFailure(polled))
    return { ...state, ledger: recordFailure(state.ledger, url, polled.failure, now) }
  const ledger = recordRows(state.ledger, url, polled.success, now, mode)
  const loads = rankStatus(ledger, now, state.status).flatMap((s) =>
    s.workerUrl === url && s.load !== undefined ? [s.load] : []
  )
  const policyState =
    loads.length > 0 ? state.policy.observe(state.policyState, loads, now) : state.policyState
  return { ...state, ledger, policyState }
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
  rankStatus(state.ledger, now, state.status)

/**
 * Place one request at `now`. Candidates are the reachable ranks (and, with `unknownRanks:
 * "exclude"`, only the known ones). When every candidate is known the policy decides (its health
 * mask is set to the candidates); when some candidate is unknown, or the policy picks a rank that
 * is not a candidate (SGLang's load methods ignore health, as upstream), the router picks the fewest
 * in-flight requests among candidates, ties rotating. The request is then in flight on that rank
 * until `finish` or `abort`.
 *
 * @example
 * ```ts
 * import { makeRouter, route } from "@loadledger/live"
 * import { totalRequests } from "@loadledger/policies"
 * const r0 = makeRouter(totalRequests, [{ url: "u", dpSize: 4 }], { staleAfterSeconds: 2 })
 * const out = route(r0, { requestId: "a", inputLength: 100 }, 0)
 * // no rank has reported yet: the router falls back to its own in-flight counts
 * out._tag === "Routed" && out.decision.mode // => "inflight"
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
  if (HashMap.has(state.inflight, request.requestId)) {
    return routerError("DuplicateRequestId", `request ${request.requestId} is already in flight`, {
      field: "requestId"
    })
  }
  const ranks = statuses(state, now)
  const n = ranks.length
  const candidate: Array<boolean> = new Array(n)
  const unknownCandidates: Array<RankStatus> = []
  let candidates = 0
  for (let i = 0; i < n; i++) {
    const s = ranks[i]!
    const c = s.reachable && (s.known || state.unknownRanks === "inflight")
    candidate[i] = c
    if (c) candidates++
    if (c && !s.known) unknownCandidates.push(s)
  }
  if (candidates === 0) {
    return routerError("NoAvailableRanks", "no reachable rank with usable load data", { ranks })
  }
  let rank = -1
  let mode: Decision["mode"] = "inflight"
  let explanation: Explanation = {}
  let policyState = state.policyState
  let cursor = state.cursor
  let fallbackWhy = "some reachable ranks have no usable load data"
  if (unknownCandidates.length === 0) {
    const routed = state.policy.route(state.policy.setStatus(state.policyState, candidate), request, now)
    if (routed._tag === "PolicyError") {
      return routerError("PolicyError", `${routed.reason}: ${routed.message}`, { field: routed.field, ranks })
    }
    if (candidate[routed.rank] === true) {
      rank = routed.rank
      mode = "policy"
      explanation = routed.explanation
      policyState = routed.state
    } else {
      fallbackWhy = `the policy chose rank ${routed.rank} (${ranks[routed.rank]?.id}), which is unavailable`
    }
  }
  if (rank < 0) {
    for (let k = 0; k < n; k++) {
      const i = (state.cursor + k) % n
      if (candidate[i] !== true) continue
      if (rank < 0 || state.inflightPerRank[i]! < state.inflightPerRank[rank]!) rank = i
    }
    cursor = (rank + 1) % n
    explanation = {
      scores: state.inflightPerRank.map((c, i) => (candidate[i] ? c : Number.POSITIVE_INFINITY)),
      tieBreak: "fewest in-flight, ties rotate",
      stale: unknownCandidates.map((s) => s.index),
      details: { fallback: `in-flight counts: ${fallbackWhy}` }
    }
  }
  const s = ranks[rank]!
  return {
    _tag: "Routed",
    state: {
      ...state,
      policyState,
      cursor,
      inflight: HashMap.set(state.inflight, request.requestId, rank),
      inflightPerRank: bump(state.inflightPerRank, rank, 1),
      decisions: bump(state.decisions, rank, 1)
    },
    decision: {
      _tag: "Decision",
      requestId: request.requestId,
      rank,
      rankId: s.id,
      workerUrl: s.workerUrl,
      dpRank: s.dpRank,
      mode,
      explanation,
      ranks
    }
  }
}

/**
 * End a request (finished or aborted): it leaves the in-flight map and the policy's bookkeeping.
 * `found` is false (and the state unchanged) for an id that is not in flight, so a double finish or
 * a finish after abort never drives a count below the truth.
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
  const rank = found.value
  const inflight = HashMap.remove(state.inflight, requestId)
  return {
    state: {
      ...state,
      inflight,
      inflightPerRank: bump(state.inflightPerRank, rank, -1),
      policyState: state.policy.finish(state.policyState, [requestId], now)
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
 * const r = applyPoll(makeRouter(totalTokens, [{ url: "u", dpSize: 4 }], { staleAfterSeconds: 1, requiredFields: ["numTotalTokens"] }), "u", Result.succeed(rows), 0)
 * observedImbalance(statuses(r, 0)) // => 3.2
 * ```
 *
 * @category getters
 * @since 0.1.0
 */
export const observedImbalance = (ranks: ReadonlyArray<RankStatus>): number | undefined =>
  tokenImbalanceRatio(
    ranks.flatMap((s) =>
      s.load !== undefined && !(s.assumedZero ?? []).includes("numTotalTokens") ? [s.load.numTotalTokens] : []
    )
  )
