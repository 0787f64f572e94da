/**
 * A double-ended queue in a growable ring buffer: O(1) push and shift at both ends, for a rank's
 * waiting queue (FCFS at the back, retracted requests at the front). `Array.shift` / `unshift` move
 * every element once an array outgrows V8's in-place trimming, so an overloaded rank with thousands
 * waiting paid O(waiting) per admission and per retraction.
 *
 * @internal
 */
export class Deque<T> {
  private buf: Array<T | undefined> = new Array<T | undefined>(16).fill(undefined)
  private head = 0
  length = 0

  /** The element at position `i` from the front (`undefined` past the end). */
  at(i: number): T | undefined {
    if (i < 0 || i >= this.length) return undefined
    return this.buf[(this.head + i) & (this.buf.length - 1)]
  }

  push(x: T): void {
    if (this.length === this.buf.length) this.grow()
    this.buf[(this.head + this.length) & (this.buf.length - 1)] = x
    this.length++
  }

  unshift(x: T): void {
    if (this.length === this.buf.length) this.grow()
    this.head = (this.head - 1) & (this.buf.length - 1)
    this.buf[this.head] = x
    this.length++
  }

  /** Remove and return the front element (`undefined` when empty). */
  shift(): T | undefined {
    if (this.length === 0) return undefined
    const x = this.buf[this.head]
    this.buf[this.head] = undefined
    this.head = (this.head + 1) & (this.buf.length - 1)
    this.length--
    return x
  }

  /** Double the buffer (its size stays a power of two), unrolling the ring to the front. */
  private grow(): void {
    const n = this.buf.length
    const next = new Array<T | undefined>(n * 2).fill(undefined)
    for (let i = 0; i < this.length; i++) next[i] = this.buf[(this.head + i) & (n - 1)]
    this.buf = next
    this.head = 0
  }
}
