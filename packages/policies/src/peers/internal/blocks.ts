/**
 * How a peer policy that wants request text or token ids reads a trace request that carries only
 * its prefix block hashes (`RouteRequest.prefixHashes`, Mooncake's `hash_ids`, 512 tokens a block).
 */
import { xxh3Hex, xxh3Of } from "./hashes.js"

const enc = new TextEncoder()

/** XXH3-64 (seed 0) of the UTF-8 block hash, as a bigint. */
const h64 = (s: string): bigint => xxh3Of(enc.encode(s))

/**
 * Text for a char-level tree: each block becomes two astral code points from 40 bits of its XXH3
 * (collision-free in practice, no partial credit between different blocks), so matched characters /
 * input characters = matched blocks / blocks.
 */
export const blocksAsText = (hashes: ReadonlyArray<string> | undefined): string => {
  if (hashes === undefined) return ""
  let s = ""
  for (const b of hashes) {
    const v = h64(b)
    s += String.fromCodePoint(0x10000 + Number(v & 0xfffffn), 0x10000 + Number((v >> 20n) & 0xfffffn))
  }
  return s
}

/** Token ids for a u32 token hash: a decimal block hash below 2^32 as itself, others folded by XXH3. */
export const blocksAsTokenIds = (hashes: ReadonlyArray<string> | undefined): Array<number> | undefined =>
  hashes?.map((b) => {
    if (/^[0-9]{1,10}$/.test(b) && Number(b) < 2 ** 32) return Number(b)
    return Number(h64(b) & 0xffffffffn)
  })

/** A prompt for 128-character chunking: each block becomes exactly one chunk (its hash, padded to 128). */
export const blocksAsChunks = (hashes: ReadonlyArray<string> | undefined): string =>
  hashes === undefined
    ? ""
    : hashes.map((b) => (b.length > 128 ? xxh3Hex(enc.encode(b)) : b).padStart(128, "#")).join("")
