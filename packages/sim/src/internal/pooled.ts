/**
 * The key by which `balanceBoundConfig` (`Bound.ts`) marks a config as the balance bound's pooled
 * rank: `simulate` hands its value to the rank as `RankParams.pooledChunkTokens`. A symbol, so no
 * config written by hand or read from JSON can set it.
 */
import type { SimConfig } from "../Config.js"
import type { RankRules } from "./rank.js"
import { addDecodes, addPrefills } from "./rankBatch.js"

export const POOLED_CHUNK_TOKENS: unique symbol = Symbol("loadledger.pooledChunkTokens")

export type PooledConfig = SimConfig & { readonly [POOLED_CHUNK_TOKENS]?: number | undefined }

/**
 * The balance bound's pooled rank fills its batch, whatever the engine, with every decode and
 * prefill chunks under the whole group's budget (it retracts as its engine does).
 */
export const pooledRules = (engine: RankRules): RankRules => ({
  fill: (rank, budget, now) => {
    addDecodes(rank)
    addPrefills(rank, budget, now)
  },
  retractVictim: engine.retractVictim
})
