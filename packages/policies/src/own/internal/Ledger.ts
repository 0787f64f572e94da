import type { RankLoad } from "../../Policy.js"
import type { RankView } from "../RankView.js"

/**
 * One routed request charged to a rank: `requests` and `tokens` are added to the rank's published
 * load until a snapshot stamped after `routedAtSeconds` (plus the inclusion margin) arrives, or the
 * request finishes.
 *
 * @internal
 */
export interface Charge {
  readonly requestId: string
  readonly routedAtSeconds: number
  readonly requests: number
  readonly tokens: number
}

/**
 * The in-flight-charging ledger both loadledger policies build on: the newest snapshot per rank,
 * the charges not yet provably included in it, their per-rank sums, and per-rank health.
 *
 * @internal
 */
export interface LedgerState {
  readonly dpSize: number
  readonly snapshots: ReadonlyArray<RankLoad | undefined>
  readonly charges: ReadonlyArray<ReadonlyArray<Charge>>
  readonly chargedRequests: ReadonlyArray<number>
  readonly chargedTokens: ReadonlyArray<number>
  readonly healthy: ReadonlyArray<boolean>
}

/** A fresh ledger for `dpSize` ranks: nothing published, nothing charged, all healthy. @internal */
export const emptyLedger = (dpSize: number): LedgerState => {
  const n = Number.isInteger(dpSize) && dpSize > 0 ? dpSize : 0
  return {
    dpSize: n,
    snapshots: new Array<RankLoad | undefined>(n).fill(undefined),
    charges: new Array<ReadonlyArray<Charge>>(n).fill([]),
    chargedRequests: new Array<number>(n).fill(0),
    chargedTokens: new Array<number>(n).fill(0),
    healthy: new Array<boolean>(n).fill(true)
  }
}

const isCount = (x: number): boolean => Number.isFinite(x) && x >= 0

/** True when a snapshot row is usable: rank in range, counts finite and non-negative, kv in [0, 1]. @internal */
export const validLoad = (l: RankLoad, dpSize: number): boolean =>
  Number.isInteger(l.dpRank) &&
  l.dpRank >= 0 &&
  l.dpRank < dpSize &&
  Number.isFinite(l.timestamp) &&
  isCount(l.numRunningReqs) &&
  isCount(l.numWaitingReqs) &&
  isCount(l.numTotalTokens) &&
  (l.kvCacheUsage === undefined ||
    (Number.isFinite(l.kvCacheUsage) && l.kvCacheUsage >= 0 && l.kvCacheUsage <= 1))

const sums = (cs: ReadonlyArray<Charge>): readonly [number, number] => {
  let r = 0
  let t = 0
  for (const c of cs) {
    r += c.requests
    t += c.tokens
  }
  return [r, t]
}

/**
 * Fold snapshots in. A row older than the one held is ignored (never an overwrite with older data);
 * a row is applied when its timestamp is equal or newer. Charges routed strictly before
 * `timestamp - inclusionMarginSeconds` are provably included in the row and are dropped; the rest
 * stay. Invalid rows are ignored (the rank keeps its previous view).
 *
 * @internal
 */
export const observeLedger = (
  state: LedgerState,
  loads: ReadonlyArray<RankLoad>,
  inclusionMarginSeconds: number
): LedgerState => {
  let snapshots: Array<RankLoad | undefined> | undefined
  let charges: Array<ReadonlyArray<Charge>> | undefined
  let chargedRequests: Array<number> | undefined
  let chargedTokens: Array<number> | undefined
  for (const l of loads) {
    if (!validLoad(l, state.dpSize)) continue
    const r = l.dpRank
    const held = (snapshots ?? state.snapshots)[r]
    if (held !== undefined && l.timestamp < held.timestamp) continue
    snapshots ??= [...state.snapshots]
    snapshots[r] = l
    const cs = (charges ?? state.charges)[r]!
    const kept = cs.filter((c) => !(c.routedAtSeconds + inclusionMarginSeconds < l.timestamp))
    if (kept.length !== cs.length) {
      charges ??= [...state.charges]
      chargedRequests ??= [...state.chargedRequests]
      chargedTokens ??= [...state.chargedTokens]
      charges[r] = kept
      const [q, t] = sums(kept)
      chargedRequests[r] = q
      chargedTokens[r] = t
    }
  }
  if (snapshots === undefined) return state
  return {
    ...state,
    snapshots,
    charges: charges ?? state.charges,
    chargedRequests: chargedRequests ?? state.chargedRequests,
    chargedTokens: chargedTokens ?? state.chargedTokens
  }
}

/** Charge one routed request to `rank` (copies only that rank's charge list). @internal */
export const chargeLedger = (state: LedgerState, rank: number, charge: Charge): LedgerState => {
  const charges = [...state.charges]
  charges[rank] = [...state.charges[rank]!, charge]
  const chargedRequests = [...state.chargedRequests]
  chargedRequests[rank] = chargedRequests[rank]! + charge.requests
  const chargedTokens = [...state.chargedTokens]
  chargedTokens[rank] = chargedTokens[rank]! + charge.tokens
  return { ...state, charges, chargedRequests, chargedTokens }
}

/** Drop the charges of finished or aborted requests (unknown ids are ignored). @internal */
export const finishLedger = (state: LedgerState, requestIds: ReadonlyArray<string>): LedgerState => {
  if (requestIds.length === 0) return state
  const ids = new Set(requestIds)
  let changed = false
  const charges = state.charges.map((cs) => {
    if (!cs.some((c) => ids.has(c.requestId))) return cs
    changed = true
    return cs.filter((c) => !ids.has(c.requestId))
  })
  if (!changed) return state
  return {
    ...state,
    charges,
    chargedRequests: charges.map((cs) => sums(cs)[0]),
    chargedTokens: charges.map((cs) => sums(cs)[1])
  }
}

/** Replace health; a status of the wrong length is ignored (as upstream). @internal */
export const setLedgerStatus = (state: LedgerState, status: ReadonlyArray<boolean>): LedgerState =>
  status.length === state.dpSize ? { ...state, healthy: [...status] } : state

/** Compute every rank's view at `now`. @internal */
export const ledgerView = (
  state: LedgerState,
  now: number,
  staleAfterSeconds: number
): ReadonlyArray<RankView> => {
  const n = state.dpSize
  let freshRequests = -1
  let freshTokens = -1
  const fresh: Array<boolean> = new Array(n)
  for (let r = 0; r < n; r++) {
    const s = state.snapshots[r]
    const ok = s !== undefined && now - s.timestamp <= staleAfterSeconds
    fresh[r] = ok
    if (ok) {
      freshRequests = Math.max(freshRequests, s.numRunningReqs + s.numWaitingReqs)
      freshTokens = Math.max(freshTokens, s.numTotalTokens)
    }
  }
  const out: Array<RankView> = new Array(n)
  for (let r = 0; r < n; r++) {
    const s = state.snapshots[r]
    const ownRequests = s === undefined ? 0 : s.numRunningReqs + s.numWaitingReqs
    const ownTokens = s === undefined ? 0 : s.numTotalTokens
    const baseRequests = fresh[r] || freshRequests < 0 ? ownRequests : Math.max(ownRequests, freshRequests)
    const baseTokens = fresh[r] || freshTokens < 0 ? ownTokens : Math.max(ownTokens, freshTokens)
    out[r] = {
      requests: baseRequests + state.chargedRequests[r]!,
      tokens: baseTokens + state.chargedTokens[r]!,
      waiting: (s === undefined ? 0 : s.numWaitingReqs) + state.chargedRequests[r]!,
      kvCacheUsage: s?.kvCacheUsage,
      ageSeconds: s === undefined ? undefined : now - s.timestamp,
      stale: s !== undefined && !fresh[r],
      unknown: s === undefined
    }
  }
  return out
}
