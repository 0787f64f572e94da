/**
 * AIBrix's local prefix-cache indexer (`pkg/utils/prefixcacheindexer/hash.go`): byte-block hashes
 * chained with XXH64 and a persistent map block-hash -> pods.
 */

import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import { xxhash } from "../../internal/hashes.js"

/** Block hashes of the UTF-8 bytes of `text`: full blocks only, `h = XXH64(seed; LE64(parent) ++ block)`. */
export const aibrixPrefixHashes = (bytes: Uint8Array, blockSize: number, seed = 0n): Array<bigint> => {
  const out: Array<bigint> = []
  let parent = seed
  const buf = Buffer.alloc(8 + blockSize)
  for (let i = 0; i + blockSize <= bytes.length; i += blockSize) {
    buf.writeBigUInt64LE(parent, 0)
    buf.set(bytes.subarray(i, i + blockSize), 8)
    parent = xxhash().xxh64(buf, seed)
    out.push(parent)
  }
  return out
}

/** hash (decimal or the trace's own id) -> pods holding it, in insertion order. */
export type PrefixIndex = HashMap.HashMap<string, ReadonlyArray<string>>

export const emptyPrefixIndex = (): PrefixIndex => HashMap.empty()

export const podsOf = (ix: PrefixIndex, h: string): ReadonlyArray<string> =>
  Option.getOrUndefined(HashMap.get(ix, h)) ?? []

/** `AddPrefix(hashes, model, pod)`. */
export const addPrefix = (ix: PrefixIndex, hashes: ReadonlyArray<string>, pod: string): PrefixIndex => {
  let out = ix
  for (const h of hashes) {
    const ps = podsOf(out, h)
    if (!ps.includes(pod)) out = HashMap.set(out, h, [...ps, pod])
  }
  return out
}

/**
 * `seqSearchPrefix` over the candidate pods: for block i, every candidate holding it gets
 * `(i+1)*100/n` (integer division); the others drop out; stop at a block no candidate holds.
 */
export const matchPrefix = (
  ix: PrefixIndex,
  hashes: ReadonlyArray<string>,
  candidates: ReadonlyArray<string>
): Map<string, number> => {
  const matched = new Map<string, number>()
  let cand = candidates
  const n = hashes.length
  for (let i = 0; i < n; i++) {
    const holders = podsOf(ix, hashes[i]!)
    if (holders.length === 0) break
    const keep = cand.filter((p) => holders.includes(p))
    if (keep.length === 0) break
    const pct = Math.floor(((i + 1) * 100) / n)
    for (const p of keep) matched.set(p, pct)
    cand = keep
  }
  return matched
}
