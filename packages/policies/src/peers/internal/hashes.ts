/**
 * The hash functions the peer routers use, from `hash-wasm` 4.13.0 (maintained WebAssembly builds
 * of the reference C implementations). hash-wasm builds its hashers asynchronously, once: this
 * module awaits them at load (top-level `await`, ESM only); afterwards every call is synchronous.
 *
 * - XXH3-64 (seed 0) of bytes: SMG `prefix_hash` (xxhash-rust `xxh3_64`).
 * - XXH64 (seed 0) of a UTF-8 string: production-stack `HashTrie` (python-xxhash `xxh64`).
 * - BLAKE3 of a UTF-8 string, first 8 bytes read little-endian: SMG hash ring positions.
 * - MD5 of a UTF-8 string as a 128-bit integer: uhashring's `MetaRing` (production-stack session).
 */
import { createBLAKE3, createMD5, createXXHash3, createXXHash64 } from "hash-wasm"

const xxh3 = await createXXHash3()
const xxh64 = await createXXHash64()
const blake3 = await createBLAKE3()
const md5 = await createMD5()

/** XXH3-64 (seed 0) of `bytes`, 16 lowercase hex digits (Rust `format!("{:016x}")`). */
export const xxh3Hex = (bytes: Uint8Array): string => {
  xxh3.init()
  xxh3.update(bytes)
  return xxh3.digest("hex")
}

/** XXH64 (seed 0) of the UTF-8 bytes of `text`, as an unsigned bigint. */
export const xxh64Of = (text: string): bigint => {
  xxh64.init()
  xxh64.update(text)
  return BigInt(`0x${xxh64.digest("hex")}`)
}

/** First 8 bytes of BLAKE3(UTF-8 `text`) as a little-endian u64. */
export const blake3U64 = (text: string): bigint => {
  blake3.init()
  blake3.update(text)
  const b = blake3.digest("binary")
  let v = 0n
  for (let i = 7; i >= 0; i--) v = (v << 8n) | BigInt(b[i]!)
  return v
}

/** MD5(UTF-8 `text`) as a 128-bit unsigned bigint (Python `int(md5(..).hexdigest(), 16)`). */
export const md5Int = (text: string): bigint => {
  md5.init()
  md5.update(text)
  return BigInt(`0x${md5.digest("hex")}`)
}
