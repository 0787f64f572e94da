/**
 * `withKvAdmission`: a `Policy -> Policy` candidate filter: only ranks whose free KV holds the
 * prompt, while any does.
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
  chargedTokensOf,
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
 * Options of {@link withKvAdmission}, all optional: `poolTokens` (every rank's KV pool, for rows
 * with only `kvCacheUsage`: free is `floor(poolTokens x (1 - usage))`), `clientCount` (1),
 * `inclusionMarginSeconds` (0), `name`.
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
 * The state of a {@link withKvAdmission} policy: the inner state and the ledger (`undefined` when
 * the inner `withStaleness`'s is read: one ledger). Opaque.
 *
 * @category own policies
 * @since 0.4.0
 */
export interface KvAdmissionState<S> {
  readonly inner: S
  readonly ledger: LedgerState | undefined
}

/**
 * A {@link withKvAdmission} policy and where the ledger it reads is (`inflightLedger`).
 *
 * @category own policies
 * @since 0.6.0
 */
export interface KvAdmissionPolicy<S> extends Policy<KvAdmissionState<S>> {
  readonly inflightLedger: LedgerHolder<KvAdmissionState<S>>
}

/**
 * KV admission, as a candidate filter: while some healthy rank's free KV (its newest row minus
 * the prompt tokens routed since, x `clientCount`) holds the prompt, the inner policy routes with
 * every other rank marked unhealthy for that request; an inner policy that ignores health is
 * routed again, pinned to the feasible rank with the most free KV (`details.kvAdmission.overridden`).
 * Around `withStaleness` (same `clientCount` and margin) it reads that ledger.
 *
 * **When to use**: around a policy that reads no free KV (vLLM's balancer, SGLang's methods; fault
 * S07, vLLM #36748; SGLang admits once the prompt fits, `schedule_policy.py` `PrefillAdder`).
 * Errors: the inner policy's, and `InvalidInput` naming `clientCount`.
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
      const free = freeKvTokensFromUsage(ledger.snapshots[r], usage.poolTokens)! - chargedTokensOf(ledger, r)
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
