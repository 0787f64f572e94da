/**
 * Free KV tokens of a rank, from its last row, for the KV-feasibility rule of loadledger's own policies.
 *
 * @internal
 */

import { packed } from "../../internal/packed.js"
import type { RankLoad } from "../../Policy.js"
import { Charges, type LedgerState } from "./LedgerState.js"

/** Tokens a new prompt can take on the rank. */
export const freeKvTokens = (row: RankLoad | undefined): number | undefined => {
  if (row === undefined || row.unknown !== undefined) return undefined
  if (row.kvAvailableTokens !== undefined) return row.kvAvailableTokens + (row.kvEvictableTokens ?? 0)
  const cap = row.tokenCapacity ?? row.maxTotalNumTokens
  if (cap !== undefined && row.numUsedTokens !== undefined) return Math.max(0, cap - row.numUsedTokens)
  return undefined
}

export const freeKvTokensFromUsage = (
  row: RankLoad | undefined,
  poolTokens: number | undefined
): number | undefined => {
  const free = freeKvTokens(row)
  if (free !== undefined || row === undefined || row.unknown !== undefined) return free
  const pool = row.tokenCapacity ?? row.maxTotalNumTokens ?? poolTokens
  const usage = row.kvCacheUsage
  if (pool === undefined || usage === undefined) return undefined
  return Math.floor(pool * (1 - Math.min(1, Math.max(0, usage))))
}

/** Which ranks may take a prompt of `tokens`. */
export const kvFeasible = (
  state: LedgerState,
  tokens: number,
  usage?: { readonly poolTokens: number | undefined }
): ReadonlyArray<boolean> | undefined => {
  const n = state.dpSize
  const charged = Charges.store(state.charges).tokens
  let out: Array<boolean> | undefined
  for (let r = 0; r < n; r++) {
    if (!state.healthy[r]) continue
    // the free KV each row reports, read once per snapshot (`snapFree`, NaN: none)
    const free =
      usage === undefined
        ? state.snapFree[r]!
        : (freeKvTokensFromUsage(state.snapshots[r], usage.poolTokens) ?? Number.NaN)
    if (free - charged[r]! >= tokens) {
      out ??= packed(n, false)
      out[r] = true
    }
  }
  return out
}
