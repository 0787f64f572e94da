/**
 * What the in-flight charges and the last snapshots say a rank's load is at `now`.
 *
 * @internal
 */
import { isCount, malformedRow } from "../../internal/counts.js"
import type { RankLoad } from "../../Policy.js"
import type { RankView } from "../RankView.js"
import type { LedgerState } from "./InflightCharges.js"

export interface FreshMax {
  readonly requests: number
  readonly tokens: number
  readonly knownRunning: number
  readonly knownWaiting: number
  readonly knownTokens: number
}

export const freshMax = (state: LedgerState, now: number, staleAfterSeconds: number): FreshMax => {
  let q = -1
  let t = -1
  let kr = -1
  let kw = -1
  let kt = -1
  const ts = state.snapTimestamp
  // fresh partial rows (vLLM's: counts, no tokens), read once the busiest known values are
  let partial: Array<number> | undefined
  for (let r = 0; r < state.dpSize; r++) {
    const at = ts[r]!
    if (Number.isNaN(at)) {
      // a partial row says what it reported: the busiest known values include it
      const row = state.snapshots[r]
      if (row === undefined || row.unknown !== undefined || malformedRow(row)) continue
      if (isCount(row.numRunningReqs)) kr = Math.max(kr, row.numRunningReqs)
      if (isCount(row.numWaitingReqs)) kw = Math.max(kw, row.numWaitingReqs)
      if (isCount(row.numTotalTokens)) kt = Math.max(kt, row.numTotalTokens)
      if (isDated(state, r, now, staleAfterSeconds)) {
        partial ??= []
        partial.push(r)
      }
      continue
    }
    const requests = state.snapRequests[r]!
    const waiting = state.snapWaiting[r]!
    const tokens = state.snapTokens[r]!
    kr = Math.max(kr, requests - waiting)
    kw = Math.max(kw, waiting)
    kt = Math.max(kt, tokens)
    // the busiest fresh load, charges routed since included: a stale or unknown rank is never
    // below it, however many requests went to the fresh ranks since their rows
    if (now - at <= staleAfterSeconds) {
      q = Math.max(q, requests + state.chargedRequests[r]!)
      t = Math.max(t, tokens + state.chargedTokens[r]!)
    }
  }
  // a fresh partial row: what it reported, the busiest known for the rest, plus its charges
  if (partial !== undefined)
    for (const r of partial) {
      const row = state.snapshots[r]!
      q = Math.max(
        q,
        ownOrBusiest(row.numRunningReqs, kr) +
          ownOrBusiest(row.numWaitingReqs, kw) +
          state.chargedRequests[r]!
      )
      t = Math.max(t, ownOrBusiest(row.numTotalTokens, kt) + state.chargedTokens[r]!)
    }
  return { requests: q, tokens: t, knownRunning: kr, knownWaiting: kw, knownTokens: kt }
}

/** A field of an unknown rank's row. */
const ownOrBusiest = (x: number | undefined, busiest: number): number =>
  isCount(x) ? x : Math.max(busiest, 0)

export const unknownBase = (
  row: RankLoad | undefined,
  fm: FreshMax,
  now: number,
  staleAfterSeconds: number
): readonly [number, number, number] => {
  const known = row !== undefined && row.unknown === undefined && !malformedRow(row)
  const running = ownOrBusiest(known ? row.numRunningReqs : undefined, fm.knownRunning)
  const waiting = ownOrBusiest(known ? row.numWaitingReqs : undefined, fm.knownWaiting)
  const tokens = ownOrBusiest(known ? row.numTotalTokens : undefined, fm.knownTokens)
  const at = row?.timestamp
  // a stale (or never published) one also takes the stale floor, as a known stale rank would
  if (fm.requests >= 0 && !(at !== undefined && now - at <= staleAfterSeconds))
    return [Math.max(running + waiting, fm.requests), Math.max(tokens, fm.tokens), waiting]
  return [running + waiting, tokens, waiting]
}

/** The base `[requests, tokens, waiting]` of rank `r` at `now` (fresh, stale or unknown). */
export const baseOf = (
  state: LedgerState,
  r: number,
  now: number,
  staleAfterSeconds: number,
  fm: FreshMax
): readonly [number, number, number] => {
  if (Number.isNaN(state.snapTimestamp[r]!))
    return unknownBase(state.snapshots[r], fm, now, staleAfterSeconds)
  const fresh = isFresh(state, r, now, staleAfterSeconds)
  const q = state.snapRequests[r]!
  const t = state.snapTokens[r]!
  const w = state.snapWaiting[r]!
  return fresh || fm.requests < 0 ? [q, t, w] : [Math.max(q, fm.requests), Math.max(t, fm.tokens), w]
}

/** How much of rank `r`'s load is unknown at `now`, for tie-breaking. */
export const unknownLevel = (state: LedgerState, r: number, now: number, staleAfterSeconds: number): number =>
  (isDated(state, r, now, staleAfterSeconds) ? 0 : 4) +
  (Number.isNaN(state.snapTimestamp[r]!) ? 2 : 0) +
  (Number.isNaN(state.snapKv[r]!) ? 1 : 0)

export const displacesBest = (
  state: LedgerState,
  r: number,
  score: number,
  best: number,
  bestScore: number,
  now: number,
  staleAfterSeconds: number
): boolean =>
  best < 0 ||
  score < bestScore ||
  (score === bestScore &&
    unknownLevel(state, r, now, staleAfterSeconds) < unknownLevel(state, best, now, staleAfterSeconds))

/** True when rank `r`'s newest row with request counts (a partial one too. */
export const isDated = (state: LedgerState, r: number, now: number, staleAfterSeconds: number): boolean =>
  now - state.rowTimestamp[r]! <= staleAfterSeconds

/** True when rank `r` has a row with request counts and it is stale at `now`. */
export const isStaleRow = (state: LedgerState, r: number, now: number, staleAfterSeconds: number): boolean =>
  !Number.isNaN(state.rowTimestamp[r]!) && !isDated(state, r, now, staleAfterSeconds)

/** True when rank `r`'s snapshot is fresh at `now` (false when it never published or is unknown). */
export const isFresh = (state: LedgerState, r: number, now: number, staleAfterSeconds: number): boolean =>
  now - state.snapTimestamp[r]! <= staleAfterSeconds

/** Effective requests of rank `r` at `now` (base per the staleness rule, plus charges). */
export const effectiveRequests = (
  state: LedgerState,
  r: number,
  now: number,
  staleAfterSeconds: number,
  fm: FreshMax
): number => baseOf(state, r, now, staleAfterSeconds, fm)[0] + state.chargedRequests[r]!

/** The highest KV usage any rank reported (its last known row), `undefined` when none did. */
export const maxKnownKv = (state: LedgerState): number | undefined => {
  let m = Number.NaN
  const kvs = state.snapKv
  for (let r = 0; r < kvs.length; r++) {
    const kv = kvs[r]!
    if (!(kv <= m)) m = Number.isNaN(kv) ? m : kv
  }
  return Number.isNaN(m) ? undefined : m
}

/** KV usage of rank `r`, `undefined` when not reported. */
export const kvOf = (state: LedgerState, r: number): number | undefined => {
  const kv = state.snapKv[r]!
  return Number.isNaN(kv) ? undefined : kv
}

/** Every rank's view at `now` (allocates. */
export const ledgerView = (
  state: LedgerState,
  now: number,
  staleAfterSeconds: number
): ReadonlyArray<RankView> => {
  const fm = freshMax(state, now, staleAfterSeconds)
  return state.snapshots.map((_, r) => {
    const [requests, tokens, waiting] = baseOf(state, r, now, staleAfterSeconds, fm)
    return {
      requests: requests + state.chargedRequests[r]!,
      tokens: tokens + state.chargedTokens[r]!,
      waiting: waiting + state.chargedRequests[r]!,
      kvCacheUsage: kvOf(state, r),
      // a partial row that counted requests is dated by them (`rowTimestamp`), so it ages too
      ageSeconds: Number.isNaN(state.rowTimestamp[r]!) ? undefined : now - state.rowTimestamp[r]!,
      stale: isStaleRow(state, r, now, staleAfterSeconds),
      unknown: Number.isNaN(state.snapTimestamp[r]!)
    }
  })
}
