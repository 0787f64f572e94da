/**
 * A router value: what was last heard from each rank, the policy's view of the usable ranks, and
 * exact in-flight bookkeeping; built by `makeRouter` and fed polls here (`applyPoll`,
 * `ejectWorker`). Requests are placed and ended by `Route.ts` (`route`, `finish`).
 *
 * Pure: `(state, input, now) -> result`. The effectful shell (`LiveRouter`) keeps the current value
 * in one cell and feeds it polls and requests.
 *
 * @since 0.1.0
 */
import { checkNow, type Policy } from "@loadledger/policies"
import type { RankLoad } from "@loadledger/schema"
import * as HashMap from "effect/HashMap"
import * as Result from "effect/Result"
import { checkPolicy, checkRouterOptions } from "./internal/checks.js"
import { eject, makeLastHeard, type PollFailure, recordFailure, recordRows } from "./LastHeard.js"
import { refreshView, viewRow } from "./PolicyView.js"
import { rankStatus } from "./RankStatus.js"
import type { RouterOptions, RouterState } from "./RouterState.js"
import { sourcePublishedFields } from "./Source.js"
import type { LoadField, RankStatus, RouterError, SourceKind, WorkerSpec } from "./Types.js"

/**
 * The router value's types, defined in the leaf module `RouterState.ts` (so `Route.ts` and the shell
 * share them without an import circle) and re-exported here, where they have always been imported.
 *
 * @since 0.1.0
 */
export type { Placement, RouterOptions, RouterState } from "./RouterState.js"

/**
 * A fresh router for `workers` (each physical worker expands to `dpSize` ranks) and one policy.
 * A worker may carry its source `kind` (a `SourceSpec` does): a row of it that lacks some of the
 * fields that kind publishes (`sourcePublishedFields`; without a `kind`, the three load counts) is
 * partial, known with what it reported and `missing` naming the rest, unless
 * `options.requiredFields` asks for them.
 *
 * **Errors**: the arguments are checked first, in order: `policy` (an object whose `init`,
 * `observe`, `route` and `finish` are functions), `workers` (see `WorkerSpec`: each `url` a
 * non-empty string no other worker has, `dpSize` an integer from 1 to 1024, `kind` absent or a
 * `SourceKind`), `options` (see `RouterOptions`). The first value at fault makes a router with no
 * ranks whose `error` is a `RouterError` `InvalidInput` naming it (`workers[1].dpSize`,
 * `options.clientCount`), and every `route` of it answers that error (as a policy built from bad
 * options does). Why not throw or return a `Result`: the package's errors are values, and `route`
 * is where every caller already handles a `RouterError`; a caller that wants to fail early (a
 * config loader) reads `error` right after `makeRouter`. `applyPoll`, `finish`, `ejectWorker` and
 * `statuses` work on such a router (there is nothing to update).
 *
 * @example
 * ```ts
 * import { makeRouter, route } from "@loadledger/live"
 * import { totalRequests } from "@loadledger/policies"
 * const r = makeRouter(totalRequests, [{ url: "http://127.0.0.1:30000", dpSize: 4 }], { staleAfterSeconds: 2 })
 * r.inflightPerRank // => [0, 0, 0, 0]
 * r.view.members // => []
 * const v = makeRouter(totalRequests, [{ url: "http://h:8000", dpSize: 2, kind: "vllm-metrics" }], { staleAfterSeconds: 2 })
 * v.status.publishedFieldsByWorker?.get("http://h:8000") // => ["numRunningReqs", "numWaitingReqs"]
 * v.status.requiredFields // => undefined
 * // a bad option or worker is refused up front, naming the field
 * const bad = makeRouter(totalRequests, [{ url: "u", dpSize: 4 }], { staleAfterSeconds: 1, clientCount: 0 })
 * bad.error?.field // => "options.clientCount"
 * bad.error?.message // => "options.clientCount must be an integer >= 1, got 0"
 * route(bad, { requestId: "a", inputLength: 1 }, 0) === bad.error // => true
 * makeRouter(totalRequests, [{ url: "u", dpSize: 1 }, { url: "u", dpSize: 1 }], { staleAfterSeconds: 1 }).error?.field
 * // => "workers[1].url"
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const makeRouter = <S>(
  policy: Policy<S>,
  workers: ReadonlyArray<WorkerSpec & { readonly kind?: SourceKind | undefined }>,
  options: RouterOptions
): RouterState<S> => {
  const error = checkRouterOptions(policy, workers, options)
  if (error !== undefined) return refused(policy, error)
  const heard = makeLastHeard(workers)
  const n = heard.ranks.length
  const clientCount = options.clientCount ?? 1
  const clientIndex = options.clientIndex === undefined ? 0 : options.clientIndex
  return {
    policy,
    status: {
      staleAfterSeconds: options.staleAfterSeconds,
      requiredFields: options.requiredFields,
      publishedFieldsByWorker: publishedByKind(workers),
      ageClock: options.ageClock ?? "publisher-change"
    },
    heard,
    view: { members: [], localOf: Array.from({ length: n }, () => -1), state: policy.init(0), generation: 0 },
    inflight: HashMap.empty(),
    inflightPerRank: Array.from({ length: n }, () => 0),
    decisions: Array.from({ length: n }, () => 0),
    // vLLM's front ends start their scan at floor(N * client_index / client_count)
    cursor: n > 0 ? Math.floor((n * clientIndex) / clientCount) % n : 0,
    clientCount,
    overloadBound: options.overloadBound
  }
}

/**
 * A router over no workers that answers every `route` with `error`. No rank ever joins its view, so
 * the policy is never called past `init(0)`, and not at all when it is not a policy.
 */
const refused = <S>(policy: Policy<S>, error: RouterError): RouterState<S> => ({
  policy,
  status: { staleAfterSeconds: 1, ageClock: "publisher-change" },
  heard: { workers: [], ranks: [], error },
  view: {
    members: [],
    localOf: [],
    state: checkPolicy(policy, "policy") === undefined ? policy.init(0) : (undefined as S),
    generation: 0
  },
  inflight: HashMap.empty(),
  inflightPerRank: [],
  decisions: [],
  cursor: 0,
  clientCount: 1,
  error
})

const publishedByKind = (
  workers: ReadonlyArray<WorkerSpec & { readonly kind?: SourceKind | undefined }>
): ReadonlyMap<string, ReadonlyArray<LoadField>> | undefined => {
  const out = new Map<string, ReadonlyArray<LoadField>>()
  for (const w of workers) if (w.kind !== undefined) out.set(w.url, sourcePublishedFields(w.kind))
  return out.size > 0 ? out : undefined
}

/**
 * Fold one poll of worker `url` (decoded rows, or the failure) into the router: the ledger is
 * updated (`mode` as in `recordRows`); when the set of usable ranks is unchanged, the worker's
 * known rows are handed to `policy.observe` (indexed in the view), otherwise the view is rebuilt.
 * Unknown and unhealthy ranks never reach the policy (it never sees an invented 0 for them).
 *
 * **Bad time**: a `now` that is not a finite number (`NaN`, `±Infinity`: the inputs the policies'
 * `checkNow` refuses) makes `applyPoll` ignore the whole poll and return `state` itself, as every
 * policy's `observe` does with such a `now` (it cannot return an error). Nothing is recorded, so the
 * worker's ranks age as if the poll never came; `route` at such a `now` is a `RouterError`
 * `InvalidInput` with `field: "now"`.
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
 * applyPoll(r, "u", Result.succeed([{ dpRank: 1, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0 }]), Number.NaN) === r // => true
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
  if (checkNow(now) !== undefined) return state
  const heard = Result.isFailure(polled)
    ? recordFailure(state.heard, url, polled.failure, now)
    : recordRows(state.heard, url, polled.success, now, mode)
  const next = { ...state, heard }
  const ranks = rankStatus(heard, now, state.status)
  const view = refreshView(next.policy, next.view, ranks, now, state.inflight)
  if (view !== state.view || Result.isFailure(polled)) return { ...next, view }
  const rows: Array<RankLoad> = []
  for (const s of ranks)
    if (s.workerUrl === url && s.condition === "known") rows.push(viewRow(s.row, view.localOf[s.index]!))
  if (rows.length === 0) return next
  return { ...next, view: { ...view, state: state.policy.observe(view.state, rows, now) } }
}

/**
 * Eject worker `url` for `holdSeconds` from `now` (see `eject`): its ranks leave the view at once
 * and stay out until the hold ends or the first successful poll received after `now`, whichever
 * comes first (a finite hold; `Infinity` is for good). A `now` that is not a finite
 * number, or a `holdSeconds` that is `NaN`, is ignored like `applyPoll`'s bad `now`: `state` itself
 * comes back (`holdSeconds: Infinity` ejects for good).
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
 * // the first healthy report after the ejection clears it
 * r = applyPoll(r, "a", Result.succeed([{ dpRank: 0, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0 }]), 1.5)
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
  if (checkNow(now) !== undefined || Number.isNaN(holdSeconds)) return state
  const heard = eject(state.heard, url, now + holdSeconds, message, now)
  const next = { ...state, heard }
  return {
    ...next,
    view: refreshView(next.policy, next.view, rankStatus(heard, now, state.status), now, state.inflight)
  }
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
