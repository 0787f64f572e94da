/**
 * Free KV tokens of a rank, from its last row, for the KV-feasibility rule of loadledger's own
 * policies.
 *
 * @internal
 */
import type { RankLoad } from "../../Policy.js"
import type { LedgerState } from "./InflightCharges.js"

/**
 * Tokens a new prompt can take on the rank: `kvAvailableTokens` plus `kvEvictableTokens` (cache the
 * engine evicts on demand) when the row carries `kvAvailableTokens`; else `tokenCapacity` (or
 * `maxTotalNumTokens`) minus `numUsedTokens`; `undefined` when the row carries neither.
 *
 * @internal
 */
export const freeKvTokens = (row: RankLoad | undefined): number | undefined => {
  if (row === undefined || row.unknown !== undefined) return undefined
  if (row.kvAvailableTokens !== undefined) return row.kvAvailableTokens + (row.kvEvictableTokens ?? 0)
  const cap = row.tokenCapacity ?? row.maxTotalNumTokens
  if (cap !== undefined && row.numUsedTokens !== undefined) return Math.max(0, cap - row.numUsedTokens)
  return undefined
}

/**
 * Which ranks may take a prompt of `tokens`: when at least one healthy rank's known free KV (its
 * last row minus the tokens charged to it since) holds the prompt, exactly those ranks; otherwise
 * `undefined` (no rank is excluded for KV). A rank whose free KV is unknown is never preferred for
 * it: it is excluded whenever a rank is known to fit.
 *
 * @internal
 */
export const kvFeasible = (state: LedgerState, tokens: number): ReadonlyArray<boolean> | undefined => {
  const n = state.dpSize
  let out: Array<boolean> | undefined
  for (let r = 0; r < n; r++) {
    if (!state.healthy[r]) continue
    const free = freeKvTokens(state.snapshots[r])
    if (free !== undefined && free - state.chargedTokens[r]! >= tokens) {
      if (out === undefined) out = new Array<boolean>(n).fill(false)
      out[r] = true
    }
  }
  return out
}
