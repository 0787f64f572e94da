/**
 * `withKvAdmission`: a `Policy -> Policy` candidate filter: only ranks whose free KV holds the
 * prompt, while any does.
 *
 * @since 0.4.0
 */

import { clientsOf } from "../internal/clients.js"
import type { Explanation, Policy, PolicyError, RouteRequest, RouteResult } from "../Policy.js"
import { checkStatus } from "../RankStatus.js"
import { checkWrapped, innerError } from "./internal/checkRequest.js"
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

  // the inner state back to the ledger's health when it routed under the mask
  const failed = (s: KvAdmissionState<S>, out: PolicyError, restore: boolean): PolicyError =>
    innerError(out, (inner: S) => ({
      ...s,
      inner: restore ? policy.setStatus(inner, ledgerOf(s).healthy) : inner
    }))
  /** The inner policy's placement (`inner`: its state to keep), charged; `kvAdmission` into the details. */
  const routed = (
    s: KvAdmissionState<S>,
    out: { readonly rank: number; readonly explanation: Explanation },
    inner: S,
    request: RouteRequest,
    now: number,
    kvAdmission?: Record<string, unknown>
  ): RouteResult<KvAdmissionState<S>> => {
    const e = out.explanation
    const ledger =
      s.ledger === undefined ? undefined : chargeLedger(s.ledger, out.rank, chargeOf(request, now, scale))
    return {
      _tag: "Routed",
      rank: out.rank,
      state: { inner, ledger },
      explanation: kvAdmission === undefined ? e : { ...e, details: { ...e.details, kvAdmission } }
    }
  }

  const route = (
    s: KvAdmissionState<S>,
    request: RouteRequest,
    now: number
  ): RouteResult<KvAdmissionState<S>> => {
    if (optionsError !== undefined) return optionsError
    const ledger = ledgerOf(s)
    const bad = checkWrapped(request, now, (id) => ledgerHolds(ledger, id))
    if (bad !== undefined) return bad
    const fits =
      request.routedDpRank === undefined ? kvFeasible(ledger, request.inputLength, usage) : undefined
    if (fits === undefined) {
      const out = policy.route(s.inner, request, now)
      return out._tag === "Routed" ? routed(s, out, out.state, request, now) : failed(s, out, false)
    }
    const healthy = ledger.healthy
    const out = policy.route(policy.setStatus(s.inner, fits), request, now)
    if (out._tag !== "Routed") return failed(s, out, true)
    const feasible: Array<number> = []
    for (let r = 0; r < fits.length; r++) if (fits[r]) feasible.push(r)
    if (fits[out.rank] === true)
      return routed(s, out, policy.setStatus(out.state, healthy), request, now, {
        feasible,
        overridden: false
      })
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
    return routed(s, again, again.state, request, now, { feasible, overridden: true, innerChoice: out.rank })
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
