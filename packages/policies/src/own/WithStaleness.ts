/**
 * `withStaleness`: give any policy speculative charges, an in-flight floor, snapshot-age awareness
 * and multi-front-end compensation, by rewriting the rows it observes.
 *
 * @since 0.4.0
 */

import { clientsOf } from "../internal/clients.js"
import { type Policy, policyError, type RankLoad, type RouteRequest, type RouteResult } from "../Policy.js"
import { checkStatus } from "../RankStatus.js"
import { checkInputLength, checkNow, checkRequestFields } from "../RequestChecks.js"
import { checkNotInFlight } from "./internal/checkRequest.js"
import { addInflight, emptyInflight, finishInflight, type Inflight } from "./internal/Inflight.js"
import {
  chargeLedger,
  chargeOf,
  classifyLoad,
  emptyLedger,
  finishLedger,
  type LedgerHolder,
  type LedgerState,
  ledgerHolds,
  observeLedger,
  setLedgerStatus
} from "./internal/InflightCharges.js"

/**
 * Options of {@link withStaleness}. Every field is optional.
 *
 * - `clientCount` (1): front ends routing to the same ranks on the same snapshots; each request this
 *   one routes is charged `clientCount` times (it assumes the others route alike until the next
 *   snapshot, as the live router's option and vLLM's `C * inflight` do), and the in-flight floor is
 *   `clientCount` times this front end's in-flight work.
 * - `inclusionMarginSeconds` (0): a snapshot stamped `T` covers the requests routed before `T - margin`.
 * - `inflightFloor` (true): keep the in-flight floor.
 * - `name`: the wrapped policy's name (default: the inner name + `"+staleness"`).
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
 * The state of a {@link withStaleness} policy: the inner policy's state, the in-flight ledger
 * (newest snapshot per rank and the charges no snapshot covers yet) and this front end's in-flight
 * requests. Opaque and immutable.
 *
 * @category own policies
 * @since 0.4.0
 */
export interface StalenessState<S> {
  readonly inner: S
  readonly ledger: LedgerState
  readonly inflight: Inflight
}

/**
 * A {@link withStaleness} policy, and where its in-flight ledger is (`inflightLedger`: a wrapper
 * around it, `withKvAdmission`, reads the charges there instead of tracking the requests again).
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
const adjustedRow = (
  ledger: LedgerState,
  inflight: Inflight | undefined,
  scale: number,
  r: number
): RankLoad | undefined => {
  const row = ledger.snapshots[r]
  if (row === undefined || row.unknown !== undefined) return row
  const q = ledger.chargedRequests[r]!
  const t = ledger.chargedTokens[r]!
  const fq = inflight === undefined ? 0 : scale * inflight.requests[r]!
  const ft = inflight === undefined ? 0 : scale * inflight.tokens[r]!
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
 * Wrap `policy` so it routes on the load ledger's belief instead of the bare snapshots.
 *
 * **What it adds**, whatever the inner policy (it only rewrites the rows the inner policy observes):
 * - **speculative charges**: each request this front end routes is added to its rank's row
 *   (`numWaitingReqs` +1, `numTotalTokens` / `numUsedTokens` / `numWaitingUncachedTokens` + the
 *   prompt, `kvAvailableTokens` - the prompt, `kvCacheUsage` + prompt / capacity when the row carries
 *   a capacity), re-observed by the inner policy right after the route, so a burst between two
 *   snapshots sees its own earlier requests;
 * - **snapshot-age awareness**: a charge stays until a snapshot stamped after its routing time
 *   (minus the margin) covers it, then drops (the row now includes it); a row older than the one
 *   held is never applied (the inner policy is given the newest row instead); rows keep their own
 *   `timestamp`, so the inner policy's staleness rules still see the snapshot's age;
 * - **in-flight floor**: a rank never looks emptier than what this front end has in flight to it
 *   (routed, not finished): `running + waiting >= clientCount x in-flight requests`, `numTotalTokens
 *   >= clientCount x in-flight prompt tokens`, whatever a lagging snapshot says;
 * - **multi-front-end compensation**: with `clientCount` n, each charge counts n times.
 *
 * **When to use**: around a policy that replaces its view at every observe and keeps no charges of
 * its own beyond the next snapshot: SGLang's and vLLM's balancers (vLLM's local bump is erased by
 * every coordinator broadcast, vLLM #48027, fault case S02) and most peer routers, or
 * `makePowerOfChoices` / `makeScored` with `chargeScale: 0`. Not around `ledger-balanced`,
 * `uncached-tokens`, `cache-affinity` or a charging `makeScored`: they keep charges routed after the
 * snapshot themselves, so each would count twice.
 *
 * Upstream for comparison: vLLM's front end keeps `max(C * inflight, waiting + running)` and a
 * local `waiting += C` bump that the next coordinator broadcast overwrites
 * (`vllm/v1/engine/core_client.py` @ 00080ee1); `ledger-balanced` keeps charges the same way as
 * this wrapper, for its own scoring only.
 *
 * Unknown rows and ranks that never published are passed as they are (nothing to add to); invalid
 * rows (a rank out of range, ...) are passed on for the inner policy to report. `finish` drops the
 * request's charge and in-flight count and re-observes its rank. Errors are the inner policy's,
 * and `InvalidInput` naming `clientCount` on every route when `checkClientOptions` refuses it.
 * `explanation.details.staleness` says what was added to the chosen rank's row.
 *
 * @example
 * ```ts
 * import { totalRequests, withStaleness } from "@loadledger/policies"
 * const p = withStaleness(totalRequests, { clientCount: 2 })
 * const rows = [0, 1].map((dpRank) => ({ dpRank, timestamp: 1, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0 }))
 * let s = p.observe(p.init(2), rows, 1)
 * const a = p.route(s, { requestId: "a", inputLength: 100 }, 2)
 * a._tag === "Routed" && a.rank // => 0
 * // a counts twice on rank 0 (two front ends) until a snapshot stamped after 2 s covers it
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
  const rowsFor = (ledger: LedgerState, inflight: Inflight, ranks: Iterable<number>): Array<RankLoad> => {
    const out: Array<RankLoad> = []
    for (const r of ranks) {
      const row = adjustedRow(ledger, floorOn ? inflight : undefined, scale, r)
      if (row !== undefined) out.push(row)
    }
    return out
  }
  const refresh = (
    inner: S,
    ledger: LedgerState,
    inflight: Inflight,
    ranks: Iterable<number>,
    now: number
  ): S => {
    const rows = rowsFor(ledger, inflight, ranks)
    return rows.length === 0 ? inner : policy.observe(inner, rows, now)
  }

  const route = (
    s: StalenessState<S>,
    request: RouteRequest,
    now: number
  ): RouteResult<StalenessState<S>> => {
    if (optionsError !== undefined) return optionsError
    const bad =
      checkInputLength(request.inputLength) ??
      checkNow(now) ??
      checkRequestFields(request) ??
      checkNotInFlight(request, ledgerHolds(s.ledger, request.requestId))
    if (bad !== undefined) return bad
    const out = policy.route(s.inner, request, now)
    if (out._tag !== "Routed") {
      // built field by field: a policy's result may be a class instance with getters
      const e = policyError(out.reason, out.message, out.field)
      return out.state === undefined ? e : { ...e, state: { ...s, inner: out.state as S } }
    }
    const r = out.rank
    const ledger = chargeLedger(s.ledger, r, chargeOf(request, now, scale))
    const inflight = addInflight(s.inflight, request.requestId, r, request.inputLength)
    const inner = refresh(out.state, ledger, inflight, [r], now)
    const e = out.explanation
    return {
      _tag: "Routed",
      rank: r,
      state: { inner, ledger, inflight },
      explanation: {
        ...e,
        details: {
          ...e.details,
          staleness: {
            chargedRequests: ledger.chargedRequests[r],
            chargedTokens: ledger.chargedTokens[r],
            inflightRequests: inflight.requests[r]
          }
        }
      }
    }
  }

  return {
    name: options.name ?? `${policy.name}+staleness`,
    inflightLedger: { of: (s) => s.ledger, scale, margin },
    init: (dpSize) => {
      const ledger = emptyLedger(dpSize)
      return { inner: policy.init(dpSize), ledger, inflight: emptyInflight(ledger.dpSize) }
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
      const rows = [...rowsFor(ledger, s.inflight, ranks), ...invalid]
      const inner = rows.length === 0 ? s.inner : policy.observe(s.inner, rows, now)
      return { ...s, inner, ledger }
    },
    route,
    finish: (s, requestIds, now) => {
      const ranks: Array<number> = []
      const inflight = finishInflight(s.inflight, requestIds, ranks)
      const ledger = finishLedger(s.ledger, requestIds)
      const finished = policy.finish(s.inner, requestIds, now)
      if (ledger === s.ledger && inflight === s.inflight)
        return finished === s.inner ? s : { ...s, inner: finished }
      return { inner: refresh(finished, ledger, inflight, new Set(ranks), now), ledger, inflight }
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
