/**
 * A rank's batch for one step, and the attention-pair arithmetic over it.
 *
 * @since 0.1.0
 */

/**
 * An extend (prefill chunk): `tokens` new tokens after `prefix` tokens already in the KV cache.
 *
 * @category models
 * @since 0.1.0
 */
export interface ExtendChunk {
  readonly prefix: number
  readonly tokens: number
}

/**
 * One DP rank's work in a step: `decode` lists the context length (tokens) of each decoding
 * request, `extend` the prefill chunks. An empty batch is an idle rank.
 *
 * @example
 * ```ts
 * import { attentionPairs, type RankBatch } from "@loadledger/step-time"
 * const b: RankBatch = { decode: [8192, 8192], extend: [{ prefix: 1000, tokens: 2 }] }
 * attentionPairs(b) // => 18387
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface RankBatch {
  readonly decode: ReadonlyArray<number>
  readonly extend: ReadonlyArray<ExtendChunk>
}

/**
 * What {@link stepTimeFromAggregates} needs to know about a rank: counts, not lists, so a
 * simulator can keep them as running sums.
 *
 * - `attentionPairs`: (query, key) pairs per layer, see {@link attentionPairs}.
 * - `kvReadPairs`: KV tokens read from HBM per layer ({@link kvReadPairs}). When absent:
 *   `attentionPairs` for a decode-only rank (exact without a sparse cap); with extends, the
 *   causal part of `numExtends` equal chunks is taken as read once per 128-query tile (within a
 *   few percent of {@link kvReadPairs} for chunks after no prefix). Pass it when you can.
 * - `denseKvReadPairs`: KV tokens a dense attention would read per layer, tile-wise and uncapped
 *   ({@link kvReadPairs} without `topK`): with DeepSeek sparse attention, the index keys the
 *   lightning indexer reads. Only needed with a sparse cap; when absent it is estimated as for
 *   `kvReadPairs`.
 * - `tokens`: queries this step (`numDecodes + extendTokens`).
 * - `numExtends`: number of extend chunks; defaults to 1 when `extendTokens > 0`.
 *
 * @category models
 * @since 0.1.0
 */
export interface RankAggregate {
  readonly attentionPairs: number
  readonly kvReadPairs?: number | undefined
  readonly denseKvReadPairs?: number | undefined
  readonly tokens: number
  readonly numDecodes: number
  readonly extendTokens: number
  readonly numExtends?: number | undefined
}

/**
 * Attention pairs of one extend chunk: `prefix x tokens + tokens x (tokens + 1) / 2` (each new
 * token attends to the prefix and, causally, to the new tokens up to itself).
 *
 * @example
 * ```ts
 * import { extendPairs } from "@loadledger/step-time"
 * extendPairs({ prefix: 0, tokens: 4 }) // => 10
 * ```
 *
 * @category attention
 * @since 0.1.0
 */
export const extendPairs = (chunk: ExtendChunk): number =>
  chunk.prefix * chunk.tokens + (chunk.tokens * (chunk.tokens + 1)) / 2

/**
 * Attention pairs of a rank's batch per layer: a decode with context L contributes L, an extend
 * {@link extendPairs}.
 *
 * **When to use**: the local-attention work measure that turns skew into sync wait.
 *
 * @example
 * ```ts
 * import { attentionPairs } from "@loadledger/step-time"
 * attentionPairs({ decode: [8192, 8192, 8192, 204800], extend: [] }) // => 229376
 * ```
 *
 * @category attention
 * @since 0.1.0
 */
export const attentionPairs = (batch: RankBatch): number => {
  let s = 0
  for (const l of batch.decode) s += l
  for (const c of batch.extend) s += extendPairs(c)
  return s
}

/**
 * Queries of an extend chunk that share one read of the KV cache (a FlashAttention query tile).
 *
 * @example
 * ```ts
 * import { extendQueryTile } from "@loadledger/step-time"
 * extendQueryTile // => 128
 * ```
 *
 * @category attention
 * @since 0.1.0
 */
export const extendQueryTile = 128

/**
 * KV tokens an extend chunk reads from HBM per layer: the new tokens are processed in tiles of
 * {@link extendQueryTile} queries, and each tile reads the KV tokens it can see once
 * (`prefix + end of tile`), so a long prefill reads about `pairs / 128` tokens, not `pairs`.
 *
 * @example
 * ```ts
 * import { extendKvReadTokens } from "@loadledger/step-time"
 * // 128 + 256
 * extendKvReadTokens({ prefix: 0, tokens: 256 }) // => 384
 * ```
 *
 * @category attention
 * @since 0.1.0
 */
export const extendKvReadTokens = (chunk: ExtendChunk): number => {
  const n = Math.ceil(chunk.tokens / extendQueryTile)
  return n * chunk.prefix + (extendQueryTile * (n - 1) * n) / 2 + chunk.tokens
}

/**
 * KV tokens read from HBM per layer by a rank's batch: each decode reads its whole context
 * (capped at `topK` with DeepSeek sparse attention), each extend chunk
 * {@link extendKvReadTokens} (or, with `topK`, at most `topK` per query). For a decode-only
 * batch without a cap this equals {@link attentionPairs}.
 *
 * @example
 * ```ts
 * import { kvReadPairs } from "@loadledger/step-time"
 * kvReadPairs({ decode: [8192, 100], extend: [] }, 2048) // => 2148
 * ```
 *
 * @category attention
 * @since 0.1.0
 */
export const kvReadPairs = (batch: RankBatch, topK?: number): number => {
  let s = 0
  for (const l of batch.decode) s += topK === undefined ? l : Math.min(l, topK)
  for (const c of batch.extend) {
    if (topK === undefined) s += extendKvReadTokens(c)
    else {
      // query i (1..e) sees p + i keys, capped at topK
      const { prefix: p, tokens: e } = c
      const uncapped = Math.max(0, Math.min(e, topK - p))
      s += p * uncapped + (uncapped * (uncapped + 1)) / 2 + (e - uncapped) * topK
    }
  }
  return s
}

/**
 * Reduce a rank's batch to the counts {@link stepTimeFromAggregates} reads.
 *
 * @example
 * ```ts
 * import { aggregate } from "@loadledger/step-time"
 * const a = aggregate({ decode: [100], extend: [{ prefix: 0, tokens: 4 }] })
 * a.attentionPairs // => 110
 * a.tokens // => 5
 * // with a sparse cap, the uncapped tile-wise reads too (the DSA indexer's index keys)
 * aggregate({ decode: [], extend: [{ prefix: 100_000, tokens: 256 }] }, 2048).denseKvReadPairs // => 200384
 * ```
 *
 * @category attention
 * @since 0.1.0
 */
export const aggregate = (batch: RankBatch, sparseTopK?: number): RankAggregate => {
  let extendTokens = 0
  for (const c of batch.extend) extendTokens += c.tokens
  return {
    attentionPairs: attentionPairs(batch),
    kvReadPairs: kvReadPairs(batch, sparseTopK),
    ...(sparseTopK === undefined ? {} : { denseKvReadPairs: kvReadPairs(batch) }),
    tokens: batch.decode.length + extendTokens,
    numDecodes: batch.decode.length,
    extendTokens,
    numExtends: batch.extend.length
  }
}
