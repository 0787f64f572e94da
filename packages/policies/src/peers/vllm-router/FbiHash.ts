/**
 * The hash vllm-project/router's key-based policies share (`fbi_hash`): mcrouter's FurcHash of the
 * key into 23 bits, widened to 64 bits by MurmurHash64A. Written from vllm-project/router
 * `src/policies/consistent_hash.rs` (commit `080589a0b729acb003907a0bdd53809b229dc805`:
 * `murmur_hash_64a`, `murmur_rehash_64a`, `furc_hash`, `furc_get_bit`, `fbi_hash`).
 *
 * @since 0.7.0
 */

const MASK = (1n << 64n) - 1n
const M = 0xc6a4a7935bd1e995n
const SEED = 4193360111
const FURC_SHIFT = 23
const MAX_TRIES = 32
const encoder = new TextEncoder()

const mul = (a: bigint, b: bigint): bigint => (a * b) & MASK

/**
 * MurmurHash64A of `bytes` with a 32-bit `seed` (u64 wrapping arithmetic, little-endian 8-byte
 * blocks, the tail folded byte by byte), as upstream's `murmur_hash_64a`.
 *
 * @example
 * ```ts
 * import { VllmRouter } from "@loadledger/policies"
 * VllmRouter.murmurHash64A(new Uint8Array([0, 0, 0, 0]), 4193360111).toString(16).length > 0 // => true
 * ```
 *
 * @category vllm-router
 * @since 0.7.0
 */
export const murmurHash64A = (bytes: Uint8Array, seed: number): bigint => {
  let h = BigInt(seed >>> 0) ^ mul(BigInt(bytes.length), M)
  const full = bytes.length - (bytes.length % 8)
  for (let i = 0; i < full; i += 8) {
    let k = 0n
    for (let j = 7; j >= 0; j--) k = (k << 8n) | BigInt(bytes[i + j]!)
    k = mul(k, M)
    k ^= k >> 47n
    k = mul(k, M)
    h ^= k
    h = mul(h, M)
  }
  if (full < bytes.length) {
    for (let i = bytes.length - 1; i >= full; i--) h ^= BigInt(bytes[i]!) << BigInt(8 * (i - full))
    h = mul(h, M)
  }
  h ^= h >> 47n
  h = mul(h, M)
  h ^= h >> 47n
  return h
}

/** Upstream `murmur_rehash_64a`: MurmurHash64A of one u64 with the fixed seed. */
const rehash = (k0: bigint): bigint => {
  let h = BigInt(SEED) ^ mul(8n, M)
  let k = mul(k0, M)
  k ^= k >> 47n
  k = mul(k, M)
  h ^= k
  h = mul(h, M)
  h ^= h >> 47n
  h = mul(h, M)
  h ^= h >> 47n
  return h
}

/**
 * FurcHash of `key` (its UTF-8 bytes) into `0..m-1`, as upstream's Rust `furc_hash`: `d` =
 * ceil(log2 m), bits drawn from a chain of Murmur hashes 64 at a time; a leading 0 bit lowers
 * `d` (upstream returns 0 when `d` is already 0 at that point), a number `>= m` retries, up to 32
 * tries, then 0. `m <= 1` gives 0.
 *
 * @example
 * ```ts
 * import { VllmRouter } from "@loadledger/policies"
 * VllmRouter.furcHash("a", 2 ** 23 - 1) // => 7695180
 * VllmRouter.furcHash("a", 1) // => 0
 * ```
 *
 * @category vllm-router
 * @since 0.7.0
 */
export const furcHash = (key: string, m: number): number => {
  if (m <= 1) return 0
  const bytes = encoder.encode(key)
  const cache: Array<bigint> = []
  const bit = (idx: number): number => {
    const ord = idx >>> 6
    while (cache.length <= ord)
      cache.push(cache.length === 0 ? murmurHash64A(bytes, SEED) : rehash(cache[cache.length - 1]!))
    return Number((cache[ord]! >> BigInt(idx & 63)) & 1n)
  }
  let d = 0
  while (m > 2 ** d) d++
  let a = d
  for (let t = 0; t < MAX_TRIES; t++) {
    while (bit(a) === 0) {
      if (d === 0) return 0
      d -= 1
      a = d
    }
    a += FURC_SHIFT
    let num = 1
    for (let i = 0; i < Math.max(0, d - 1); i++) {
      num = num * 2 + bit(a)
      a += FURC_SHIFT
    }
    if (num < m) return num
  }
  return 0
}

const furcBytes = new Uint8Array(4)

/**
 * Upstream `ConsistentHashPolicy::fbi_hash`: `furcHash(key, 2^23 - 1)` as 4 little-endian bytes,
 * hashed by MurmurHash64A with seed 4193360111; a u64 as a `bigint`. Only 2^23 - 1 values occur,
 * so distinct keys collide more often than a 64-bit hash suggests (ring points overwrite each
 * other; rendezvous scores tie).
 *
 * @example
 * ```ts
 * import { VllmRouter } from "@loadledger/policies"
 * VllmRouter.fbiHash("a").toString(16) // => "29d1ab12ec5fea11"
 * VllmRouter.fbiHash("test_session_123").toString(16) // => "bcc9b06b6bade78a"
 * ```
 *
 * @category vllm-router
 * @since 0.7.0
 */
export const fbiHash = (key: string): bigint => {
  const f = furcHash(key, 2 ** 23 - 1)
  furcBytes[0] = f & 0xff
  furcBytes[1] = (f >>> 8) & 0xff
  furcBytes[2] = (f >>> 16) & 0xff
  furcBytes[3] = (f >>> 24) & 0xff
  return murmurHash64A(furcBytes, SEED)
}
