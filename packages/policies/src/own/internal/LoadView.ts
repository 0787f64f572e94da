/**
 * The one read-only load view: reported load plus the ledger's charges, per rank at `now`
 * (`LedgerScoreView`, the `ScoreView` every scorer reads; `ledgerView`, the `RankView`s), and the
 * fresh / stale / unknown rules it applies.
 *
 * @internal
 */
import { isCount, malformedRow } from "../../internal/counts.js"
import type { RankLoad, RouteRequest } from "../../Policy.js"
import type { RankView } from "../RankView.js"
import type { ScoreView } from "../ScoreView.js"
import { Charges, type LedgerState, type Store } from "./LedgerState.js"
import { indexedRanks, matchedBlocks, type PrefixIndex } from "./PrefixIndex.js"

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
  const { requests: cq, tokens: ct } = Charges.store(state.charges)
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
      q = Math.max(q, requests + cq[r]!)
      t = Math.max(t, tokens + ct[r]!)
    }
  }
  // a fresh partial row: what it reported, the busiest known for the rest, plus its charges
  if (partial !== undefined)
    for (const r of partial) {
      const row = state.snapshots[r]!
      q = Math.max(q, ownOrBusiest(row.numRunningReqs, kr) + ownOrBusiest(row.numWaitingReqs, kw) + cq[r]!)
      t = Math.max(t, ownOrBusiest(row.numTotalTokens, kt) + ct[r]!)
    }
  return { requests: q, tokens: t, knownRunning: kr, knownWaiting: kw, knownTokens: kt }
}
// a field of an unknown rank's row: its own value when counted, else the busiest rank's
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
  const fresh = now - state.snapTimestamp[r]! <= staleAfterSeconds
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

/** True when rank `r`'s newest row with request counts (a partial one too) is fresh at `now`. */
export const isDated = (state: LedgerState, r: number, now: number, staleAfterSeconds: number): boolean =>
  now - state.rowTimestamp[r]! <= staleAfterSeconds

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

/** Every rank's {@link RankView}: the one view, read once per rank. */
export const ledgerView = (
  state: LedgerState,
  now: number,
  staleAfterSeconds: number
): ReadonlyArray<RankView> => {
  const fm = freshMax(state, now, staleAfterSeconds)
  const v = new LedgerScoreView(state, now, noRequest, staleAfterSeconds, fm, undefined, undefined)
  return state.snapshots.map((_, r) => ({
    requests: v.requests(r),
    tokens: v.tokens(r),
    waiting: v.waiting(r),
    kvCacheUsage: v.kvCacheUsage(r),
    // a partial row that counted requests is dated by them (`rowTimestamp`), so it ages too
    ageSeconds: Number.isNaN(state.rowTimestamp[r]!) ? undefined : now - state.rowTimestamp[r]!,
    stale: v.stale(r),
    unknown: v.unknown(r)
  }))
}
const noRequest: RouteRequest = { requestId: "", inputLength: 0 }
/** Values a view would otherwise compute over every rank (power of d keeps them from `observe`). */
export interface ViewCache {
  readonly maxKv: number | undefined
  readonly maxUncached: number
}

/** The highest `numWaitingUncachedTokens` any rank's last row reports (0 when none). */
export const maxWaitingUncached = (ledger: LedgerState): number => {
  let m = 0
  for (const row of ledger.snapshots) {
    const u = row?.numWaitingUncachedTokens
    if (u !== undefined && u > m) m = u
  }
  return m
}

/** A {@link ScoreView} over the in-flight ledger, for one route. */
export class LedgerScoreView implements ScoreView {
  readonly dpSize: number
  // the two maxima over every rank, each computed on first use (or given: power of d keeps them)
  private kvDone = false
  private maxKv: number | undefined = undefined
  private maxUncached = -1
  private matched: Array<number> | undefined
  private readonly c: Store // the ledger's charge columns (its head's: one route reads them)
  constructor(
    private readonly ledger: LedgerState,
    readonly now: number,
    readonly request: RouteRequest,
    private readonly staleAfter: number,
    private readonly fm: FreshMax,
    private readonly index: PrefixIndex | undefined,
    cache: ViewCache | undefined
  ) {
    this.dpSize = ledger.dpSize
    this.c = Charges.store(ledger.charges)
    if (cache !== undefined) {
      this.kvDone = true
      this.maxKv = cache.maxKv
      this.maxUncached = cache.maxUncached
    }
  }
  chargedRequests(r: number): number {
    return this.c.requests[r]!
  }
  chargedTokens(r: number): number {
    return this.c.tokens[r]!
  }
  private fresh(r: number): boolean {
    return this.now - this.ledger.snapTimestamp[r]! <= this.staleAfter
  }
  healthy(r: number): boolean {
    return this.ledger.healthy[r]!
  }
  unknown(r: number): boolean {
    return Number.isNaN(this.ledger.snapTimestamp[r]!)
  }
  stale(r: number): boolean {
    // dated by its newest row with request counts (a partial one too: vLLM's rows carry no tokens)
    const at = this.ledger.rowTimestamp[r]!
    return !Number.isNaN(at) && !(this.now - at <= this.staleAfter)
  }
  /** Its newest row with request counts is fresh (false when it has none). */
  dated(r: number): boolean {
    return this.now - this.ledger.rowTimestamp[r]! <= this.staleAfter
  }
  requests(r: number): number {
    const base = this.fresh(r)
      ? this.ledger.snapRequests[r]!
      : baseOf(this.ledger, r, this.now, this.staleAfter, this.fm)[0]
    return base + this.chargedRequests(r)
  }
  waiting(r: number): number {
    const base = this.fresh(r)
      ? this.ledger.snapWaiting[r]!
      : baseOf(this.ledger, r, this.now, this.staleAfter, this.fm)[2]
    return base + this.chargedRequests(r)
  }
  running(r: number): number {
    if (this.fresh(r)) return this.ledger.snapRequests[r]! - this.ledger.snapWaiting[r]!
    const b = baseOf(this.ledger, r, this.now, this.staleAfter, this.fm)
    return b[0] - b[2]
  }
  tokens(r: number): number {
    const base = this.fresh(r)
      ? this.ledger.snapTokens[r]!
      : baseOf(this.ledger, r, this.now, this.staleAfter, this.fm)[1]
    return base + this.chargedTokens(r)
  }
  kvCacheUsage(r: number): number | undefined {
    const kv = this.ledger.snapKv[r]!
    return Number.isNaN(kv) ? undefined : kv
  }
  maxKvCacheUsage(): number | undefined {
    if (!this.kvDone) {
      this.maxKv = maxKnownKv(this.ledger)
      this.kvDone = true
    }
    return this.maxKv
  }
  freeKvTokens(r: number): number | undefined {
    const free = this.ledger.snapFree[r]!
    return Number.isNaN(free) ? undefined : free - this.c.tokens[r]!
  }
  waitingUncachedTokens(r: number): number {
    const row = this.ledger.snapshots[r]
    if (this.maxUncached < 0) this.maxUncached = maxWaitingUncached(this.ledger)
    const max = this.maxUncached
    if (row === undefined || row.unknown !== undefined) return max
    if (row.numWaitingUncachedTokens !== undefined) return row.numWaitingUncachedTokens
    // no token count: its waiting requests x this prompt's tokens (a count-based estimate), never
    // a silent 0 for a queue the row does count (vLLM's rows carry requests only)
    const waiting = this.waiting(r) - this.chargedRequests(r)
    return Math.max(max, waiting > 0 ? waiting * this.request.inputLength : 0)
  }
  uncachedPromptTokens(r: number): number {
    const { inputLength, prefixHashes } = this.request
    const blocks = prefixHashes?.length ?? 0
    if (this.index === undefined || blocks === 0 || this.dpSize > indexedRanks) return inputLength
    if (this.matched === undefined) {
      this.matched = new Array<number>(this.dpSize)
      matchedBlocks(this.index, prefixHashes, this.matched)
    }
    return Math.max(0, inputLength - this.matched[r]! * (inputLength / blocks))
  }
  inflightRequests(r: number): number | undefined {
    return this.c.inflightRequests?.[r]
  }
  inflightTokens(r: number): number | undefined {
    return this.c.inflightTokens?.[r]
  }
}
