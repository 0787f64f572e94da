/**
 * SGLang's four DataParallelController load-balance methods as `Policy` objects.
 *
 * Reproduces `python/sglang/srt/managers/data_parallel_controller.py` (sgl-project/sglang, file-index
 * version 54513096567; golden vectors `fixtures/reference/sglang/dp_lb_cases.json`).
 *
 * @since 0.1.0
 */

import { storeSnapshots } from "../internal/snapshotStore.js"
import type { Policy, RankLoad } from "../Policy.js"
import { checkStatus } from "../RankStatus.js"
import type { LoadBalanceMethod } from "./DpBudget.js"
import * as DpController from "./DpController.js"
import * as Charged from "./internal/charged.js"
import {
  chargeBudget,
  chargeRoundRobin,
  routeFollowBootstrapRoom,
  routeRoundRobin,
  routeTotalRequests,
  routeTotalTokens
} from "./internal/sglangRoutes.js"

type Route = Policy<DpController.DpControllerState>["route"]

/** The policy for `method`; `route` is that method's own function (its own type feedback). */
const make = (method: LoadBalanceMethod, route: Route): Policy<DpController.DpControllerState> => ({
  name: method.toLowerCase().replaceAll("_", "-"),
  init: (dpSize: number) => DpController.init(method, dpSize),
  observe: (state: DpController.DpControllerState, loads: ReadonlyArray<RankLoad>, now: number) =>
    Number.isFinite(now) ? DpController.publish(state, loads, now) : state,
  route,
  finish: (state: DpController.DpControllerState) => state,
  setStatus: (state: DpController.DpControllerState, status: ReadonlyArray<boolean>) =>
    DpController.setStatus(state, status).state
})

/**
 * The policy for a budget method: like {@link make}, but every state it returns is a `ChargedState`
 * (the same `DpControllerState` content, with O(1) charges; a plain state passed in is converted).
 */
const makeBudgeted = (
  method: "TOTAL_REQUESTS" | "TOTAL_TOKENS",
  route: Route
): Policy<DpController.DpControllerState> => ({
  ...make(method, route),
  charge: (state, request, now) => chargeBudget(method, state, request, now),
  init: (dpSize: number) => Charged.chargedOf(DpController.init(method, dpSize)),
  // a state that is no DpControllerState is returned as it is: `route` then reports it
  observe: (state: DpController.DpControllerState, loads: ReadonlyArray<RankLoad>, now: number) => {
    if (!Number.isFinite(now)) return state
    if (!Charged.isCharged(state) && Charged.stateProblem(state) !== undefined) return state
    const s = Charged.lift(state)
    const shm = storeSnapshots(s.shm, loads, now)
    return shm === s.shm ? s : Charged.withStore(s, s.status, shm)
  },
  setStatus: (state: DpController.DpControllerState, status: ReadonlyArray<boolean>) => {
    if (!Charged.isCharged(state) && Charged.stateProblem(state) !== undefined) return state
    const s = Charged.lift(state)
    return checkStatus(status, s.dpSize) === undefined ? Charged.withStore(s, status.slice(), s.shm) : s
  }
})

/**
 * SGLang `ROUND_ROBIN`: the next healthy rank after a counter (the only method that honours status).
 * Reads no load: `observe` only stores the rows (absent fields and `unknown` rows change nothing),
 * so no rank is ever chosen for an unknown load; unhealthy ranks are skipped.
 * `route` never refreshes; a `PolicyError` `AllRanksUnavailable` when no rank is healthy, and
 * `InvalidInput` when `now` is not finite seconds or `inputLength` not a token count (upstream
 * never gets either).
 *
 * `charge` (a request carried into a rebuilt state, loadledger's) moves the counter to the slot
 * after its rank, so the rotation goes on where it was; a pinned `route` moves nothing (upstream).
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
export const roundRobin: Policy<DpController.DpControllerState> = {
  ...make("ROUND_ROBIN", routeRoundRobin),
  charge: chargeRoundRobin
}

/**
 * SGLang `FOLLOW_BOOTSTRAP_ROOM`: rank = `bootstrapRoom` floor-modulo `dpSize`, exact for any
 * integer (a bigint, or a decimal string with an optional sign and surrounding spaces: rooms up to
 * 2^64, negative ones). A `PolicyError` `MissingBootstrapRoom` without a room; `InvalidInput` for a
 * room that is no decimal integer (`"0x10"`, `"1e3"`, `"1_0"`, `""`), a `now` that is not finite
 * seconds or an `inputLength` that is not a token count; `NoRanks` without ranks. Ignores load and status (so absent, unknown and stale rows
 * change nothing, and an unhealthy rank may be chosen, as upstream). With random rooms this is what
 * SGLang's PD disaggregation does by default.
 *
 * **Performance**: a route parses the room's digits, about 40 ns for a 19-digit room on the
 * machine `pnpm bench SGLang` reports from, whatever the rank count; the policy adds ~30% to that.
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
 * **Carried requests** (loadledger's `charge`, for a state a live router rebuilds): charged +1 on
 * their rank after the refresh a placement would make, as the method's own placement; a pinned
 * `route` charges nothing (upstream `data_parallel_controller.py`: a `routed_dp_rank` request
 * bypasses the budget).
 *
 * **When to use**: to model an SGLang server started with `--load-balance-method total_requests`.
 *
 * **Gotchas**: a rank that never published starts at 0 and is preferred (upstream behaviour);
 * status is ignored (upstream behaviour). A failing request that refreshed carries the refreshed
 * state in `PolicyError.state`.
 *
 * **Unknown, absent, stale, unhealthy** (loadledger's extension; SGLang's snapshots always carry
 * every field and a timestamp, and then routing is exactly upstream's). Needs `numRunningReqs` and
 * `numWaitingReqs`. A rank whose last applied row is `unknown` or lacks either count is passed over
 * while any rank with known counts exists (`budget.requestsUnknown`); when every rank is unknown the
 * pick is the usual lowest index. A row without `timestamp` counts as observed at `now` (applied
 * at the next refresh, once). Stale rows are used as they are (upstream has no staleness bound: an
 * older timestamp still overwrites, see `DpBudget.update`). Unhealthy ranks: status is ignored.
 *
 * **Performance**: the state is persistent: the budget of the last refresh plus the speculative
 * charges routed since, with one shared cache of the current totals. A route allocates one object
 * (the result, which is also its new state: `r.state === r`), and picks by a scan up to 16 ranks
 * or from a tournament tree above (O(log ranks)): about 2.6x a bare argmin loop at 8 ranks and
 * 0.1x of it at 1024 (`pnpm bench SGLang`). Every state stays valid and unchanged as observed:
 * routing again from an older one first moves the cache there, taking back and re-applying the
 * charges between the two (a retry from the same state: one), or rebuilding it (O(ranks + charges))
 * after the charges were folded into a new base (every max(1024, 2 * ranks) routes).
 * `state.budget` is computed when first read, the explanation (plain data) on each read. A route
 * result is its own new state, so `JSON.stringify` writes a result as `{_tag, rank, state,
 * explanation}`, any other state as the plain `DpControllerState`; spread or clone a state and
 * `route` answers `InvalidInput` (use the `DpController` functions to derive plain states).
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
export const totalRequests: Policy<DpController.DpControllerState> = makeBudgeted(
  "TOTAL_REQUESTS",
  routeTotalRequests
)

/**
 * SGLang `TOTAL_TOKENS`: like {@link totalRequests}, comparing `(totalTokens, totalRequests)`
 * lexicographically and charging the prompt length (`inputLength`) and +1 request to the chosen rank.
 * While any rank's token count is unknown (absent, or an invalid snapshot value such as `-1`),
 * compares request counts only and passes over the ranks whose tokens are unknown while another rank
 * is known (loadledger extension, fault case S08; never fires on SGLang's own snapshots). Needs
 * `numRunningReqs`, `numWaitingReqs` and `numTotalTokens`; unknown rows, absent timestamps, stale
 * rows and status as {@link totalRequests}. State, performance and `charge` (+1 request and
 * `inputLength` tokens) as {@link totalRequests}.
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
export const totalTokens: Policy<DpController.DpControllerState> = makeBudgeted(
  "TOTAL_TOKENS",
  routeTotalTokens
)

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
