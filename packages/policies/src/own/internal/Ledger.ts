import type { RankLoad } from "../../Policy.js"
import type { RankView } from "../RankView.js"
import { emptyTrie, getTrie, type HashTrie, setTrie } from "./HashTrie.js"

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

/** One rank's row: newest snapshot, outstanding charges (routing order) and their sums. @internal */
export interface RankEntry {
  readonly snapshot: RankLoad | undefined
  readonly charges: ReadonlyArray<Charge>
  readonly chargedRequests: number
  readonly chargedTokens: number
}

/**
 * The in-flight-charging ledger both loadledger policies build on: one row per rank, per-rank
 * health, and which rank each request id was charged to (for `finish`; bounded, see `HashTrie`).
 *
 * @internal
 */
export interface LedgerState {
  readonly dpSize: number
  readonly ranks: ReadonlyArray<RankEntry>
  readonly healthy: ReadonlyArray<boolean>
  readonly owner: HashTrie<number>
}

const emptyEntry: RankEntry = { snapshot: undefined, charges: [], chargedRequests: 0, chargedTokens: 0 }

/** A fresh ledger for `dpSize` ranks: nothing published, nothing charged, all healthy. @internal */
export const emptyLedger = (dpSize: number, maxTrackedRequests = 1_000_000): LedgerState => {
  const n = Number.isInteger(dpSize) && dpSize > 0 ? dpSize : 0
  return {
    dpSize: n,
    ranks: new Array<RankEntry>(n).fill(emptyEntry),
    healthy: new Array<boolean>(n).fill(true),
    owner: emptyTrie(maxTrackedRequests)
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

const withCharges = (e: RankEntry, charges: ReadonlyArray<Charge>, snapshot = e.snapshot): RankEntry => {
  let q = 0
  let t = 0
  for (const c of charges) {
    q += c.requests
    t += c.tokens
  }
  return { snapshot, charges, chargedRequests: q, chargedTokens: t }
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
  let ranks: Array<RankEntry> | undefined
  for (const l of loads) {
    if (!validLoad(l, state.dpSize)) continue
    const e = (ranks ?? state.ranks)[l.dpRank]!
    if (e.snapshot !== undefined && l.timestamp < e.snapshot.timestamp) continue
    ranks ??= [...state.ranks]
    const kept = e.charges.filter((c) => !(c.routedAtSeconds + inclusionMarginSeconds < l.timestamp))
    ranks[l.dpRank] = kept.length === e.charges.length ? { ...e, snapshot: l } : withCharges(e, kept, l)
  }
  return ranks === undefined ? state : { ...state, ranks }
}

/** Charge one routed request to `rank` (copies the row array and that rank's charge list). @internal */
export const chargeLedger = (state: LedgerState, rank: number, charge: Charge): LedgerState => {
  const ranks = [...state.ranks]
  const e = state.ranks[rank]!
  ranks[rank] = {
    snapshot: e.snapshot,
    charges: [...e.charges, charge],
    chargedRequests: e.chargedRequests + charge.requests,
    chargedTokens: e.chargedTokens + charge.tokens
  }
  return { ...state, ranks, owner: setTrie(state.owner, charge.requestId, rank) }
}

/**
 * Drop the charges of finished or aborted requests (unknown ids are ignored). Each id is looked up
 * in the owner map, so the cost does not grow with the number of requests in flight elsewhere.
 *
 * @internal
 */
export const finishLedger = (state: LedgerState, requestIds: ReadonlyArray<string>): LedgerState => {
  let ranks: Array<RankEntry> | undefined
  let owner = state.owner
  for (const id of requestIds) {
    const r = getTrie(owner, id)
    if (r === undefined) continue
    owner = setTrie(owner, id, undefined)
    const e = (ranks ?? state.ranks)[r]!
    const kept = e.charges.filter((c) => c.requestId !== id)
    if (kept.length === e.charges.length) continue
    ranks ??= [...state.ranks]
    ranks[r] = withCharges(e, kept)
  }
  return ranks === undefined && owner === state.owner
    ? state
    : { ...state, ranks: ranks ?? state.ranks, owner }
}

/** Replace health; a status of the wrong length is ignored (as upstream). @internal */
export const setLedgerStatus = (state: LedgerState, status: ReadonlyArray<boolean>): LedgerState =>
  status.length === state.dpSize ? { ...state, healthy: [...status] } : state

/**
 * The busiest fresh base load (requests, tokens) at `now`, or `undefined` when no rank is fresh.
 * Stale and never-published ranks take this as their base (never idle).
 *
 * @internal
 */
export interface FreshMax {
  readonly requests: number
  readonly tokens: number
}

/** @internal */
export const freshMax = (
  state: LedgerState,
  now: number,
  staleAfterSeconds: number
): FreshMax | undefined => {
  let q = -1
  let t = -1
  for (const e of state.ranks) {
    const s = e.snapshot
    if (s !== undefined && now - s.timestamp <= staleAfterSeconds) {
      q = Math.max(q, s.numRunningReqs + s.numWaitingReqs)
      t = Math.max(t, s.numTotalTokens)
    }
  }
  return q < 0 ? undefined : { requests: q, tokens: t }
}

/** True when rank `e`'s snapshot is fresh at `now`. @internal */
export const isFresh = (e: RankEntry, now: number, staleAfterSeconds: number): boolean =>
  e.snapshot !== undefined && now - e.snapshot.timestamp <= staleAfterSeconds

/** Effective requests of one rank (base per the staleness rule, plus charges). @internal */
export const effectiveRequests = (e: RankEntry, fresh: boolean, fm: FreshMax | undefined): number => {
  const s = e.snapshot
  const own = s === undefined ? 0 : s.numRunningReqs + s.numWaitingReqs
  return (fresh || fm === undefined ? own : Math.max(own, fm.requests)) + e.chargedRequests
}

/** Effective tokens of one rank. @internal */
export const effectiveTokens = (e: RankEntry, fresh: boolean, fm: FreshMax | undefined): number => {
  const own = e.snapshot === undefined ? 0 : e.snapshot.numTotalTokens
  return (fresh || fm === undefined ? own : Math.max(own, fm.tokens)) + e.chargedTokens
}

/** Every rank's view at `now` (allocates; routing uses the scalar helpers above). @internal */
export const ledgerView = (
  state: LedgerState,
  now: number,
  staleAfterSeconds: number
): ReadonlyArray<RankView> => {
  const fm = freshMax(state, now, staleAfterSeconds)
  return state.ranks.map((e) => {
    const fresh = isFresh(e, now, staleAfterSeconds)
    const s = e.snapshot
    return {
      requests: effectiveRequests(e, fresh, fm),
      tokens: effectiveTokens(e, fresh, fm),
      waiting: (s === undefined ? 0 : s.numWaitingReqs) + e.chargedRequests,
      kvCacheUsage: s?.kvCacheUsage,
      ageSeconds: s === undefined ? undefined : now - s.timestamp,
      stale: s !== undefined && !fresh,
      unknown: s === undefined
    }
  })
}
