/**
 * llm-d's approximate prefix-cache producer: the `estimate` tokenizer, XXH64 block hashing chained
 * over the model (and cache salt), the block size rule, and the per-endpoint LRU index.
 *
 * @since 0.2.0
 */
import { xxhash } from "../internal/hashes.js"
import type { LlmdEndpoint } from "./Endpoint.js"
import { addToIndex, emptyLruIndex, type LruIndex, matchLongest } from "./internal/lruIndex.js"

/**
 * The producer's knobs (defaults: `autoTune` true, `blockSizeTokens` 16, `maxPrefixTokensToMatch`
 * 131072, `maxPrefixBlocksToMatch` 2048, `lruCapacityPerServer` 31250).
 *
 * @category llm-d
 * @since 0.2.0
 */
export interface LlmdPrefixProducerConfig {
  readonly autoTune?: boolean | undefined
  readonly blockSizeTokens?: number | undefined
  readonly maxPrefixTokensToMatch?: number | undefined
  readonly maxPrefixBlocksToMatch?: number | undefined
  readonly lruCapacityPerServer?: number | undefined
}

/**
 * The prefix index (hash -> endpoints; per endpoint an LRU of hashes), persistent.
 *
 * @category llm-d
 * @since 0.2.0
 */
export type LlmdPrefixIndex = LruIndex

/**
 * An empty prefix index.
 *
 * @example
 * ```ts
 * import { LlmD } from "@loadledger/policies"
 * LlmD.llmdMatch(LlmD.llmdPrefixIndex(), ["1"]).size // => 0
 * ```
 *
 * @category llm-d
 * @since 0.2.0
 */
export const llmdPrefixIndex = (): LlmdPrefixIndex => emptyLruIndex()

/**
 * The `estimate` tokenizer (`packBytes`): UTF-8 bytes, zero-padded to a multiple of 4, read as
 * little-endian uint32.
 *
 * Upstream: llm-d/llm-d-router `pkg/epp/framework/plugins/requestcontrol/dataproducer/tokenizer/estimate.go`
 * at ebab687927f5331c1b39defcb579a07951bce56c.
 *
 * @example
 * ```ts
 * import { LlmD } from "@loadledger/policies"
 * LlmD.llmdEstimateTokens("Hello") // => [1819043144, 111]
 * ```
 *
 * @category llm-d
 * @since 0.2.0
 */
export const llmdEstimateTokens = (text: string): Array<number> => {
  const b = new TextEncoder().encode(text)
  const padded = new Uint8Array(Math.ceil(b.length / 4) * 4)
  padded.set(b)
  const v = new DataView(padded.buffer)
  const out: Array<number> = []
  for (let i = 0; i < padded.length; i += 4) out.push(v.getUint32(i, true))
  return out
}

/**
 * The block size the producer uses: `blockSizeTokens` (16), replaced by the first candidate's
 * `CacheBlockSize` when `autoTune` and it is positive, then at least 64.
 *
 * @example
 * ```ts
 * import { LlmD } from "@loadledger/policies"
 * LlmD.llmdBlockSize({}, [{ id: "w0", metrics: { cacheBlockSize: 128 } }]) // => 128
 * LlmD.llmdBlockSize({}, []) // => 64
 * ```
 *
 * @category llm-d
 * @since 0.2.0
 */
export const llmdBlockSize = (c: LlmdPrefixProducerConfig, eps: ReadonlyArray<LlmdEndpoint>): number => {
  let bs = c.blockSizeTokens ?? 16
  const first = eps[0]?.metrics.cacheBlockSize ?? 0
  if ((c.autoTune ?? true) && first > 0) bs = first
  return Math.max(bs, 64)
}

const u64 = (x: bigint): Buffer => {
  const b = Buffer.alloc(8)
  b.writeBigUInt64LE(x)
  return b
}

/**
 * The request's block hashes (decimal strings): `h0 = XXH64(model ++ cacheSalt)`, then per block of
 * `blockSize` tokens (the last partial block included, at most `maxPrefixTokensToMatch / blockSize`
 * blocks) `h_i = XXH64(LE64(XXH64(LE32 tokens)) ++ LE64(h_{i-1}))`, seed 0.
 *
 * Upstream: llm-d/llm-d-router `pkg/epp/framework/plugins/requestcontrol/dataproducer/prefixhash/hashing.go`
 * and `approximateprefix/plugin.go` at ebab687927f5331c1b39defcb579a07951bce56c; XXH64 from
 * `@node-rs/xxhash` (upstream `cespare/xxhash/v2`).
 *
 * @example
 * ```ts
 * import { LlmD } from "@loadledger/policies"
 * const t = Array.from({ length: 130 }, (_, i) => i + 1)
 * LlmD.llmdBlockHashes(t, 64, "m", "", {})
 * // => ["16548423390634101595", "1060451808625023766", "6883747428488385854"]
 * LlmD.llmdBlockHashes(LlmD.llmdEstimateTokens("abc"), 64, "m", "salt", {}) // => ["13881814134002970488"]
 * ```
 *
 * @category llm-d
 * @since 0.2.0
 */
export const llmdBlockHashes = (
  tokens: ReadonlyArray<number>,
  blockSize: number,
  model: string,
  cacheSalt: string,
  c: LlmdPrefixProducerConfig
): Array<string> => {
  const maxTokens = c.maxPrefixTokensToMatch ?? 131072
  const maxBlocks = maxTokens > 0 ? Math.floor(maxTokens / blockSize) : (c.maxPrefixBlocksToMatch ?? 2048)
  const limit = maxTokens <= 0 && maxBlocks === 0 ? Number.POSITIVE_INFINITY : maxBlocks
  let prev = xxhash().xxh64(Buffer.from(model + cacheSalt, "utf8"), 0n)
  const out: Array<string> = []
  for (let i = 0; i * blockSize < tokens.length; i++) {
    if (i >= limit) break
    const block = tokens.slice(i * blockSize, Math.min((i + 1) * blockSize, tokens.length))
    const buf = Buffer.alloc(block.length * 4)
    block.forEach((t, j) => {
      buf.writeUInt32LE(t >>> 0, j * 4)
    })
    const bid = xxhash().xxh64(buf, 0n)
    prev = xxhash().xxh64(Buffer.concat([u64(bid), u64(prev)]), 0n)
    out.push(prev.toString())
  }
  return out
}

/**
 * `matchLongestPrefix`: walk the hashes, stop at the first no endpoint holds, credit every holder of
 * each block. Endpoints absent from the map matched 0 blocks.
 *
 * @example
 * ```ts
 * import { LlmD } from "@loadledger/policies"
 * const ix = LlmD.llmdIndexAdd(LlmD.llmdPrefixIndex(), ["a", "b"], "w0", 100)
 * LlmD.llmdMatch(ix, ["a", "b", "c"]).get("w0") // => 2
 * ```
 *
 * @category llm-d
 * @since 0.2.0
 */
export const llmdMatch = (index: LlmdPrefixIndex, hashes: ReadonlyArray<string>): Map<string, number> =>
  matchLongest(index, hashes)

/**
 * `indexer.Add(hashes, endpoint)` (PreRequest, after the pick): LRU adds with eviction of the oldest
 * hash beyond the endpoint's capacity (fixed when its LRU is created: `capacityIfNew`), then every
 * hash maps to the endpoint (a hash evicted in the same call is re-added, as upstream).
 *
 * @example
 * ```ts
 * import { LlmD } from "@loadledger/policies"
 * const ix = LlmD.llmdIndexAdd(LlmD.llmdPrefixIndex(), ["a", "b", "c"], "w0", 2)
 * LlmD.llmdMatch(ix, ["a"]).get("w0") // => 1
 * ```
 *
 * @category llm-d
 * @since 0.2.0
 */
export const llmdIndexAdd = (
  index: LlmdPrefixIndex,
  hashes: ReadonlyArray<string>,
  endpoint: string,
  capacityIfNew: number
): LlmdPrefixIndex => addToIndex(index, hashes, endpoint, capacityIfNew)

/**
 * The LRU capacity an endpoint's index gets when first created: its `CacheNumBlocks` when
 * `autoTune` and positive, else `lruCapacityPerServer` when positive, else 31250.
 *
 * @example
 * ```ts
 * import { LlmD } from "@loadledger/policies"
 * LlmD.llmdLruCapacity({}, { id: "w0", metrics: { cacheNumBlocks: 900 } }) // => 900
 * LlmD.llmdLruCapacity({ lruCapacityPerServer: 5 }, { id: "w0", metrics: {} }) // => 5
 * ```
 *
 * @category llm-d
 * @since 0.2.0
 */
export const llmdLruCapacity = (c: LlmdPrefixProducerConfig, e: LlmdEndpoint): number => {
  const n = e.metrics.cacheNumBlocks ?? 0
  if ((c.autoTune ?? true) && n > 0) return n
  const l = c.lruCapacityPerServer ?? 0
  return l > 0 ? l : 31250
}
