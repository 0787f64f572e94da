/**
 * The key by which `balanceBoundConfig` (`Bound.ts`) marks a config as the balance bound's pooled
 * rank: `simulate` hands its value to the rank as `RankParams.pooledChunkTokens`. A symbol, so no
 * config written by hand or read from JSON can set it.
 */
import type { SimConfig } from "../Config.js"

export const POOLED_CHUNK_TOKENS: unique symbol = Symbol("loadledger.pooledChunkTokens")

export type PooledConfig = SimConfig & { readonly [POOLED_CHUNK_TOKENS]?: number | undefined }
