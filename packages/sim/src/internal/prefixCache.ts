/**
 * A per-rank prefix cache over 512-token blocks, keyed by the trace's block hashes, with LRU
 * eviction of blocks no running request holds. Mutable on purpose: it lives inside one
 * `simulate` call and never escapes it.
 */
export const BLOCK_TOKENS = 512

export class PrefixCache {
  // block id -> number of running requests holding it. Map order is the LRU order (oldest first).
  private readonly refs = new Map<number, number>()
  private pinned = 0

  get blocks(): number {
    return this.refs.size
  }

  get pinnedBlocks(): number {
    return this.pinned
  }

  /** Blocks no running request holds: what eviction can free. */
  get evictableBlocks(): number {
    return this.refs.size - this.pinned
  }

  /** Leading blocks of `hashIds` present in the cache, at most `maxBlocks`. Does not touch the LRU. */
  match(hashIds: ReadonlyArray<number> | undefined, maxBlocks: number): number {
    if (!hashIds) return 0
    const n = Math.min(maxBlocks, hashIds.length)
    let i = 0
    while (i < n && this.refs.has(hashIds[i]!)) i++
    return i
  }

  /** Hold the first `n` blocks (present) and mark them most recently used. */
  acquire(hashIds: ReadonlyArray<number>, n: number): void {
    for (let i = 0; i < n; i++) {
      const id = hashIds[i]!
      const r = this.refs.get(id) ?? 0
      if (r === 0) this.pinned++
      this.refs.delete(id)
      this.refs.set(id, r + 1)
    }
  }

  /** Insert blocks `from..to-1` held by the caller. Returns the number of blocks that were new. */
  insertHeld(hashIds: ReadonlyArray<number>, from: number, to: number): number {
    let added = 0
    for (let i = from; i < to; i++) {
      const id = hashIds[i]!
      const r = this.refs.get(id)
      if (r === undefined) added++
      if (!r) this.pinned++
      this.refs.delete(id)
      this.refs.set(id, (r ?? 0) + 1)
    }
    return added
  }

  /** Stop holding the first `n` blocks. */
  release(hashIds: ReadonlyArray<number>, n: number): void {
    for (let i = 0; i < n; i++) {
      const id = hashIds[i]!
      const r = this.refs.get(id)
      if (r === undefined) continue
      if (r === 1) this.pinned--
      this.refs.set(id, r - 1)
    }
  }

  /** Evict unheld blocks, oldest first, until `blocks` are freed or none is left. Returns blocks freed. */
  evict(blocks: number): number {
    let freed = 0
    if (blocks <= 0 || this.pinned === this.refs.size) return 0
    for (const [id, r] of this.refs) {
      if (r !== 0) continue
      this.refs.delete(id)
      if (++freed >= blocks) break
    }
    return freed
  }
}
