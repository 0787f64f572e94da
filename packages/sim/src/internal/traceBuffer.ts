/**
 * An async trace as the loop reads it: a buffer filled from an `AsyncIterator` a block at a time
 * (`fill`, awaited between the loop's rounds) and read synchronously (`next`). It hands on only the
 * requests earlier than the latest one read until the source is over, so the requests arriving at
 * one instant are always handed on together (the loop takes every arrival of an instant at once).
 */
import type { TraceRequest } from "../Trace.js"
import type { TraceShape } from "../TraceStream.js"

const BLOCK = 4096

export class TraceBuffer implements Iterable<TraceRequest>, Iterator<TraceRequest>, TraceShape {
  private buf: Array<TraceRequest> = []
  private at = 0
  /** Requests before this index may be handed on (those at the latest time read wait for more). */
  private ready = 0
  ended = false

  constructor(
    private readonly source: AsyncIterator<TraceRequest>,
    readonly count: number,
    readonly lastArrivalSeconds: number
  ) {}

  [Symbol.iterator](): Iterator<TraceRequest> {
    return this
  }

  /** Nothing to hand on yet, and the source is not over. */
  wouldBlock(): boolean {
    return !this.ended && this.at >= this.ready
  }

  next(): IteratorResult<TraceRequest> {
    if (this.at >= (this.ended ? this.buf.length : this.ready)) return { done: true, value: undefined }
    return { done: false, value: this.buf[this.at++]! }
  }

  /** Read up to a block more from the source (all of it, when it ends). */
  async fill(): Promise<void> {
    if (this.at > 0) {
      this.buf = this.buf.slice(this.at)
      this.ready -= this.at
      this.at = 0
    }
    for (let k = 0; k < BLOCK; k++) {
      const n = await this.source.next()
      if (n.done) {
        this.ended = true
        this.ready = this.buf.length
        return
      }
      this.buf.push(n.value)
    }
    // the requests at the latest time read may have more at that time still to come
    const last = this.buf.at(-1)?.arrivalSeconds
    let i = this.buf.length
    while (i > 0 && this.buf[i - 1]!.arrivalSeconds === last) i--
    this.ready = i
  }
}
