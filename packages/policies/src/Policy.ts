/**
 * The shape every loadledger routing policy has: a reducer over explicit, immutable state.
 *
 * `init(dpSize) -> state`, `observe(state, loads, now) -> state`,
 * `route(state, request, now) -> Routed | PolicyError`, `finish(state, requestIds, now) -> state`.
 * Time (`now`, seconds) is always an argument; randomness comes from a seed held in the state.
 *
 * The input rules every `route` applies first (`checkInputLength`, `checkNow`,
 * `checkRequestFields`, `isTokenCount`, `isTokenId`) are in `RequestChecks.ts`.
 *
 * @since 0.1.0
 */

import type { RankLoad } from "@loadledger/schema"

/**
 * One rank's row of the load ledger: `@loadledger/schema`'s `RankLoad`, re-exported under the same
 * name so `import type { RankLoad } from "@loadledger/policies"` keeps working. Every decoder
 * produces it and every policy's `observe` accepts it as-is (no mapping, no defaults).
 *
 * Units: `timestamp` float epoch seconds on the publisher's clock (absent when the source carried
 * none); counts are requests; `numTotalTokens` is tokens; `kvCacheUsage` a 0..1 fraction. Every
 * load field is optional: absent means "not reported", never 0; a row with `unknown` set carries no
 * load fields. Each policy documents what it does with an absent field, an absent timestamp, an
 * `unknown` row, a stale row and an unhealthy rank (loadledger's extension: upstream always has
 * every field), and never prefers a rank because its load is unknown.
 *
 * **When to use**: the `loads` argument of `Policy.observe`.
 *
 * @example
 * ```ts
 * import type { RankLoad } from "@loadledger/policies"
 * const row: RankLoad = { dpRank: 1, numRunningReqs: 2 }
 * row.numWaitingReqs // => undefined
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type { RankLoad }

/**
 * A request to place. `inputLength` is the prompt length in tokens, a token count
 * ({@link isTokenCount}); every policy's `route` refuses any other value with
 * {@link checkInputLength}'s error, and a field that is not of its type (from untyped callers) with
 * {@link checkRequestFields}'s. `routedDpRank` pins the request to a rank where the upstream
 * router honours a pin (SGLang's and vLLM's policies and loadledger's own: it bypasses scoring,
 * and a pin outside the ranks is `InvalidRoutedRank`); the router adapters of SMG (except
 * `smg/consistent-hashing`), production-stack, llm-d and AIBrix ignore it, as their upstreams do
 * (each docstring says so). `bootstrapRoom` is SGLang's PD bootstrap room, a
 * decimal string or bigint up to 2^64 (may be negative).
 *
 * @category models
 * @since 0.1.0
 */
export interface RouteRequest {
  readonly requestId: string
  readonly inputLength: number
  readonly routedDpRank?: number | undefined
  readonly bootstrapRoom?: string | bigint | undefined
  /** Conversation / agent session the request belongs to (session-affinity policies). */
  readonly sessionId?: string | undefined
  /** Hashes of the prompt's prefix blocks, in prompt order (cache-affinity policies). */
  readonly prefixHashes?: ReadonlyArray<string> | undefined
  /**
   * The prompt's leading token ids, in prompt order: all of them or a prefix (`inputLength` is the
   * prompt's length, not `tokenIds.length`), each a token id ({@link isTokenId}: an integer in
   * `0..2^32-1`, upstream's `u32`). Token-keyed policies read these (`smg/prefix-hash` hashes the
   * first 256); the simulator synthesises them for traces without prompt tokens (`@loadledger/sim`
   * `tokenIdsOf`). Since 0.5.0.
   */
  readonly tokenIds?: ReadonlyArray<number> | undefined
}

/**
 * Why a policy could not place a request. `field` names the input at fault when there is one.
 *
 * @category errors
 * @since 0.1.0
 */
export interface PolicyError {
  readonly _tag: "PolicyError"
  readonly reason:
    | "AllRanksUnavailable"
    | "MissingBootstrapRoom"
    | "InvalidRoutedRank"
    | "InvalidInput"
    | "NoRanks"
  readonly message: string
  readonly field?: string | undefined
  /**
   * The policy's state after effects that happened before the failure, when there were any (e.g.
   * SGLang consumes the 20 ms refresh window even for a request it then rejects). A caller that
   * wants upstream fidelity continues from it; its type is the failing policy's state type.
   */
  readonly state?: unknown
}

/**
 * What decided a placement: the per-rank scores the policy compared (lower is preferred), how a
 * tie was broken, whether the ledger was refreshed, and free-form details a policy adds
 * (for example the DPBudget rows or snapshot ages).
 *
 * @category models
 * @since 0.1.0
 */
export interface Explanation {
  readonly scores?: ReadonlyArray<number> | undefined
  readonly tieBreak?: string | undefined
  readonly refreshed?: boolean | undefined
  readonly stale?: ReadonlyArray<number> | undefined
  readonly details?: Readonly<Record<string, unknown>> | undefined
}

/**
 * A successful placement: the chosen rank, the next state, and what decided it.
 *
 * @category models
 * @since 0.1.0
 */
export interface Routed<S> {
  readonly _tag: "Routed"
  readonly rank: number
  readonly state: S
  readonly explanation: Explanation
}

/**
 * The result of `route`.
 *
 * @category models
 * @since 0.1.0
 */
export type RouteResult<S> = Routed<S> | PolicyError

/**
 * A routing policy. All functions are pure: they never mutate `state` and never read a clock.
 *
 * @example
 * ```ts
 * import { roundRobin } from "@loadledger/policies"
 * const s0 = roundRobin.init(4)
 * const r = roundRobin.route(s0, { requestId: "a", inputLength: 10 }, 0)
 * r._tag === "Routed" && r.rank // => 0
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface Policy<S> {
  readonly name: string
  /** Fresh state for `dpSize` ranks. */
  readonly init: (dpSize: number) => S
  /**
   * Fold published snapshots into the state (what the router's ledger receives) at time `now`
   * (seconds). `observe` cannot return an error, so a `now` that is not a finite number (`NaN`,
   * `±Infinity`, the inputs {@link checkNow} refuses) makes every policy ignore the whole call: it
   * returns `state` itself, unchanged, rows included (a law over the registry). Negative finite
   * times are legal.
   */
  readonly observe: (state: S, loads: ReadonlyArray<RankLoad>, now: number) => S
  /**
   * Place one request at time `now` (seconds). A request whose `inputLength` is not a token count
   * gets {@link checkInputLength}'s `InvalidInput` error from every policy, then a `now` that is not
   * a finite number gets {@link checkNow}'s, then a field not of its type (a `prefixHashes` that is
   * not an array of strings, ...) gets {@link checkRequestFields}'s, pinned requests included (laws
   * over the registry). Before all of them, a policy built from options `checkPolicyOptions` (or a
   * maker's `checkClientOptions`) refuses answers every route with that error.
   */
  readonly route: (state: S, request: RouteRequest, now: number) => RouteResult<S>
  /** Requests that finished or were aborted (in-flight bookkeeping; a no-op for policies without it). */
  readonly finish: (state: S, requestIds: ReadonlyArray<string>, now: number) => S
  /**
   * Replace per-rank health (true = healthy); a policy that ignores health returns `state`.
   * `setStatus` cannot return an error, so a `status` that is not one boolean per rank (the lists
   * `checkStatus` refuses: a wrong length, a non-boolean entry) makes every policy ignore the call:
   * it returns `state` itself, unchanged (a law over the registry).
   */
  readonly setStatus: (state: S, status: ReadonlyArray<boolean>) => S
  /**
   * Charge a request that is already in flight on rank `request.routedDpRank` into `state`, as if
   * this policy had placed it there itself (what a live router does when it rebuilds a state for a
   * new set of ranks: the state law "a change of the worker set loses nothing in flight"). Only for
   * policies whose pinned `route` would not charge like their own placement (SGLang's controller
   * counts no pinned request); absent, {@link chargeInFlight} uses the pinned `route`.
   */
  readonly charge?: ((state: S, request: RouteRequest, now: number) => RouteResult<S>) | undefined
}

/**
 * Charge request `request`, in flight on `rank`, into a policy's `state`: the policy's `charge`
 * when it has one, else its `route` of the request pinned to `rank`. A result on another rank than
 * `rank` is refused (`InvalidRoutedRank`): the charge is then not made.
 *
 * **When to use**: to carry the requests in flight into a state rebuilt from `init` and `observe`
 * (the live router's `PolicyView`; the carry law of `@loadledger/testing`).
 *
 * @example
 * ```ts
 * import { chargeInFlight, totalRequests } from "@loadledger/policies"
 * const rows = [0, 1].map((dpRank) => ({ dpRank, timestamp: 1, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0 }))
 * const s = totalRequests.observe(totalRequests.init(2), rows, 1)
 * const c = chargeInFlight(totalRequests, s, { requestId: "a", inputLength: 8 }, 0, 1)
 * // rank 0 holds "a" now, so the next request goes to rank 1
 * const r = c._tag === "Routed" ? totalRequests.route(c.state, { requestId: "b", inputLength: 8 }, 1) : c
 * r._tag === "Routed" && r.rank // => 1
 * ```
 *
 * @category combinators
 * @since 0.8.0
 */
export const chargeInFlight = <S>(
  policy: Policy<S>,
  state: S,
  request: RouteRequest,
  rank: number,
  now: number
): RouteResult<S> => {
  const pinned = { ...request, routedDpRank: rank }
  const r = policy.charge !== undefined ? policy.charge(state, pinned, now) : policy.route(state, pinned, now)
  if (r._tag === "Routed" && r.rank !== rank)
    return policyError("InvalidRoutedRank", `charged on rank ${r.rank}, not ${rank}`, "routedDpRank")
  return r
}

/**
 * Build a `PolicyError`.
 *
 * **When to use**: in a policy's `route`, to refuse a request with a reason and the field at fault.
 *
 * @example
 * ```ts
 * import { policyError } from "@loadledger/policies"
 * policyError("NoRanks", "dpSize is 0", "dpSize")
 * // => { _tag: "PolicyError", reason: "NoRanks", message: "dpSize is 0", field: "dpSize" }
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const policyError = (reason: PolicyError["reason"], message: string, field?: string): PolicyError => ({
  _tag: "PolicyError",
  reason,
  message,
  field
})

/**
 * True when a route result is an error.
 *
 * **When to use**: to branch on a `route` result.
 *
 * @example
 * ```ts
 * import { isPolicyError, totalRequests } from "@loadledger/policies"
 * isPolicyError(totalRequests.route(totalRequests.init(0), { requestId: "a", inputLength: 1 }, 0)) // => true
 * isPolicyError(totalRequests.route(totalRequests.init(2), { requestId: "a", inputLength: 1 }, 0)) // => false
 * ```
 *
 * @category guards
 * @since 0.1.0
 */
export const isPolicyError = <S>(r: RouteResult<S>): r is PolicyError => r._tag === "PolicyError"
