/**
 * The in-flight charges of loadledger's own policies.
 *
 * @internal
 */

import { packed } from "../../internal/packed.js"
import type { RankLoad, RouteRequest } from "../../Policy.js"
import { checkStatus } from "../../RankStatus.js"
import {
  type ChargeEdit,
  countInexact,
  isExact,
  isOrdered,
  liveNodes,
  recount,
  relink
} from "./ChargeLists.js"
import { emptyTrie, getTrie, type HashTrie, setTrie } from "./HashTrie.js"
import {
  type Charge,
  type ChargeList,
  type Held,
  type IdEntry,
  type LedgerState,
  noCharges
} from "./LedgerState.js"

export type {
  Charge,
  ChargeList,
  ChargeNode,
  Held,
  IdEntry,
  LedgerHolder,
  LedgerState
} from "./LedgerState.js"
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
    snapshots: packed<RankLoad | undefined>(n, undefined),
    snapTimestamp: packed<number>(n, Number.NaN),
    rowTimestamp: packed<number>(n, Number.NaN),
    snapRequests: packed<number>(n, 0),
    snapWaiting: packed<number>(n, 0),
    snapTokens: packed<number>(n, 0),
    snapKv: packed<number>(n, Number.NaN),
    charges: packed<ChargeList>(n, noCharges),
    chargedRequests: packed<number>(n, 0),
    chargedTokens: packed<number>(n, 0),
    healthy: packed<boolean>(n, true),
    byId: emptyTrie(Number.POSITIVE_INFINITY),
    inflightRequests: inflight ? packed<number>(n, 0) : undefined,
    inflightTokens: inflight ? packed<number>(n, 0) : undefined
  }
}

const withCharges = (
  s: LedgerState,
  charges: ReadonlyArray<ChargeList>,
  chargedRequests: ReadonlyArray<number>,
  chargedTokens: ReadonlyArray<number>,
  byId: HashTrie<IdEntry>,
  inflightRequests: ReadonlyArray<number> | undefined,
  inflightTokens: ReadonlyArray<number> | undefined
): LedgerState => ({
  dpSize: s.dpSize,
  snapshots: s.snapshots,
  snapTimestamp: s.snapTimestamp,
  rowTimestamp: s.rowTimestamp,
  snapRequests: s.snapRequests,
  snapWaiting: s.snapWaiting,
  snapTokens: s.snapTokens,
  snapKv: s.snapKv,
  charges,
  chargedRequests,
  chargedTokens,
  healthy: s.healthy,
  byId,
  inflightRequests,
  inflightTokens
})

/** Charge one routed request to `rank` ({@link chargeLedgerMany} of one item). */
export const chargeLedger = (state: LedgerState, rank: number, charge: Charge): LedgerState =>
  chargeLedgerMany(state, [{ charge, rank }])

/** Drop the charges of finished or aborted requests (unknown ids are ignored). */
export const finishLedger = (state: LedgerState, requestIds: ReadonlyArray<string>): LedgerState => {
  let edit: ChargeEdit | undefined
  let byId = state.byId
  let iq: Array<number> | undefined
  let it: Array<number> | undefined
  for (const id of requestIds) {
    const e = getTrie(byId, id)
    const r = e?.rank
    if (r === undefined) continue
    const c = e!.routed
    if (c !== undefined && state.inflightRequests !== undefined) {
      iq ??= state.inflightRequests.slice()
      it ??= state.inflightTokens!.slice()
      iq[r] = Math.max(0, iq[r]! - c.requests)
      it[r] = Math.max(0, it[r]! - c.tokens)
    }
    const xs = e!.live
    let onRank = 0
    for (let i = 0; i < xs.length; i++) if (xs[i]!.rank === r) onRank++
    // no longer held; the charges it has on other ranks (an id reused while charged) stay live
    const rest = onRank === xs.length ? undefined : onRank === 0 ? xs : xs.filter((x) => x.rank !== r)
    byId = setTrie(
      byId,
      id,
      rest === undefined ? undefined : { rank: undefined, live: rest, routed: undefined }
    )
    if (onRank === 0) continue
    edit ??= {
      charges: state.charges.slice(),
      chargedRequests: state.chargedRequests.slice(),
      chargedTokens: state.chargedTokens.slice(),
      byId
    }
    const list = edit.charges[r]!
    let q = edit.chargedRequests[r]!
    let t = edit.chargedTokens[r]!
    let inexact = list.inexact
    for (const x of xs) {
      if (x.rank !== r) continue
      q -= x.charge.requests
      t -= x.charge.tokens
      if (!isExact(x.charge)) inexact--
    }
    const liveLeft = list.live - onRank
    const dead = list.dead + onRank
    if (liveLeft === 0) {
      edit.charges[r] = noCharges
      edit.chargedRequests[r] = 0
      edit.chargedTokens[r] = 0
    } else if (list.inexact > 0 || dead > 32 + liveLeft) {
      // recount in routing order (inexact sums), or compact the tombstones away (amortized O(1))
      const kept = liveNodes(byId, list.head)
      if (list.inexact > 0) [q, t] = recount(kept)
      const compact = dead > 32 + liveLeft
      edit.charges[r] = {
        head: compact ? relink(kept) : list.head,
        live: liveLeft,
        dead: compact ? 0 : dead,
        inexact: countInexact(kept),
        ordered: compact ? list.ordered || isOrdered(kept) : list.ordered
      }
      edit.chargedRequests[r] = q
      edit.chargedTokens[r] = t
    } else {
      edit.charges[r] = { head: list.head, live: liveLeft, dead, inexact, ordered: list.ordered }
      edit.chargedRequests[r] = q
      edit.chargedTokens[r] = t
    }
  }
  if (byId === state.byId) return state
  return withCharges(
    state,
    edit?.charges ?? state.charges,
    edit?.chargedRequests ?? state.chargedRequests,
    edit?.chargedTokens ?? state.chargedTokens,
    byId,
    iq ?? state.inflightRequests,
    it ?? state.inflightTokens
  )
}

/** Whether `requestId` holds a charge (routed, not finished). */
export const ledgerHolds = (state: LedgerState, requestId: string): boolean =>
  getTrie(state.byId, requestId)?.rank !== undefined

/** Replace health. */
export const setLedgerStatus = (state: LedgerState, status: ReadonlyArray<boolean>): LedgerState =>
  checkStatus(status, state.dpSize) === undefined ? { ...state, healthy: [...status] } : state

/** Charge several routed requests in order (each `Held` names its charge and rank). */
export const chargeLedgerMany = (state: LedgerState, items: ReadonlyArray<Held>): LedgerState => {
  if (items.length === 0) return state
  const charges = state.charges.slice()
  const chargedRequests = state.chargedRequests.slice()
  const chargedTokens = state.chargedTokens.slice()
  let byId = state.byId
  const iq = state.inflightRequests?.slice()
  const it = state.inflightTokens?.slice()
  for (const held of items) {
    const { charge, rank } = held
    const list = charges[rank]!
    charges[rank] = {
      head: { held, next: list.head },
      live: list.live + 1,
      dead: list.dead,
      inexact: isExact(charge) ? list.inexact : list.inexact + 1,
      ordered:
        list.ordered &&
        (list.head === undefined || list.head.held.charge.routedAtSeconds <= charge.routedAtSeconds)
    }
    chargedRequests[rank] = chargedRequests[rank]! + charge.requests
    chargedTokens[rank] = chargedTokens[rank]! + charge.tokens
    const prev = getTrie(byId, charge.requestId)?.live
    byId = setTrie(byId, charge.requestId, {
      rank,
      live: prev === undefined || prev.length === 0 ? [held] : [...prev, held],
      routed: iq === undefined ? undefined : charge
    })
    if (iq !== undefined) {
      iq[rank] = iq[rank]! + charge.requests
      it![rank] = it![rank]! + charge.tokens
    }
  }
  return withCharges(state, charges, chargedRequests, chargedTokens, byId, iq, it)
}
