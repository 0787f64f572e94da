/**
 * A rank's step ends (`completeRank`): the batch's decoding requests gain a token each (the decode
 * set hands back those that reached their output length, out of the set, in running order), its
 * prefill chunks complete (a finished prompt joins the prefix cache and emits its first token), and
 * finished requests free their KV and are reported (`Hooks.onFinish`): prefills first, then
 * decodes in running order.
 */

import { removeAt } from "./lists.js"
import { BLOCK_TOKENS } from "./prefixCache.js"
import type { Hooks, Rank } from "./rank.js"
import type { Req } from "./req.js"
import type { CountedSamples } from "./stats.js"

/** `r` finished at `now`: it leaves the running list and frees its KV and prefix blocks. */
const finish = (rank: Rank, r: Req, now: number, hooks: Hooks): void => {
  rank.unlink(r)
  rank.kvOwned -= r.kvTokens
  r.kvTokens = 0
  if (r.t.hashIds) rank.cache.release(r.t.hashIds, r.heldBlocks)
  r.heldBlocks = 0
  r.finishSeconds = now
  hooks.onFinish(r, now)
}

/** A request emits a token from its prefill: it finishes, or starts decoding. */
const emit = (rank: Rank, r: Req, now: number, itl: CountedSamples, hooks: Hooks): void => {
  r.generated++
  rank.outputTokens++
  if (Number.isNaN(r.firstTokenSeconds)) r.firstTokenSeconds = now
  else {
    const gap = now - r.lastTokenSeconds
    itl.push(gap)
    if (gap > r.worstGapSeconds) r.worstGapSeconds = gap
  }
  r.lastTokenSeconds = now
  if (r.generated >= r.outputTarget) finish(rank, r, now, hooks)
  else rank.decoding.join(r)
}

/** Apply the step of `rank` that ends at `now`. */
export const completeRank = (rank: Rank, now: number, itl: CountedSamples, hooks: Hooks): void => {
  rank.formed = false
  const decodes = rank.numDecodes
  // the batch's decoding requests advance (those that reach their output length leave the
  // decode set) before a request finishing its prompt joins them
  const finishing = decodes > 0 ? rank.decoding.decodeAndRetire(now, itl) : undefined
  for (const r of rank.extend) {
    r.ctx += r.chunk
    r.prefilled += r.chunk
    rank.pendingPrefill -= r.chunk
    rank.prefillComputed += r.chunk
    if (r.prefilled < r.prefillTarget) continue
    removeAt(rank.prefilling, rank.prefilling.indexOf(r))
    // the prompt's full blocks join the prefix cache, held by this request until it ends
    const ids = r.t.hashIds
    const to = Math.min(r.fullBlocks, Math.floor(r.prefillTarget / BLOCK_TOKENS))
    if (ids && to > r.heldBlocks) {
      rank.cache.insertHeld(ids, r.heldBlocks, to)
      const moved = (to - r.heldBlocks) * BLOCK_TOKENS
      r.kvTokens -= moved
      rank.kvOwned -= moved
      r.heldBlocks = to
    }
    rank.prefillEmitted++
    emit(rank, r, now, itl, hooks)
  }
  if (finishing === undefined) return
  rank.decodeTokens += decodes
  rank.outputTokens += decodes
  for (const r of finishing) finish(rank, r, now, hooks)
}
