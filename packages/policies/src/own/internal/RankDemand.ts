/**
 * What the newest snapshot rows say each rank still has to do, for the `step-time-aware` policy:
 * prompt tokens waiting to be prefilled, tokens in KV (decode context), free KV, and each rank's
 * KV pool (learned from its rows).
 *
 * @internal
 */
import { isCount, malformedRow } from "../../internal/counts.js"
import type { RankLoad } from "../../Policy.js"
import { freeKvTokens } from "./FreeKv.js"

/**
 * Per rank: `queued` prompt tokens waiting to be prefilled, `context` tokens in KV, `freeKv`
 * tokens a new prompt can take (NaN when the row does not tell), `pool` the KV pool in tokens
 * (NaN while unknown), `maxPool` the largest known pool (0 while none is). Computed once per
 * `observe`, read by every `route`.
 *
 * @internal
 */
export interface RankDemand {
  readonly queued: ReadonlyArray<number>
  readonly context: ReadonlyArray<number>
  readonly freeKv: ReadonlyArray<number>
  readonly pool: ReadonlyArray<number>
  readonly maxPool: number
}

/** A rank's KV pool from its row, `undefined` when the row does not tell. @internal */
export const poolOf = (row: RankLoad): number | undefined => {
  if (isCount(row.maxTotalNumTokens) && row.maxTotalNumTokens > 0) return row.maxTotalNumTokens
  if (isCount(row.tokenCapacity) && row.tokenCapacity > 0) return row.tokenCapacity
  const kv = row.kvCacheUsage
  if (kv === undefined || !(kv >= 0.01 && kv <= 1)) return undefined
  if (isCount(row.numUsedTokens) && row.numUsedTokens > 0) return row.numUsedTokens / kv
  // nothing waits: every token counted is in KV
  if (row.numWaitingReqs === 0 && isCount(row.numTotalTokens) && row.numTotalTokens > 0)
    return row.numTotalTokens / kv
  return undefined
}

/**
 * The demand of every rank from its newest row (`undefined`: never published) and its known
 * pool (`pools`, NaN unknown: the largest known pool is taken, DP ranks share one config). A field
 * a row does not report takes the bound that makes the rank look busiest: `numTotalTokens` the
 * busiest reported; used tokens 0 for `queued` and the busiest known for `context`; waiting
 * uncached tokens at least the highest any rank reports. `queued`: 0 while nothing waits, else
 * `numWaitingUncachedTokens`, else `numTotalTokens` minus the used tokens (`numUsedTokens`, or
 * `kvCacheUsage` x pool).
 *
 * @internal
 */
export const rankDemand = (
  rows: ReadonlyArray<RankLoad | undefined>,
  pools: ReadonlyArray<number>
): RankDemand => {
  const n = rows.length
  let maxTotal = 0
  let maxUsed = 0
  let maxUncached = -1
  let maxPool = 0
  for (let r = 0; r < n; r++) if (pools[r]! > maxPool) maxPool = pools[r]!
  const used: Array<number> = []
  for (let r = 0; r < n; r++) {
    const row = rows[r]
    let u = Number.NaN
    if (row !== undefined && row.unknown === undefined) {
      if (isCount(row.numTotalTokens) && row.numTotalTokens > maxTotal) maxTotal = row.numTotalTokens
      if (isCount(row.numWaitingUncachedTokens) && row.numWaitingUncachedTokens > maxUncached)
        maxUncached = row.numWaitingUncachedTokens
      const kv = row.kvCacheUsage
      const pool = Number.isNaN(pools[r]!) ? maxPool : pools[r]!
      if (isCount(row.numUsedTokens)) u = row.numUsedTokens
      else if (kv !== undefined && kv >= 0 && kv <= 1 && pool > 0) u = kv * pool
      if (u > maxUsed) maxUsed = u
    }
    used.push(u)
  }
  const queued: Array<number> = []
  const context: Array<number> = []
  const freeKv: Array<number> = []
  for (let r = 0; r < n; r++) {
    const row = rows[r]
    const reported = row !== undefined && row.unknown === undefined && !malformedRow(row)
    const total = reported && isCount(row.numTotalTokens) ? row.numTotalTokens : maxTotal
    const u = used[r]!
    const uncached = reported && isCount(row.numWaitingUncachedTokens) ? row.numWaitingUncachedTokens : -1
    queued.push(
      reported && row.numWaitingReqs === 0
        ? 0
        : uncached >= 0
          ? uncached
          : Math.max(total - (Number.isNaN(u) ? 0 : u), maxUncached, 0)
    )
    context.push(Number.isNaN(u) ? Math.max(total, maxUsed) : u)
    freeKv.push(freeKvTokens(row) ?? Number.NaN)
  }
  return { queued, context, freeKv, pool: pools, maxPool }
}

/**
 * `demand` with the queue of each rank whose row counts waiting requests but no tokens (vLLM's
 * coordinator publishes `[waiting, running, KV usage]`) taken as its waiting requests x `meanPrompt`
 * uncached tokens (the mean of the requests this front end routed), where that is more.
 * @internal
 */
export const withWaitingEstimate = (
  demand: RankDemand,
  rows: ReadonlyArray<RankLoad | undefined>,
  meanPrompt: number
): RankDemand => {
  if (!(meanPrompt > 0)) return demand
  let queued: Array<number> | undefined
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]
    if (row === undefined || row.unknown !== undefined || malformedRow(row)) continue
    if (isCount(row.numTotalTokens) || isCount(row.numWaitingUncachedTokens) || !isCount(row.numWaitingReqs))
      continue
    const estimate = row.numWaitingReqs * meanPrompt
    if (estimate <= demand.queued[r]!) continue
    queued ??= demand.queued.slice()
    queued[r] = estimate
  }
  return queued === undefined ? demand : { ...demand, queued }
}
