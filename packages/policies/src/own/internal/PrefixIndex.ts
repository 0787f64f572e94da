/**
 * The router-side index of the prompt blocks each rank was sent.
 *
 * @internal
 */
import { emptyTrie, getTrie, type HashTrie, mapTrieValues, setTrie } from "./HashTrie.js"

/** Ranks the bitmask index can name (bits of a 32-bit integer, sign bit unused). */
export const indexedRanks = 31

export type PrefixIndex = HashTrie<number>

/** An empty index keeping at most `maxBlocks` block hashes. */
export const emptyPrefixIndex = (maxBlocks: number): PrefixIndex => emptyTrie(maxBlocks)

export const matchedBlocks = (
  index: PrefixIndex,
  hashes: ReadonlyArray<string> | undefined,
  out: Array<number>
): void => {
  const n = out.length
  for (let r = 0; r < n; r++) out[r] = 0
  if (hashes === undefined || n > indexedRanks) return
  let alive = n === indexedRanks ? 0x7fffffff : (1 << n) - 1
  for (let i = 0; i < hashes.length && alive !== 0; i++) {
    alive &= getTrie(index, hashes[i]!) ?? 0
    for (let r = 0, m = alive; m !== 0; r++, m >>>= 1) if ((m & 1) !== 0) out[r] = i + 1
  }
}

/** Record that `rank` was sent every block of `hashes` (rewritten, so recently sent blocks stay). */
export const recordBlocks = (
  index: PrefixIndex,
  hashes: ReadonlyArray<string> | undefined,
  rank: number
): PrefixIndex => {
  if (hashes === undefined || rank >= indexedRanks) return index
  const bit = 1 << rank
  let next = index
  for (let i = 0; i < hashes.length; i++) {
    const h = hashes[i]!
    next = setTrie(next, h, (getTrie(next, h) ?? 0) | bit)
  }
  return next
}

/** The index without the ranks of `mask` (bit r = rank r). */
export const forgetRanks = (index: PrefixIndex, mask: number): PrefixIndex =>
  mask === 0 ? index : mapTrieValues(index, (m) => m & ~mask)

/** Bit r set where rank r was healthy in `before` and is not in `after` (ranks below 31). */
export const wentDown = (before: ReadonlyArray<boolean>, after: ReadonlyArray<boolean>): number => {
  let mask = 0
  for (let r = 0; r < Math.min(after.length, indexedRanks); r++)
    if (before[r] !== false && !after[r]) mask |= 1 << r
  return mask
}
