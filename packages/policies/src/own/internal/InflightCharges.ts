/**
 * The in-flight charges of loadledger's own policies: the one ledger's operations and reads.
 *
 * @internal
 */

import { packed } from "../../internal/packed.js"
import type { RouteRequest } from "../../Policy.js"
import { checkStatus } from "../../RankStatus.js"
import { type Charge, Charges, chargeTo, finishIds, type LedgerState, type Store } from "./LedgerState.js"

export type { Charge, LedgerHolder, LedgerState } from "./LedgerState.js"
export { classifyLoad, observeLedger } from "./observeLedger.js"

export const chargeOf = (request: RouteRequest, now: number, scale: number): Charge => ({
  requestId: request.requestId,
  routedAtSeconds: now,
  requests: scale,
  tokens: scale * request.inputLength
})

/** A fresh ledger for `dpSize` ranks (`inflight`: also track what is routed and not finished). */
export const emptyLedger = (dpSize: number, inflight = false): LedgerState => {
  const n = Number.isInteger(dpSize) && dpSize > 0 ? dpSize : 0
  return {
    dpSize: n,
    snapshots: packed(n, undefined),
    snapTimestamp: packed(n, Number.NaN),
    rowTimestamp: packed(n, Number.NaN),
    snapRequests: packed(n, 0),
    snapWaiting: packed(n, 0),
    snapTokens: packed(n, 0),
    snapKv: packed(n, Number.NaN),
    snapFree: packed(n, Number.NaN),
    healthy: packed(n, true),
    charges: new Charges(undefined, [], 0, n, inflight)
  }
}

const withCharges = (s: LedgerState, charges: Charges): LedgerState =>
  charges === s.charges
    ? s
    : {
        dpSize: s.dpSize,
        snapshots: s.snapshots,
        snapTimestamp: s.snapTimestamp,
        rowTimestamp: s.rowTimestamp,
        snapRequests: s.snapRequests,
        snapWaiting: s.snapWaiting,
        snapTokens: s.snapTokens,
        snapKv: s.snapKv,
        snapFree: s.snapFree,
        healthy: s.healthy,
        charges
      }

/** Charge one routed request to `rank`. */
export const chargeLedger = (state: LedgerState, rank: number, charge: Charge): LedgerState =>
  withCharges(state, chargeTo(state.charges, rank, charge))

/** Drop the charges of finished or aborted requests (unknown ids are ignored). */
export const finishLedger = (state: LedgerState, requestIds: ReadonlyArray<string>): LedgerState =>
  withCharges(state, finishIds(state.charges, requestIds))

/** Whether `requestId` holds a charge (routed, not finished). */
export const ledgerHolds = (state: LedgerState, requestId: string): boolean =>
  Charges.store(state.charges).ids.has(requestId)

/** The rank `requestId` was routed to (`undefined`: not routed, or finished). */
export const ledgerRankOf = (state: LedgerState, requestId: string): number | undefined =>
  Charges.store(state.charges).ids.get(requestId)?.rank

/** Requests charged to rank `r` that no snapshot includes yet. */
export const chargedRequestsOf = (state: LedgerState, r: number): number =>
  Charges.store(state.charges).requests[r]!

/** Prompt tokens charged to rank `r` that no snapshot includes yet. */
export const chargedTokensOf = (state: LedgerState, r: number): number =>
  Charges.store(state.charges).tokens[r]!

/**
 * Every rank's charged requests and tokens, and the in-flight floor (`undefined` unless the
 * ledger tracks it): the head's own columns, read them before the next operation on this ledger.
 */
export const chargeColumns = (state: LedgerState): Store => Charges.store(state.charges)

/** Replace health. */
export const setLedgerStatus = (state: LedgerState, status: ReadonlyArray<boolean>): LedgerState =>
  checkStatus(status, state.dpSize) === undefined ? { ...state, healthy: [...status] } : state
