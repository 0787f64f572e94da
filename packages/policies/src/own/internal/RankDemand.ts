/**
 * What the newest rows say each rank still has to do (`step-time-aware`): queued prompt tokens,
 * decode context, free KV, KV pool; and `Demand`, that priced once per snapshot.
 *
 * @internal
 */
import { isCount, malformedRow } from "../../internal/counts.js"
import type { RankLoad } from "../../Policy.js"
import { freeKvTokens } from "./FreeKv.js"
import type { FreshMax } from "./LoadView.js"

/** Per rank, tokens: `queued` to prefill, `context` in KV, `freeKv` (NaN: untold), `pool` (NaN: unknown); `maxPool` (0: none). @internal */
export interface RankDemand {
  readonly queued: ReadonlyArray<number>
  readonly context: ReadonlyArray<number>
  readonly freeKv: ReadonlyArray<number>
  readonly pool: ReadonlyArray<number>
  readonly maxPool: number
}

/**
 * `RankDemand` priced (`stepState.ts` `price`): per rank `queuedSeconds` of prefill, `cacheTokens` its
 * prefix cache keeps, `slotCaps` its running cap (`Infinity`: none; `anyCap`); over the dated ranks
 * the `oldestTimestamp` (`Infinity`: none), `maxQueued` / `maxContext` tokens and `freshMax` (what a
 * stale or unknown rank is never below while all are fresh); `anyUndated`: some rank has no dated row.
 * @internal
 */
export interface Demand extends RankDemand {
  readonly queuedSeconds: ReadonlyArray<number>
  readonly cacheTokens: ReadonlyArray<number>
  readonly slotCaps: ReadonlyArray<number>
  readonly anyCap: boolean
  readonly oldestTimestamp: number
  readonly maxQueued: number
  readonly maxContext: number
  readonly freshMax: FreshMax
  readonly anyUndated: boolean
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
 * Each rank's demand from its newest row (`undefined`: never published) and known pool (NaN: the
 * largest known). An unreported field takes the busiest bound: total tokens the busiest reported, used
 * 0 for `queued` and the busiest for `context`, waiting uncached at least the highest reported. @internal
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
    const waiting = uncached >= 0 ? uncached : Math.max(total - (Number.isNaN(u) ? 0 : u), maxUncached, 0)
    queued.push(reported && row.numWaitingReqs === 0 ? 0 : waiting)
    context.push(Number.isNaN(u) ? Math.max(total, maxUsed) : u)
    freeKv.push(freeKvTokens(row) ?? Number.NaN)
  }
  return { queued, context, freeKv, pool: pools, maxPool }
}

/**
 * `demand` with each queue of a row counting waiting requests but no tokens (vLLM's coordinator:
 * `[waiting, running, KV usage]`) at least its waiting requests x `meanPrompt` tokens. @internal
 */
export const withWaitingEstimate = <D extends RankDemand>(
  demand: D,
  rows: ReadonlyArray<RankLoad | undefined>,
  meanPrompt: number
): D => {
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
