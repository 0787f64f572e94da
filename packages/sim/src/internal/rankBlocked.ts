/**
 * Why a rank that holds requests formed an empty batch (the cause a `NoProgress` status names):
 * the waiting head cannot be admitted (its prompt does not fit the free KV next to the prefills
 * in progress, or never fits the pool), the running set is full, or the running requests cannot
 * get KV for their next tokens.
 */
import { BLOCK_TOKENS } from "./prefixCache.js"
import type { Rank } from "./rank.js"

export const blockedReason = (rank: Rank): string => {
  const { kvPoolTokens: pool, maxRunningRequests } = rank.p
  const head = rank.waiting.at(0)
  if (head !== undefined && rank.numRunning < maxRunningRequests) {
    let pending = 0
    for (let x = rank.runHead; x !== undefined; x = x.runNext) pending += x.prefillTarget - x.prefilled
    const free = pool - rank.kvOwned - rank.cache.pinnedBlocks * BLOCK_TOKENS - pending
    const need = head.pendingUncached
    return need > pool
      ? `request ${head.t.requestId} needs ${need} tokens of KV for its prompt, more than the rank's pool of ${pool}: it can never be admitted`
      : `request ${head.t.requestId} needs ${need} tokens of KV for its prompt, ${Math.max(0, free)} of ${pool} are free`
  }
  if (rank.numRunning >= maxRunningRequests && rank.waiting.length > 0)
    return `its running set is full (maxRunningRequests ${maxRunningRequests}) and none of its ${rank.numRunning} running requests can run`
  return `its ${rank.numRunning} running requests cannot get KV for their next tokens (${pool - rank.kvOwned - rank.cache.blocks * BLOCK_TOKENS} of ${pool} free)`
}
