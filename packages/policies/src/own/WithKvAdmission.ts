/**
 * `withKvAdmission`: never send a request to a rank whose free KV cannot hold it while another rank
 * can; otherwise the wrapped policy decides.
 *
 * @since 0.4.0
 */

import { clientsOf } from "../internal/clients.js"
import {
  type Explanation,
  type Policy,
  type PolicyError,
  policyError,
  type RouteRequest,
  type RouteResult
} from "../Policy.js"
import { checkStatus } from "../RankStatus.js"
import { checkInputLength, checkNow, checkRequestFields } from "../RequestChecks.js"
import { checkNotInFlight } from "./internal/checkRequest.js"
import { freeKvTokensFromUsage, kvFeasible } from "./internal/FreeKv.js"
import {
  chargeLedger,
  chargeOf,
  emptyLedger,
  finishLedger,
  type LedgerHolder,
  type LedgerState,
  ledgerHolds,
  observeLedger,
  setLedgerStatus
} from "./internal/InflightCharges.js"

/**
 * Options of {@link withKvAdmission}. Every field is optional.
 *
 * - `poolTokens`: the KV pool size in tokens of every rank, for rows that carry only
 *   `kvCacheUsage` (vLLM's coordinator publishes no token counts): free KV is then
 *   `floor(poolTokens x (1 - kvCacheUsage))`. Without it such rows give no free KV (never excluded).
 * - `clientCount` (1): front ends sharing the ranks; each routed prompt is subtracted from its
 *   rank's free KV `clientCount` times until a snapshot covers it.
 * - `inclusionMarginSeconds` (0): as in `ledger-balanced`.
 * - `name`: default the inner name + `"+kv-admission"`.
 *
 * @category own policies
 * @since 0.4.0
 */
export interface KvAdmissionOptions {
  readonly poolTokens?: number | undefined
  readonly clientCount?: number | undefined
  readonly inclusionMarginSeconds?: number | undefined
  readonly name?: string | undefined
}

/**
 * The state of a {@link withKvAdmission} policy: the inner policy's state and the in-flight ledger
 * (newest row per rank, prompts routed since, true health); `ledger` is `undefined` when the inner
 * policy's own ledger is read instead (an inner `withStaleness` with the same `clientCount` and
 * margin: one ledger, the requests tracked once). Opaque and immutable.
 *
 * @category own policies
 * @since 0.4.0
 */
export interface KvAdmissionState<S> {
  readonly inner: S
  readonly ledger: LedgerState | undefined
}

/**
 * A {@link withKvAdmission} policy, and where the in-flight ledger it reads is (`inflightLedger`,
 * for a wrapper around it).
 *
 * @category own policies
 * @since 0.6.0
 */
export interface KvAdmissionPolicy<S> extends Policy<KvAdmissionState<S>> {
  readonly inflightLedger: LedgerHolder<KvAdmissionState<S>>
}

/**
 * Wrap `policy` with KV-aware admission.
 *
 * **What it guarantees**: a request never goes to a rank whose free KV cannot hold its prompt while
 * some healthy rank's can (the `kvFeasibility` law, for any inner policy). Free KV is each rank's
 * newest row (`kvAvailableTokens` + `kvEvictableTokens`, else capacity minus `numUsedTokens`, else
 * the pool times `1 - kvCacheUsage`) minus the prompts routed to it since that row (times
 * `clientCount`); a rank whose free KV is unknown counts as not holding it.
 *
 * **How**: when some rank can hold the prompt, the inner policy routes with every other rank marked
 * unhealthy for that one request (its own health is restored after), so it chooses among the
 * feasible ranks by its own rule. An inner policy that ignores health (SGLang's TOTAL_* methods,
 * FOLLOW_BOOTSTRAP_ROOM) may still pick an infeasible rank: the request is then routed again,
 * pinned (`routedDpRank`) to the feasible rank with the most free KV, so the inner policy's own
 * bookkeeping follows the request (`details.kvAdmission.overridden`). When no rank can hold it
 * (or no rank reports free KV), the inner policy decides alone. A pinned request is left as it is.
 *
 * **One ledger**: around a policy that keeps the in-flight ledger itself (`withStaleness`, with the
 * same `clientCount` and margin) it reads that one (its charges are the same requests, charged
 * alike) instead of tracking every request a second time.
 *
 * **When to use**: around a policy that reads no free KV (vLLM's balancer, SGLang's methods, most
 * peer routers), so long prompts stop queueing behind a full KV pool while another rank has room.
 *
 * Upstream for comparison: none of the field's balancers reads free tokens (vLLM's guard and
 * SGLang's methods read usage or counts; fault case S07, vLLM #36748); SGLang's scheduler admits
 * from the rank's own queue only once the prompt fits (`schedule_policy.py`, `PrefillAdder`).
 *
 * Errors are the inner policy's, and `InvalidInput` naming `clientCount` on every route when
 * `checkClientOptions` refuses it. `explanation.details.kvAdmission` lists the `feasible` ranks.
 *
 * @example
 * ```ts
 * import { totalRequests, withKvAdmission } from "@loadledger/policies"
 * const p = withKvAdmission(totalRequests)
 * const rows = [
 *   { dpRank: 0, timestamp: 1, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0, kvAvailableTokens: 100 },
 *   { dpRank: 1, timestamp: 1, numRunningReqs: 9, numWaitingReqs: 0, numTotalTokens: 0, kvAvailableTokens: 5000 }
 * ]
 * const s = p.observe(p.init(2), rows, 1)
 * // TOTAL_REQUESTS alone would take idle rank 0, whose free KV cannot hold 1000 tokens
 * const r = p.route(s, { requestId: "a", inputLength: 1000 }, 1)
 * r._tag === "Routed" && r.rank // => 1
 * p.route(s, { requestId: "b", inputLength: 50 }, 1)._tag === "Routed" // => true
 * ```
 *
 * @category own policies
 * @since 0.4.0
 */
export const withKvAdmission = <S>(
  policy: Policy<S>,
  options: KvAdmissionOptions = {}
): KvAdmissionPolicy<S> => {
  const { clientCount: scale, error: optionsError } = clientsOf({ clientCount: options.clientCount })
  const margin = options.inclusionMarginSeconds ?? 0
  const usage = { poolTokens: options.poolTokens }
  const held = (policy as { readonly inflightLedger?: LedgerHolder<S> }).inflightLedger
  // the inner policy's ledger, when it charges the same requests alike
  const shared = held !== undefined && held.scale === scale && held.margin === margin ? held : undefined
  const ledgerOf = (s: KvAdmissionState<S>): LedgerState => s.ledger ?? shared!.of(s.inner)

  const charged = (
    s: KvAdmissionState<S>,
    inner: S,
    rank: number,
    request: RouteRequest,
    now: number
  ): KvAdmissionState<S> => ({
    inner,
    ledger: s.ledger === undefined ? undefined : chargeLedger(s.ledger, rank, chargeOf(request, now, scale))
  })
  // results are built field by field: a policy's result may be a class instance with getters
  const failed = (s: KvAdmissionState<S>, out: PolicyError, restore: boolean): PolicyError => {
    const e = policyError(out.reason, out.message, out.field)
    if (out.state === undefined) return e
    const inner = restore ? policy.setStatus(out.state as S, ledgerOf(s).healthy) : (out.state as S)
    return { ...e, state: { ...s, inner } }
  }
  const routed = (
    rank: number,
    state: KvAdmissionState<S>,
    e: Explanation,
    kvAdmission: Record<string, unknown> | undefined
  ): RouteResult<KvAdmissionState<S>> => ({
    _tag: "Routed",
    rank,
    state,
    explanation: kvAdmission === undefined ? e : { ...e, details: { ...e.details, kvAdmission } }
  })

  const route = (
    s: KvAdmissionState<S>,
    request: RouteRequest,
    now: number
  ): RouteResult<KvAdmissionState<S>> => {
    if (optionsError !== undefined) return optionsError
    const ledger = ledgerOf(s)
    const bad =
      checkInputLength(request.inputLength) ??
      checkNow(now) ??
      checkRequestFields(request) ??
      checkNotInFlight(request, ledgerHolds(ledger, request.requestId))
    if (bad !== undefined) return bad
    const fits =
      request.routedDpRank === undefined ? kvFeasible(ledger, request.inputLength, usage) : undefined
    if (fits === undefined) {
      const out = policy.route(s.inner, request, now)
      return out._tag === "Routed"
        ? routed(out.rank, charged(s, out.state, out.rank, request, now), out.explanation, undefined)
        : failed(s, out, false)
    }
    const healthy = ledger.healthy
    const out = policy.route(policy.setStatus(s.inner, fits), request, now)
    if (out._tag !== "Routed") return failed(s, out, true)
    const feasible: Array<number> = []
    for (let r = 0; r < fits.length; r++) if (fits[r]) feasible.push(r)
    if (fits[out.rank] === true)
      return routed(
        out.rank,
        charged(s, policy.setStatus(out.state, healthy), out.rank, request, now),
        out.explanation,
        {
          feasible,
          overridden: false
        }
      )
    // the inner policy ignored the mask: route again, pinned to the feasible rank with the most free KV
    let best = feasible[0]!
    let bestFree = Number.NEGATIVE_INFINITY
    for (const r of feasible) {
      const free = freeKvTokensFromUsage(ledger.snapshots[r], usage.poolTokens)! - ledger.chargedTokens[r]!
      if (free > bestFree) {
        best = r
        bestFree = free
      }
    }
    const again = policy.route(s.inner, { ...request, routedDpRank: best }, now)
    if (again._tag !== "Routed") return failed(s, again, false)
    return routed(again.rank, charged(s, again.state, again.rank, request, now), again.explanation, {
      feasible,
      overridden: true,
      innerChoice: out.rank
    })
  }

  return {
    name: options.name ?? `${policy.name}+kv-admission`,
    inflightLedger: { of: ledgerOf, scale, margin },
    init: (dpSize) => ({
      inner: policy.init(dpSize),
      ledger: shared === undefined ? emptyLedger(dpSize) : undefined
    }),
    observe: (s, loads, now) =>
      Number.isFinite(now)
        ? {
            inner: policy.observe(s.inner, loads, now),
            ledger: s.ledger === undefined ? undefined : observeLedger(s.ledger, loads, margin, now)
          }
        : s,
    route,
    finish: (s, requestIds, now) => ({
      inner: policy.finish(s.inner, requestIds, now),
      ledger: s.ledger === undefined ? undefined : finishLedger(s.ledger, requestIds)
    }),
    setStatus: (s, status) =>
      checkStatus(status, ledgerOf(s).dpSize) !== undefined
        ? s
        : {
            inner: policy.setStatus(s.inner, status),
            ledger: s.ledger === undefined ? undefined : setLedgerStatus(s.ledger, status)
          }
  }
}
