/**
 * The decoding requests of one rank, advanced lazily. Both engines put every decoding request of a
 * rank into each batch of that rank that has decodes (SGLang's decode batch, vLLM's decodes before
 * its prefill chunks), so between two changes of the set each member gains exactly one token of
 * context and output per decode step, and one token of KV per decode batch formed. A member keeps
 * its values as of its stamps (`doneAt`, `allocAt`); its real values are those plus the rank's
 * decode steps (`done`) and decode allocations (`allocs`) since. A step then costs O(1) plus its
 * fresh and finishing members instead of O(running); `sync` brings one member up to date (before it
 * leaves the set, is retracted or is read).
 */
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
  // a binary min-heap of (finish step, member, epoch): the decode step at which a member finishes
  private heapKeys: Array<number> = []
  private heapReqs: Array<R> = []
  private heapEpochs: Array<number> = []

  /** Σ (ctx + 1) over the members: the attention pairs of their next decode batch. */
  get decodePairs(): number {
    return this.keySum + this.count * this.done + this.count
  }

  /** A request that has just emitted a token and still has tokens to generate starts decoding. */
  join(r: R): void {
    r.doneAt = this.done
    r.allocAt = this.allocs
    r.decodeEpoch++
    this.keySum += r.ctx - this.done
    this.count++
    this.fresh.push(r)
    this.heapPush(this.done + r.outputTarget - r.generated, r, r.decodeEpoch)
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
    this.keySum -= r.ctx - r.doneAt
    this.count--
    r.decodeEpoch++
    const i = this.fresh.indexOf(r)
    if (i >= 0) this.fresh.splice(i, 1)
  }

  /**
   * The members' decode step ended at `now`: each gains a token; their inter-token gaps go to `itl`.
   * Returns the members that reached their output target (still members, in no particular order;
   * the array is reused by the next call).
   */
  decodeStep(now: number, itl: CountedSamples): Array<R> {
    this.done++
    for (const r of this.fresh) itl.push(now - r.lastTokenSeconds)
    const shared = this.count - this.fresh.length
    if (shared > 0) itl.pushMany(now - this.lastDecodeSeconds, shared)
    if (this.fresh.length > 0) this.fresh.length = 0
    this.lastDecodeSeconds = now
    const finished = this.finished
    if (finished.length > 0) finished.length = 0
    while (this.heapKeys.length > 0 && this.heapKeys[0]! <= this.done) {
      const r = this.heapReqs[0]!
      const epoch = this.heapEpochs[0]!
      this.heapPop()
      if (r.decodeEpoch === epoch) finished.push(r)
    }
    return finished
  }

  private heapPush(key: number, r: R, epoch: number): void {
    const keys = this.heapKeys
    const reqs = this.heapReqs
    const epochs = this.heapEpochs
    let i = keys.length
    keys.push(key)
    reqs.push(r)
    epochs.push(epoch)
    while (i > 0) {
      const p = (i - 1) >> 1
      if (keys[p]! <= key) break
      keys[i] = keys[p]!
      reqs[i] = reqs[p]!
      epochs[i] = epochs[p]!
      i = p
    }
    keys[i] = key
    reqs[i] = r
    epochs[i] = epoch
  }

  private heapPop(): void {
    const keys = this.heapKeys
    const reqs = this.heapReqs
    const epochs = this.heapEpochs
    const key = keys.pop()!
    const r = reqs.pop()!
    const epoch = epochs.pop()!
    const n = keys.length
    if (n === 0) return
    let i = 0
    for (;;) {
      let c = 2 * i + 1
      if (c >= n) break
      if (c + 1 < n && keys[c + 1]! < keys[c]!) c++
      if (keys[c]! >= key) break
      keys[i] = keys[c]!
      reqs[i] = reqs[c]!
      epochs[i] = epochs[c]!
      i = c
    }
    keys[i] = key
    reqs[i] = r
    epochs[i] = epoch
  }
}
