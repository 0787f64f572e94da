/**
 * A router-side estimate of each rank's prefix cache (`step-time-aware`): which ranks were last
 * sent a prompt block, and each rank's sent-token count then (an LRU of a rank's capacity keeps a
 * block until that many newer tokens passed). Blocks are recorded at ladder positions `0, 1, 3, 7,
 * 15`, then every 16th, and the longest cached prefix found by a binary search over the ladder
 * (exact below 16 blocks; block hashes are chained, so a rank holding position `i` holds every
 * block before it).
 *
 * @internal
 */
import { emptyTrie, getTrie, type HashTrie, setTrie } from "./HashTrie.js"

/**
 * Block hash -> `[rank, stamp, rank, stamp, ...]`, one pair per rank it was sent to (at most
 * dpSize: a cap would drop holders of a popular prefix and herd its traffic onto the ranks still
 * listed), most recent first; `stamp` is the rank's sent-token count when the block was last sent
 * to it.
 *
 * @internal
 */
export type RankPrefixes = HashTrie<ReadonlyArray<number>>

/** An empty index keeping at most `maxBlocks` block entries. @internal */
export const emptyRankPrefixes = (maxBlocks: number): RankPrefixes => emptyTrie(maxBlocks)

/** `key`'s list with `rank` first, holding `stamp` (its older pair dropped, the others in order). */
const touch = (index: RankPrefixes, key: string, rank: number, stamp: number): RankPrefixes => {
  const old = getTrie(index, key)
  const list = [rank, stamp]
  if (old !== undefined)
    for (let i = 0; i < old.length; i += 2) if (old[i] !== rank) list.push(old[i]!, old[i + 1]!)
  return setTrie(index, key, list)
}

/** How many ladder positions lie below `blocks` (0 for 0 blocks). @internal */
export const ladderCount = (blocks: number): number => {
  if (blocks <= 0) return 0
  if (blocks <= 16) return 32 - Math.clz32(blocks)
  return 4 + Math.floor(blocks / 16)
}

/** The block index of ladder entry `i`: `2^i - 1` up to 15, then `16 (i - 3) - 1`. @internal */
export const ladderBlock = (i: number): number => (i <= 4 ? (1 << i) - 1 : 16 * (i - 3) - 1)

/**
 * Working memory of {@link matchRankPrefixes}, reused call after call by one policy instance:
 * row `i` (dpSize slots) holds the stamps of ladder entry `i`'s ranks, valid where `mark` equals
 * the call's `epoch` (`rowMark[i]`: row `i` was filled in this call). Filling a row once per entry
 * looked up makes each holder's probe O(1) (a scan of the entry per holder made a popular prefix
 * cost holders x entry length: on the built code the scan was half the search at 8 ranks, and
 * quadratic at 1,024).
 *
 * @internal
 */
export interface MatchScratch {
  stamp: Float64Array
  mark: Float64Array
  rowMark: Float64Array
  epoch: number
}

/** Empty working memory for {@link matchRankPrefixes}. @internal */
export const emptyMatchScratch = (): MatchScratch => ({
  stamp: new Float64Array(0),
  mark: new Float64Array(0),
  rowMark: new Float64Array(0),
  epoch: 0
})

/** Row `row` of `w`: the stamps of `entry`'s ranks below `n` (the first pair of a rank counts). */
const fillRow = (w: MatchScratch, row: number, n: number, entry: ReadonlyArray<number> | undefined): void => {
  const { mark, stamp, epoch } = w
  w.rowMark[row] = epoch
  if (entry === undefined) return
  const base = row * n
  for (let i = 0; i < entry.length; i += 2) {
    const rank = entry[i]!
    if (rank >= n || mark[base + rank] === epoch) continue
    mark[base + rank] = epoch
    stamp[base + rank] = entry[i + 1]!
  }
}

/**
 * Per rank, how many leading blocks of `hashes` the rank is taken to still hold, written into
 * `out` (length dpSize): a rank holds a block when the index lists it and `held(rank, stamp)` is
 * true (the caller's eviction rule, e.g. fewer tokens sent since than the rank's cache holds).
 * Ranks not listed for the first block get 0; each listed rank gets a binary search over the
 * ladder: at most `holders * ceil(log2(ladder)) + 1` lookups.
 *
 * @internal
 */
export const matchRankPrefixes = (
  index: RankPrefixes,
  hashes: ReadonlyArray<string> | undefined,
  held: (rank: number, stamp: number) => boolean,
  out: Array<number>,
  w: MatchScratch = emptyMatchScratch()
): void => {
  const n = out.length
  for (let r = 0; r < n; r++) out[r] = 0
  if (hashes === undefined || hashes.length === 0) return
  const first = getTrie(index, hashes[0]!)
  if (first === undefined) return
  const count = ladderCount(hashes.length)
  if (w.rowMark.length < count || w.mark.length < count * n) {
    w.rowMark = new Float64Array(count)
    w.mark = new Float64Array(count * n)
    w.stamp = new Float64Array(count * n)
    w.epoch = 0
  }
  const epoch = ++w.epoch
  const { mark, stamp, rowMark } = w
  for (let j = 0; j < first.length; j += 2) {
    const rank = first[j]!
    if (rank >= n || !held(rank, first[j + 1]!)) continue
    // the last ladder entry this rank holds: entry 0 is held, search (lo, hi)
    let lo = 0
    let hi = count
    while (hi - lo > 1) {
      const mid = (lo + hi) >>> 1
      // the holders' searches share their lookups: a row is filled when a search first reaches it
      if (rowMark[mid] !== epoch) fillRow(w, mid, n, getTrie(index, hashes[ladderBlock(mid)]!))
      const k = mid * n + rank
      if (mark[k] === epoch && held(rank, stamp[k]!)) lo = mid
      else hi = mid
    }
    out[rank] = ladderBlock(lo) + 1
  }
}

/**
 * Record that `rank` was sent `hashes` when its sent-token count was `stamp`: each ladder
 * position's entry lists `rank` first with that stamp (its older pair dropped).
 *
 * @internal
 */
export const recordRankPrefixes = (
  index: RankPrefixes,
  hashes: ReadonlyArray<string> | undefined,
  rank: number,
  stamp: number
): RankPrefixes => {
  if (hashes === undefined) return index
  const count = ladderCount(hashes.length)
  let next = index
  for (let i = 0; i < count; i++) next = touch(next, hashes[ladderBlock(i)]!, rank, stamp)
  return next
}

/**
 * How far a rank's prefix clock jumps when it is marked unhealthy: 2^40 tokens, more than any
 * rank's cache holds, so each block recorded before reads as evicted (exact in a float64 for
 * thousands of such marks). @internal
 */
export const FORGET_TOKENS = 2 ** 40
