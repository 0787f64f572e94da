/**
 * A binary min-heap of (key, item, epoch) in three parallel arrays, for `DecodeSet`'s lazily
 * advanced members: an entry whose epoch is no longer its item's is stale and skipped by the
 * caller (members are never removed from the middle, only outdated).
 *
 * @internal
 */
export class EpochHeap<R> {
  private readonly keys: Array<number> = []
  private readonly items: Array<R> = []
  private readonly epochs: Array<number> = []

  get size(): number {
    return this.keys.length
  }

  /** The smallest key (the heap must not be empty). */
  get topKey(): number {
    return this.keys[0]!
  }

  get topItem(): R {
    return this.items[0]!
  }

  get topEpoch(): number {
    return this.epochs[0]!
  }

  push(key: number, item: R, epoch: number): void {
    const keys = this.keys
    const items = this.items
    const epochs = this.epochs
    let i = keys.length
    keys.push(key)
    items.push(item)
    epochs.push(epoch)
    while (i > 0) {
      const p = (i - 1) >> 1
      if (keys[p]! <= key) break
      keys[i] = keys[p]!
      items[i] = items[p]!
      epochs[i] = epochs[p]!
      i = p
    }
    keys[i] = key
    items[i] = item
    epochs[i] = epoch
  }

  /** Drop the top entry. */
  pop(): void {
    const keys = this.keys
    const items = this.items
    const epochs = this.epochs
    const key = keys.pop()!
    const item = items.pop()!
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
      items[i] = items[c]!
      epochs[i] = epochs[c]!
      i = c
    }
    keys[i] = key
    items[i] = item
    epochs[i] = epoch
  }
}
