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

/**
 * The in-flight-charging ledger both loadledger policies build on, stored column-wise so routing
 * reads flat arrays: the newest snapshot per rank (`snapshots`, and its numbers in `snap*`, with
 * `snapTimestamp` NaN for a rank that never published and `snapKv` NaN when KV usage was not
 * reported), the charges not yet provably included (routing order) and their sums, per-rank
 * health, and which rank each request id was charged to (for `finish`; bounded, see `HashTrie`).
 * Nothing here is ever mutated after construction.
 *
 * @internal
 */
export interface LedgerState {
  readonly dpSize: number
  readonly snapshots: ReadonlyArray<RankLoad | undefined>
  readonly snapTimestamp: ReadonlyArray<number>
  readonly snapRequests: ReadonlyArray<number>
  readonly snapWaiting: ReadonlyArray<number>
  readonly snapTokens: ReadonlyArray<number>
  readonly snapKv: ReadonlyArray<number>
  readonly charges: ReadonlyArray<ReadonlyArray<Charge>>
  readonly chargedRequests: ReadonlyArray<number>
  readonly chargedTokens: ReadonlyArray<number>
  readonly healthy: ReadonlyArray<boolean>
  readonly owner: HashTrie<number>
}

/** A fresh ledger for `dpSize` ranks: nothing published, nothing charged, all healthy. @internal */
export const emptyLedger = (dpSize: number, maxTrackedRequests = 1_000_000): LedgerState => {
  const n = Number.isInteger(dpSize) && dpSize > 0 ? dpSize : 0
  return {
    dpSize: n,
    snapshots: new Array<RankLoad | undefined>(n).fill(undefined),
    snapTimestamp: new Array<number>(n).fill(Number.NaN),
    snapRequests: new Array<number>(n).fill(0),
    snapWaiting: new Array<number>(n).fill(0),
    snapTokens: new Array<number>(n).fill(0),
    snapKv: new Array<number>(n).fill(Number.NaN),
    charges: new Array<ReadonlyArray<Charge>>(n).fill([]),
    chargedRequests: new Array<number>(n).fill(0),
    chargedTokens: new Array<number>(n).fill(0),
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

const sumCharges = (charges: ReadonlyArray<Charge>): readonly [number, number] => {
  let q = 0
  let t = 0
  for (const c of charges) {
    q += c.requests
    t += c.tokens
  }
  return [q, t]
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
  let next:
    | {
        -readonly [K in keyof LedgerState]: LedgerState[K] extends ReadonlyArray<infer T>
          ? Array<T>
          : LedgerState[K]
      }
    | undefined
  for (const l of loads) {
    if (!validLoad(l, state.dpSize)) continue
    const r = l.dpRank
    const held = (next ?? state).snapTimestamp[r]!
    if (l.timestamp < held) continue // NaN (never published) compares false: applied
    next ??= {
      ...state,
      snapshots: [...state.snapshots],
      snapTimestamp: state.snapTimestamp.slice(),
      snapRequests: state.snapRequests.slice(),
      snapWaiting: state.snapWaiting.slice(),
      snapTokens: state.snapTokens.slice(),
      snapKv: state.snapKv.slice(),
      charges: [...state.charges],
      chargedRequests: state.chargedRequests.slice(),
      chargedTokens: state.chargedTokens.slice(),
      healthy: [...state.healthy]
    }
    next.snapshots[r] = l
    next.snapTimestamp[r] = l.timestamp
    next.snapRequests[r] = l.numRunningReqs + l.numWaitingReqs
    next.snapWaiting[r] = l.numWaitingReqs
    next.snapTokens[r] = l.numTotalTokens
    next.snapKv[r] = l.kvCacheUsage ?? Number.NaN
    const cs = next.charges[r]!
    const kept = cs.filter((c) => !(c.routedAtSeconds + inclusionMarginSeconds < l.timestamp))
    if (kept.length !== cs.length) {
      next.charges[r] = kept
      const [q, t] = sumCharges(kept)
      next.chargedRequests[r] = q
      next.chargedTokens[r] = t
    }
  }
  return next ?? state
}

/** Charge one routed request to `rank` (copies the charge columns and that rank's list). @internal */
export const chargeLedger = (state: LedgerState, rank: number, charge: Charge): LedgerState => {
  const charges = [...state.charges]
  charges[rank] = [...state.charges[rank]!, charge]
  const chargedRequests = state.chargedRequests.slice()
  chargedRequests[rank] = chargedRequests[rank]! + charge.requests
  const chargedTokens = state.chargedTokens.slice()
  chargedTokens[rank] = chargedTokens[rank]! + charge.tokens
  return {
    ...state,
    charges,
    chargedRequests,
    chargedTokens,
    owner: setTrie(state.owner, charge.requestId, rank)
  }
}

/**
 * Drop the charges of finished or aborted requests (unknown ids are ignored). Each id is looked up
 * in the owner map, so the cost does not grow with the requests in flight on other ranks. A
 * request id reused while still charged keeps only its latest rank in the map; an older charge
 * under the same id then leaves at the next snapshot that includes it.
 *
 * @internal
 */
export const finishLedger = (state: LedgerState, requestIds: ReadonlyArray<string>): LedgerState => {
  let charges: Array<ReadonlyArray<Charge>> | undefined
  let chargedRequests: Array<number> | undefined
  let chargedTokens: Array<number> | undefined
  let owner = state.owner
  for (const id of requestIds) {
    const r = getTrie(owner, id)
    if (r === undefined) continue
    owner = setTrie(owner, id, undefined)
    const cs = (charges ?? state.charges)[r]!
    const kept = cs.filter((c) => c.requestId !== id)
    if (kept.length === cs.length) continue
    charges ??= [...state.charges]
    chargedRequests ??= state.chargedRequests.slice()
    chargedTokens ??= state.chargedTokens.slice()
    charges[r] = kept
    const [q, t] = sumCharges(kept)
    chargedRequests[r] = q
    chargedTokens[r] = t
  }
  if (owner === state.owner) return state
  return {
    ...state,
    charges: charges ?? state.charges,
    chargedRequests: chargedRequests ?? state.chargedRequests,
    chargedTokens: chargedTokens ?? state.chargedTokens,
    owner
  }
}

/** Replace health; a status of the wrong length is ignored (as upstream). @internal */
export const setLedgerStatus = (state: LedgerState, status: ReadonlyArray<boolean>): LedgerState =>
  status.length === state.dpSize ? { ...state, healthy: [...status] } : state

/**
 * The busiest fresh base load at `now` (`requests < 0` when no rank is fresh). Stale and
 * never-published ranks take it as their base (never idle).
 *
 * @internal
 */
export interface FreshMax {
  readonly requests: number
  readonly tokens: number
}

/** @internal */
export const freshMax = (state: LedgerState, now: number, staleAfterSeconds: number): FreshMax => {
  let q = -1
  let t = -1
  const ts = state.snapTimestamp
  for (let r = 0; r < state.dpSize; r++) {
    if (now - ts[r]! <= staleAfterSeconds) {
      q = Math.max(q, state.snapRequests[r]!)
      t = Math.max(t, state.snapTokens[r]!)
    }
  }
  return { requests: q, tokens: t }
}

/** True when rank `r`'s snapshot is fresh at `now` (false when it never published). @internal */
export const isFresh = (state: LedgerState, r: number, now: number, staleAfterSeconds: number): boolean =>
  now - state.snapTimestamp[r]! <= staleAfterSeconds

/** Effective requests of rank `r` (base per the staleness rule, plus charges). @internal */
export const effectiveRequests = (state: LedgerState, r: number, fresh: boolean, fm: FreshMax): number => {
  const own = state.snapRequests[r]!
  return (fresh || fm.requests < 0 ? own : Math.max(own, fm.requests)) + state.chargedRequests[r]!
}

/** Effective tokens of rank `r`. @internal */
export const effectiveTokens = (state: LedgerState, r: number, fresh: boolean, fm: FreshMax): number => {
  const own = state.snapTokens[r]!
  return (fresh || fm.requests < 0 ? own : Math.max(own, fm.tokens)) + state.chargedTokens[r]!
}

/** KV usage of rank `r`, `undefined` when not reported. @internal */
export const kvOf = (state: LedgerState, r: number): number | undefined => {
  const kv = state.snapKv[r]!
  return Number.isNaN(kv) ? undefined : kv
}

/** Every rank's view at `now` (allocates; routing uses the scalar helpers above). @internal */
export const ledgerView = (
  state: LedgerState,
  now: number,
  staleAfterSeconds: number
): ReadonlyArray<RankView> => {
  const fm = freshMax(state, now, staleAfterSeconds)
  return state.snapshots.map((s, r) => {
    const fresh = isFresh(state, r, now, staleAfterSeconds)
    return {
      requests: effectiveRequests(state, r, fresh, fm),
      tokens: effectiveTokens(state, r, fresh, fm),
      waiting: state.snapWaiting[r]! + state.chargedRequests[r]!,
      kvCacheUsage: kvOf(state, r),
      ageSeconds: s === undefined ? undefined : now - s.timestamp,
      stale: s !== undefined && !fresh,
      unknown: s === undefined
    }
  })
}
