/**
 * The token ids the simulator hands a policy (`RouteRequest.tokenIds`) for each trace request: the
 * trace's own (`TraceRequest.tokenIds`) when it has them, else ids synthesised from its Mooncake
 * block hashes (`hashIds`), else ids synthesised from its request id, so that token-keyed policies
 * (`smg/prefix-hash`) route every trace, Azure and BurstGPT included. Pure: no clock, no
 * `Math.random`, the same request gives the same ids in every run whatever `SimConfig.seed`.
 *
 * @since 0.5.0
 */
import { createRequire } from "node:module"
import { BLOCK_TOKENS } from "./internal/prefixCache.js"
import { tokenIdsTally } from "./internal/tokenTally.js"
import type { TokenIdsOrigin, TraceTokenIds } from "./TokenIdsTypes.js"
import type { TraceRequest } from "./Trace.js"

/**
 * How many leading token ids the simulator synthesises per request at most: 256, SMG
 * `prefix_hash`'s default `prefixTokenCount`, the most any registered policy reads (raise it with
 * the first reader that needs more).
 *
 * **Why a cap**: the ids are built when the request is routed and dropped after, so memory is never
 * the issue; the cost is time, paid by every policy whether it reads them or not: each id is built
 * (one MurmurHash3 finaliser round) and checked by every `route` (`checkRequestFields`).
 * Full-length ids would be 22 million per policy run on the Azure conversation trace (19,366
 * requests, 1,155 tokens on average) and 145 million on Mooncake's conversation trace (12,031
 * requests, 12,035 on average), for one reader that hashes 256. Measured on one compare cell
 * (Mooncake conversation at 0.307x, `round-robin`, 2-core machine under load, CPU seconds per cell,
 * two runs each): 1.25 / 1.26 with no ids, 1.30 / 1.25 at 256, 1.40 / 1.35 at 512. A policy built
 * with a `prefixTokenCount` above 256 hashes the first 256.
 *
 * @example
 * ```ts
 * import { MAX_SYNTHETIC_TOKEN_IDS } from "@loadledger/sim"
 * MAX_SYNTHETIC_TOKEN_IDS // => 256
 * ```
 *
 * @category token ids
 * @since 0.5.0
 */
export const MAX_SYNTHETIC_TOKEN_IDS = 256

/**
 * One request's token ids and where they came from.
 *
 * @category token ids
 * @since 0.5.0
 */
export interface RequestTokenIds {
  readonly origin: TokenIdsOrigin
  readonly tokenIds: ReadonlyArray<number>
}

type XxHash = typeof import("@node-rs/xxhash")
let xxhash: XxHash | undefined

/**
 * The 64-bit key of a string as two u32 words: XXH3-64 (seed 0) of its UTF-8 bytes via
 * `@node-rs/xxhash`, a native addon loaded on the first key (a command that replays nothing never
 * loads it). The string goes to the addon as it is (it hashes the UTF-8 bytes, the same key as of
 * `TextEncoder`'s bytes, tested): half the cost of encoding it here first.
 */
const keyOf = (text: string): readonly [number, number] => {
  xxhash ??= createRequire(import.meta.url)("@node-rs/xxhash") as XxHash
  const h = xxhash.xxh3.xxh64(text)
  return [Number(h >> 32n), Number(h & 0xffffffffn)]
}

/**
 * Block hash -> its sequence's key, for the blocks seen lately (requests sharing a prefix share
 * its first block): cleared when it reaches `BLOCK_KEYS_HELD` entries, so it stays small.
 */
const blockKeys = new Map<number, readonly [number, number]>()
const BLOCK_KEYS_HELD = 4096
const blockKeyOf = (hash: number): readonly [number, number] => {
  let k = blockKeys.get(hash)
  if (k === undefined) {
    if (blockKeys.size >= BLOCK_KEYS_HELD) blockKeys.clear()
    k = keyOf(`block:${hash}`)
    blockKeys.set(hash, k)
  }
  return k
}

/** MurmurHash3's 32-bit finaliser (Austin Appleby, public domain): a bijection on u32. */
const fmix32 = (x: number): number => {
  let h = x ^ (x >>> 16)
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}

/**
 * Id `j` of the sequence keyed `[hi, lo]`: the finaliser of `(lo + j * golden) ^ hi` (SplitMix's
 * Weyl sequence). For one key, `j -> id` is injective over `0..2^32-1` (each step is a bijection),
 * so a sequence never repeats an id; two keys' sequences agree at a position with probability
 * about 2^-32.
 */
const idAt = (hi: number, lo: number, j: number): number =>
  fmix32(((lo + Math.imul(j, 0x9e3779b9)) ^ hi) >>> 0)

/**
 * A request's token ids: `TraceRequest.tokenIds` as they are when the trace carried them (origin
 * `"trace"`); otherwise the first `min(inputLength, MAX_SYNTHETIC_TOKEN_IDS)` ids, synthesised.
 *
 * - **From block hashes** (`"block-hashes"`, the request has `hashIds`): token `j` lies in block
 *   `b = floor(j / 512)` (Mooncake's 512-token blocks) and is id `j mod 512` of the sequence keyed by
 *   that block's hash (XXH3-64 of `block:<hash>`). Two requests whose leading `k` block hashes are
 *   equal get equal ids over those `k` blocks, so they share a `smg/prefix-hash` key (its first 256
 *   tokens lie in the first block). Tokens past the last hashed block come from the request's own
 *   key, as below.
 * - **From the request id** (`"synthetic"`, no `hashIds`): id `j` of the sequence keyed by the
 *   request (XXH3-64 of `request:<requestId>`), distinct for every request id (two requests agree
 *   at a position with probability 2^-32, on a whole 256-token prefix never in practice). Two trace
 *   rows with the same `requestId` get the same ids: `parseTrace` numbers rows, so its ids are unique.
 *
 * Every id is a token id (`isTokenId` of `@loadledger/policies`: an integer `0..2^32-1`), opaque: no
 * vocabulary's. Deterministic and pure; cost O(ids) plus one XXH3 call per block.
 *
 * **When to use**: what the simulator gives a policy as `RouteRequest.tokenIds`; call it to see the
 * ids a request is routed on, or to feed a live router from a trace.
 *
 * @example
 * ```ts
 * import { tokenIdsOf } from "@loadledger/sim"
 * const a = tokenIdsOf({ requestId: "0", arrivalSeconds: 0, inputLength: 700, outputLength: 1, hashIds: [46, 47] })
 * const b = tokenIdsOf({ requestId: "1", arrivalSeconds: 0, inputLength: 300, outputLength: 1, hashIds: [46] })
 * const c = tokenIdsOf({ requestId: "2", arrivalSeconds: 0, inputLength: 300, outputLength: 1, hashIds: [12] })
 * a.origin // => "block-hashes"
 * a.tokenIds.length // => 256
 * b.tokenIds.every((id, j) => id === a.tokenIds[j]) // => true
 * c.tokenIds[0] === a.tokenIds[0] // => false
 * const d = tokenIdsOf({ requestId: "3", arrivalSeconds: 0, inputLength: 5000, outputLength: 1 })
 * d.origin // => "synthetic"
 * d.tokenIds.length // => 256
 * tokenIdsOf({ requestId: "4", arrivalSeconds: 0, inputLength: 3, outputLength: 1, tokenIds: [9, 8, 7] })
 * // => { origin: "trace", tokenIds: [9, 8, 7] }
 * ```
 *
 * @category token ids
 * @since 0.5.0
 */
export const tokenIdsOf = (request: TraceRequest): RequestTokenIds => {
  if (request.tokenIds !== undefined) return { origin: "trace", tokenIds: request.tokenIds }
  const n = Math.min(request.inputLength, MAX_SYNTHETIC_TOKEN_IDS)
  const hashes = request.hashIds
  // preallocated: filling by push measured 1.7x slower
  const ids = new Array<number>(n)
  let j = 0
  if (hashes !== undefined)
    for (let b = 0; b < hashes.length && j < n; b++) {
      const [hi, lo] = blockKeyOf(hashes[b]!)
      for (let k = 0; k < BLOCK_TOKENS && j < n; k++, j++) ids[j] = idAt(hi, lo, k)
    }
  if (j < n) {
    const [hi, lo] = keyOf(`request:${request.requestId}`)
    for (; j < n; j++) ids[j] = idAt(hi, lo, j)
  }
  return { origin: hashes !== undefined ? "block-hashes" : "synthetic", tokenIds: ids }
}

/**
 * Summarise where `trace`'s token ids come from (the origin `tokenIdsOf` gives each request; no ids
 * are built). O(requests).
 *
 * **When to use**: to say, next to a result, whether the policies routed on real or synthesised ids.
 *
 * @example
 * ```ts
 * import { traceTokenIds } from "@loadledger/sim"
 * traceTokenIds([
 *   { requestId: "0", arrivalSeconds: 0, inputLength: 10, outputLength: 1 },
 *   { requestId: "1", arrivalSeconds: 1, inputLength: 10, outputLength: 1 }
 * ])
 * // => { origin: "synthetic", requests: { trace: 0, blockHashes: 0, synthetic: 2 }, maxSynthesisedTokens: 256 }
 * ```
 *
 * @category token ids
 * @since 0.5.0
 */
export const traceTokenIds = (trace: ReadonlyArray<TraceRequest>): TraceTokenIds => {
  let fromTrace = 0
  let blockHashes = 0
  for (const r of trace)
    if (r.tokenIds !== undefined) fromTrace++
    else if (r.hashIds !== undefined) blockHashes++
  return tokenIdsTally(fromTrace, blockHashes, trace.length, MAX_SYNTHETIC_TOKEN_IDS)
}

/**
 * One line saying where a run's token ids came from, for a report or a table's caption.
 *
 * @example
 * ```ts
 * import { describeTokenIds } from "@loadledger/sim"
 * describeTokenIds({ origin: "synthetic", requests: { trace: 0, blockHashes: 0, synthetic: 2 }, maxSynthesisedTokens: 256 })
 * // => "token ids: synthesised per request id (the trace has no prompt tokens or block hashes; distinct for every request), the first 256 of each prompt"
 * ```
 *
 * @category token ids
 * @since 0.5.0
 */
export const describeTokenIds = (t: TraceTokenIds): string => {
  const cap = `the first ${t.maxSynthesisedTokens} of each prompt`
  const fromBlocks = "one sequence per 512-token block: requests sharing leading blocks share leading ids"
  switch (t.origin) {
    case "trace":
      return "token ids: from the trace"
    case "block-hashes":
      return `token ids: synthesised from the trace's block hashes (no prompt tokens in the trace; ${fromBlocks}), ${cap}`
    case "synthetic":
      return `token ids: synthesised per request id (the trace has no prompt tokens or block hashes; distinct for every request), ${cap}`
    case "mixed": {
      const { trace, blockHashes, synthetic } = t.requests
      return `token ids: from the trace for ${trace} requests, synthesised from block hashes for ${blockHashes} (${fromBlocks}) and per request id for ${synthetic}, ${cap}`
    }
  }
}
