/**
 * The hash functions the peer routers use, all synchronous, from maintained npm packages:
 *
 * - XXH3-64 (seed 0) of bytes: SMG `prefix_hash` (xxhash-rust `xxh3_64`), via `@node-rs/xxhash`
 *   1.7.8 (napi-rs bindings of the reference C/Rust xxHash; prebuilt binaries ship in the package).
 * - XXH64 (seed 0) of a UTF-8 string: production-stack `HashTrie` (python-xxhash `xxh64`), same package.
 * - BLAKE3 of a UTF-8 string, first 8 bytes read little-endian: SMG hash ring positions, via
 *   `@noble/hashes` 2.4.0 (audited pure JS).
 * - MD5 of a UTF-8 string as a 128-bit integer: uhashring's `MetaRing` (production-stack session),
 *   via `@noble/hashes`.
 *
 * No top-level `await`: the package stays loadable through `require(esm)`.
 */

import { createRequire } from "node:module"
import { blake3 } from "@noble/hashes/blake3.js"
import { md5 } from "@noble/hashes/legacy.js"

type XxHash = typeof import("@node-rs/xxhash")
let loaded: XxHash | undefined
/**
 * `@node-rs/xxhash`, loaded on the first hash: a native addon that takes about 40 ms of CPU to
 * load, which a run of policies that never hash (the SGLang and vLLM ones, most own ones) and
 * `loadledger --help` of any command would otherwise pay at start-up. CommonJS, so `require` loads
 * it synchronously where the hash is asked for.
 */
export const xxhash = (): XxHash => {
  loaded ??= createRequire(import.meta.url)("@node-rs/xxhash") as XxHash
  return loaded
}

const enc = new TextEncoder()

/** XXH3-64 (seed 0) of `bytes`, 16 lowercase hex digits (Rust `format!("{:016x}")`). */
export const xxh3Hex = (bytes: Uint8Array): string =>
  xxhash().xxh3.xxh64(bytes).toString(16).padStart(16, "0")

/** XXH3-64 (seed 0) of `bytes` as an unsigned bigint. */
export const xxh3Of = (bytes: Uint8Array): bigint => xxhash().xxh3.xxh64(bytes)

/** XXH64 (seed 0) of the UTF-8 bytes of `text`, as an unsigned bigint. */
export const xxh64Of = (text: string): bigint => xxhash().xxh64(enc.encode(text))

/** First 8 bytes of BLAKE3(UTF-8 `text`) as a little-endian u64. */
export const blake3U64 = (text: string): bigint => {
  const b = blake3(enc.encode(text))
  let v = 0n
  for (let i = 7; i >= 0; i--) v = (v << 8n) | BigInt(b[i]!)
  return v
}

/** MD5(UTF-8 `text`) as a 128-bit unsigned bigint (Python `int(md5(..).hexdigest(), 16)`). */
export const md5Int = (text: string): bigint => {
  const b = md5(enc.encode(text))
  let v = 0n
  for (let i = 0; i < 16; i++) v = (v << 8n) | BigInt(b[i]!)
  return v
}
