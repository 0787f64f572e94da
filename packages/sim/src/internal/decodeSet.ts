/**
 * The decoding requests of one rank, advanced lazily. Both engines put every decoding request of a
 * rank into each batch of that rank that has decodes (SGLang's decode batch, vLLM's decodes before
 * its prefill chunks), so between two changes of the set each member gains exactly one token of
 * context and output per decode step, and one token of KV per decode batch formed. A member keeps
 * its values as of its stamps (`doneAt`, `allocAt`); its real values are those plus the rank's
 * decode steps (`done`) and decode allocations (`allocs`) since. A step then costs O(1) plus its
 * fresh and finishing members instead of O(running); `sync` brings one member up to date (before it
 * leaves the set, is retracted or is read).
 *
 * With a sparse-attention top-k `capK`, the set also keeps Σ min(ctx + 1, capK) over its members
 * (the keys their next decode reads, `cappedReadPairs`) in O(log n) per member over its life: a
 * member's `ctx - doneAt` is fixed while it decodes, so members below the cap are summed by that
 * key and move to the capped count, largest key first, when `done` lifts them to the cap. (A
 * per-step loop over the running requests was 75% of `Rank.form` on the DSA default model.)
 */
import { EpochHeap } from "./epochHeap.js"
import { GapMax } from "./gapMax.js"
import { emptyList, removeAt } from "./lists.js"
import type { CountedSamples } from "./stats.js"

/** What the set tracks of a request: the lazily advanced fields and their stamps. */
export interface Decoder {
  ctx: number
  generated: number
  kvTokens: number
  lastTokenSeconds: number
  readonly outputTarget: number
  /** `done` when `ctx`/`generated`/`lastTokenSeconds` were last brought up to date. */
  doneAt: number
  /** `allocs` when `kvTokens` was last brought up to date. */
  allocAt: number
  /** Bumped on every join and leave: a heap entry with another epoch is stale. */
  decodeEpoch: number
  /** The request's largest gap between consecutive tokens so far (tracked with `trackGaps`). */
  worstGapSeconds: number
  /** The first decode step whose gap this member shares with the set (after its own first one). */
  sharedFrom: number
}

export class DecodeSet<R extends Decoder> {
  /** Decode steps completed by the rank (each member's `ctx` and `generated` grow by one). */
  done = 0
  /** Decode batches formed by the rank (each member's `kvTokens` grows by one). */
  allocs = 0
  /** Members. */
  count = 0
  /** Σ (ctx - doneAt) over the members, so Σ ctx = keySum + count x done (integers, exact). */
  private keySum = 0
  /** When the set last decoded: the last token time of every member not in `fresh`. */
  private lastDecodeSeconds = Number.NaN
  /** Members whose last token is their own: joined since the last decode step. */
  private readonly fresh: Array<R> = []
  /** `decodeStep`'s answer, reused (the caller reads it before the next step). */
  private readonly finished: Array<R> = []
  /** The decode step at which each member finishes. */
  private readonly finishing = new EpochHeap<R>()
  /** Members whose next read is below the cap, keyed by -(ctx - doneAt) (largest key on top). */
  private readonly belowCap = new EpochHeap<R>()
  /** Σ (ctx - doneAt) and the count of the members below the cap; the count of those at it. */
  private belowKeySum = 0
  private belowCount = 0
  private atCap = 0

  /** Every decode step's gap, for the members' worst gaps (only when asked: the SLO's itl bound). */
  private readonly gaps: GapMax | undefined

  constructor(
    private readonly capK?: number | undefined,
    trackGaps = false
  ) {
    this.gaps = trackGaps ? new GapMax() : undefined
  }

  /** Σ (ctx + 1) over the members: the attention pairs of their next decode batch. */
  get decodePairs(): number {
    return this.keySum + this.count * this.done + this.count
  }

  /** Σ min(ctx + 1, capK) over the members (needs `capK`): the keys their next decode reads. */
  get cappedReadPairs(): number {
    this.liftToCap()
    return this.atCap * this.capK! + this.belowKeySum + this.belowCount * (this.done + 1)
  }

  /** A request that has just emitted a token and still has tokens to generate starts decoding. */
  join(r: R): void {
    r.doneAt = this.done
    r.allocAt = this.allocs
    r.decodeEpoch++
    r.sharedFrom = Number.POSITIVE_INFINITY
    const key = r.ctx - this.done
    this.keySum += key
    this.count++
    this.fresh.push(r)
    this.finishing.push(this.done + r.outputTarget - r.generated, r, r.decodeEpoch)
    if (this.capK === undefined) return
    this.liftToCap()
    if (key + this.done + 1 >= this.capK) this.atCap++
    else {
      this.belowKeySum += key
      this.belowCount++
      this.belowCap.push(-key, r, r.decodeEpoch)
    }
  }

  /** Bring a member's lazy fields up to date. */
  sync(r: R): void {
    const d = this.done - r.doneAt
    if (d > 0) {
      r.ctx += d
      r.generated += d
      r.lastTokenSeconds = this.lastDecodeSeconds
      r.doneAt = this.done
    }
    r.kvTokens += this.allocs - r.allocAt
    r.allocAt = this.allocs
  }

  /** A member leaves (finished or retracted), brought up to date. */
  leave(r: R): void {
    this.sync(r)
    if (this.gaps !== undefined && r.sharedFrom <= this.done) {
      const g = this.gaps.maxFrom(r.sharedFrom)
      if (g > r.worstGapSeconds) r.worstGapSeconds = g
    }
    const key = r.ctx - r.doneAt
    if (this.capK !== undefined) {
      // lifted first, while its own entry is current; below the cap, the entry goes stale below
      this.liftToCap()
      if (key + this.done + 1 >= this.capK) this.atCap--
      else {
        this.belowKeySum -= key
        this.belowCount--
      }
    }
    this.keySum -= key
    this.count--
    r.decodeEpoch++
    const i = this.fresh.indexOf(r)
    if (i >= 0) removeAt(this.fresh, i)
  }

  /** Move the members that `done` has lifted to the cap from the below-cap sum to the capped count. */
  private liftToCap(): void {
    const h = this.belowCap
    const k = this.capK!
    while (h.size > 0 && -h.topKey + this.done + 1 >= k) {
      const r = h.topItem
      const stale = r.decodeEpoch !== h.topEpoch
      const key = -h.topKey
      h.pop()
      if (stale) continue
      this.belowKeySum -= key
      this.belowCount--
      this.atCap++
    }
  }

  /**
   * The members' decode step ended at `now`: each gains a token; their inter-token gaps go to `itl`.
   * Returns the members that reached their output target (still members, in no particular order;
   * the array is reused by the next call).
   */
  decodeStep(now: number, itl: CountedSamples): Array<R> {
    this.done++
    const gaps = this.gaps
    for (const r of this.fresh) {
      const gap = now - r.lastTokenSeconds
      itl.push(gap)
      if (gaps !== undefined) {
        if (gap > r.worstGapSeconds) r.worstGapSeconds = gap
        r.sharedFrom = this.done + 1
      }
    }
    const shared = this.count - this.fresh.length
    if (shared > 0) {
      itl.pushMany(now - this.lastDecodeSeconds, shared)
      gaps?.push(this.done, now - this.lastDecodeSeconds)
    }
    emptyList(this.fresh)
    this.lastDecodeSeconds = now
    const finished = this.finished
    emptyList(finished)
    const h = this.finishing
    while (h.size > 0 && h.topKey <= this.done) {
      const r = h.topItem
      const epoch = h.topEpoch
      h.pop()
      if (r.decodeEpoch === epoch) finished.push(r)
    }
    return finished
  }

  /**
   * The members' decode step ended at `now` (`decodeStep`), and the members that reached their
   * output target leave the set, in running (admission) order, `runSeq`: the rank only frees their
   * KV and reports them finished. Returns them (the array is reused by the next call).
   */
  decodeAndRetire(
    this: DecodeSet<R & { readonly runSeq: number }>,
    now: number,
    itl: CountedSamples
  ): Array<R> {
    const finishing = this.decodeStep(now, itl)
    // an insertion sort by `runSeq`, in place (a few finish per step)
    for (let i = 1; i < finishing.length; i++) {
      const r = finishing[i]!
      let j = i - 1
      while (j >= 0 && finishing[j]!.runSeq > r.runSeq) {
        finishing[j + 1] = finishing[j]!
        j--
      }
      finishing[j + 1] = r
    }
    for (const r of finishing) this.leave(r)
    return finishing
  }
}
