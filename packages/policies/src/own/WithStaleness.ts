/**
 * `withStaleness`: a `Policy -> Policy` view transformer: the inner policy observes each row plus
 * the ledger's charges and in-flight floor.
 *
 * @since 0.4.0
 */

import { clientsOf } from "../internal/clients.js"
import type { Policy, RankLoad, RouteRequest, RouteResult } from "../Policy.js"
import { checkStatus } from "../RankStatus.js"
import { checkWrapped, innerError } from "./internal/checkRequest.js"
import {
  chargeColumns,
  chargedRequestsOf,
  chargedTokensOf,
  chargeLedger,
  chargeOf,
  classifyLoad,
  emptyLedger,
  finishLedger,
  type LedgerHolder,
  type LedgerState,
  ledgerHolds,
  ledgerRankOf,
  observeLedger,
  setLedgerStatus
} from "./internal/InflightCharges.js"

/**
 * Options of {@link withStaleness}, all optional: `clientCount` (1: each charge and the floor count
 * that many times), `inclusionMarginSeconds` (0), `inflightFloor` (true), `name`.
 *
 * @category own policies
 * @since 0.4.0
 */
export interface StalenessOptions {
  readonly clientCount?: number | undefined
  readonly inclusionMarginSeconds?: number | undefined
  readonly inflightFloor?: boolean | undefined
  readonly name?: string | undefined
}

/**
 * The state of a {@link withStaleness} policy: the inner state and the in-flight ledger. Opaque.
 *
 * @category own policies
 * @since 0.4.0
 */
export interface StalenessState<S> {
  readonly inner: S
  readonly ledger: LedgerState
}

/**
 * A {@link withStaleness} policy and where its ledger is (`inflightLedger`, read by `withKvAdmission`).
 *
 * @category own policies
 * @since 0.6.0
 */
export interface StalenessPolicy<S> extends Policy<StalenessState<S>> {
  readonly inflightLedger: LedgerHolder<StalenessState<S>>
}

/**
 * What the inner policy sees of rank `r`: its newest row plus the charges no snapshot covers yet,
 * at least the in-flight floor (`undefined` when the rank never published; an `unknown` row as is).
 * Present fields only: an absent field stays absent.
 */
const adjustedRow = (ledger: LedgerState, floorOn: boolean, r: number): RankLoad | undefined => {
  const row = ledger.snapshots[r]
  if (row === undefined || row.unknown !== undefined) return row
  const c = chargeColumns(ledger)
  const q = c.requests[r]!
  const t = c.tokens[r]!
  const fq = floorOn ? c.inflightRequests![r]! : 0
  const ft = floorOn ? c.inflightTokens![r]! : 0
  if (q === 0 && t === 0 && fq === 0 && ft === 0) return row
  const out: { -readonly [K in keyof RankLoad]: RankLoad[K] } = { ...row }
  if (row.numWaitingReqs !== undefined) {
    const running = row.numRunningReqs ?? 0
    out.numWaitingReqs = Math.max(row.numWaitingReqs + q, fq - running)
  }
  if (row.numTotalTokens !== undefined) out.numTotalTokens = Math.max(row.numTotalTokens + t, ft)
  if (t > 0) {
    if (row.numUsedTokens !== undefined) out.numUsedTokens = row.numUsedTokens + t
    if (row.kvAvailableTokens !== undefined) out.kvAvailableTokens = Math.max(0, row.kvAvailableTokens - t)
    if (row.numWaitingUncachedTokens !== undefined)
      out.numWaitingUncachedTokens = row.numWaitingUncachedTokens + t
    const cap = row.tokenCapacity ?? row.maxTotalNumTokens
    if (row.kvCacheUsage !== undefined && cap !== undefined && cap > 0)
      out.kvCacheUsage = Math.min(1, row.kvCacheUsage + t / cap)
  }
  return out
}

/**
 * Staleness, as a view transformer: the inner policy observes each rank's newest row plus the
 * charges no snapshot covers yet (`numWaitingReqs` + requests, `numTotalTokens` and the KV fields
 * + prompt tokens, x `clientCount`), never below this front end's in-flight work; a charge drops
 * once a snapshot stamped after it (minus the margin) arrives, and an older row never overwrites a
 * newer one. Full rules: docs/own-policies.md.
 *
 * **When to use**: around a policy that keeps no charges past the next snapshot (SGLang's and
 * vLLM's balancers: vLLM #48027, fault S02; `vllm/v1/engine/core_client.py` @ 00080ee1); not
 * around a charging own policy (it would count twice). Errors: the inner policy's, and
 * `InvalidInput` naming `clientCount`. `details.staleness`: what was added to the chosen rank.
 *
 * @example
 * ```ts
 * import { totalRequests, withStaleness } from "@loadledger/policies"
 * const p = withStaleness(totalRequests, { clientCount: 2 })
 * const rows = [0, 1].map((dpRank) => ({ dpRank, timestamp: 1, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0 }))
 * let s = p.observe(p.init(2), rows, 1)
 * const a = p.route(s, { requestId: "a", inputLength: 100 }, 2)
 * a._tag === "Routed" && a.rank // => 0
 * if (a._tag === "Routed") s = a.state
 * s.inner.shm[0]?.numWaitingReqs // => 2
 * s = p.observe(s, rows.map((row) => ({ ...row, timestamp: 3 })), 3)
 * // the snapshot covers a, but a has not finished: the in-flight floor keeps it (x 2)
 * s.inner.shm[0]?.numWaitingReqs // => 2
 * s = p.finish(s, ["a"], 4)
 * s.inner.shm[0]?.numWaitingReqs // => 0
 * ```
 *
 * @category own policies
 * @since 0.4.0
 */
export const withStaleness = <S>(policy: Policy<S>, options: StalenessOptions = {}): StalenessPolicy<S> => {
  const { clientCount: scale, error: optionsError } = clientsOf({ clientCount: options.clientCount })
  const margin = options.inclusionMarginSeconds ?? 0
  const floorOn = options.inflightFloor ?? true
  const rowsFor = (ledger: LedgerState, ranks: Iterable<number>): Array<RankLoad> => {
    const out: Array<RankLoad> = []
    for (const r of ranks) {
      const row = adjustedRow(ledger, floorOn, r)
      if (row !== undefined) out.push(row)
    }
    return out
  }
  const refresh = (inner: S, ledger: LedgerState, ranks: Iterable<number>, now: number): S => {
    const rows = rowsFor(ledger, ranks)
    return rows.length === 0 ? inner : policy.observe(inner, rows, now)
  }

  const route = (
    s: StalenessState<S>,
    request: RouteRequest,
    now: number
  ): RouteResult<StalenessState<S>> => {
    if (optionsError !== undefined) return optionsError
    const bad = checkWrapped(request, now, (id) => ledgerHolds(s.ledger, id))
    if (bad !== undefined) return bad
    const out = policy.route(s.inner, request, now)
    if (out._tag !== "Routed") return innerError(out, (inner: S) => ({ ...s, inner }))
    const r = out.rank
    const ledger = chargeLedger(s.ledger, r, chargeOf(request, now, scale))
    const inner = refresh(out.state, ledger, [r], now)
    const e = out.explanation
    return {
      _tag: "Routed",
      rank: r,
      state: { inner, ledger },
      explanation: {
        ...e,
        details: {
          ...e.details,
          staleness: {
            chargedRequests: chargedRequestsOf(ledger, r),
            chargedTokens: chargedTokensOf(ledger, r),
            inflightRequests: chargeColumns(ledger).inflightRequests![r]! / scale
          }
        }
      }
    }
  }

  return {
    name: options.name ?? `${policy.name}+staleness`,
    inflightLedger: { of: (s) => s.ledger, scale, margin },
    init: (dpSize) => {
      return { inner: policy.init(dpSize), ledger: emptyLedger(dpSize, true) }
    },
    observe: (s, loads, now) => {
      if (!Number.isFinite(now)) return s
      const ledger = observeLedger(s.ledger, loads, margin, now)
      const ranks = new Set<number>()
      const invalid: Array<RankLoad> = []
      for (const row of loads) {
        if (classifyLoad(row, ledger.dpSize) === "invalid") invalid.push(row)
        else ranks.add(row.dpRank)
      }
      const rows = [...rowsFor(ledger, ranks), ...invalid]
      const inner = rows.length === 0 ? s.inner : policy.observe(s.inner, rows, now)
      return { ...s, inner, ledger }
    },
    route,
    finish: (s, requestIds, now) => {
      const ranks = new Set<number>()
      for (const id of requestIds) {
        const r = ledgerRankOf(s.ledger, id)
        if (r !== undefined) ranks.add(r)
      }
      const ledger = finishLedger(s.ledger, requestIds)
      const finished = policy.finish(s.inner, requestIds, now)
      if (ledger === s.ledger) return finished === s.inner ? s : { ...s, inner: finished }
      return { inner: refresh(finished, ledger, ranks, now), ledger }
    },
    setStatus: (s, status) =>
      checkStatus(status, s.ledger.dpSize) !== undefined
        ? s
        : {
            ...s,
            inner: policy.setStatus(s.inner, status),
            ledger: setLedgerStatus(s.ledger, status)
          }
  }
}
