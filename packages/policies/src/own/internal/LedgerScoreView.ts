/**
 * The read-only load view every ledger-backed scorer reads (`ScoreView` over the in-flight ledger,
 * and a lazy ledger's log when given).
 *
 * @internal
 */
import type { RouteRequest } from "../../Policy.js"
import type { ScoreView } from "../ScoreView.js"
import { freeKvTokens } from "./FreeKv.js"
import type { LedgerState } from "./InflightCharges.js"
import { type LazyLedger, lazyChargedRequests, lazyChargedTokens } from "./LazyLedger.js"
import { baseOf, type FreshMax, maxKnownKv } from "./LoadView.js"
import { indexedRanks, matchedBlocks, type PrefixIndex } from "./PrefixIndex.js"

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

/** A {@link ScoreView} over the in-flight ledger (and a lazy ledger's log, when given). */
export class LedgerScoreView implements ScoreView {
  readonly dpSize: number
  // the two maxima over every rank, each computed on first use (or given: power of d keeps them)
  private kvDone = false
  private maxKv: number | undefined = undefined
  private maxUncached = -1
  private matched: Array<number> | undefined
  constructor(
    private readonly ledger: LedgerState,
    private readonly lazy: LazyLedger | undefined,
    readonly now: number,
    readonly request: RouteRequest,
    private readonly staleAfter: number,
    private readonly fm: FreshMax,
    private readonly index: PrefixIndex | undefined,
    cache: ViewCache | undefined
  ) {
    this.dpSize = ledger.dpSize
    if (cache !== undefined) {
      this.kvDone = true
      this.maxKv = cache.maxKv
      this.maxUncached = cache.maxUncached
    }
  }
  chargedRequests(r: number): number {
    return this.lazy === undefined ? this.ledger.chargedRequests[r]! : lazyChargedRequests(this.lazy, r)
  }
  chargedTokens(r: number): number {
    return this.lazy === undefined ? this.ledger.chargedTokens[r]! : lazyChargedTokens(this.lazy, r)
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
    const free = freeKvTokens(this.ledger.snapshots[r])
    return free === undefined ? undefined : free - this.chargedTokens(r)
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
    return this.ledger.inflightRequests?.[r]
  }
  inflightTokens(r: number): number | undefined {
    return this.ledger.inflightTokens?.[r]
  }
}
