/**
 * The overload bound of `RouterOptions.overloadBound`: a rank holding `bound` requests of this
 * router in flight is over it; it is never chosen while another usable rank is under it, and when
 * every usable rank is over, the answer is the `RouterError` `Overloaded`.
 *
 * The faults this guards against: smg-project/smg #2146 (no default policy stops choosing a worker
 * past its load bound), vllm-project/router #215 and #200 (load counts that leak or go unread
 * keep sending to a saturated worker). @internal
 */
import type { RankStatus, RouterError } from "../Types.js"

/**
 * The rank with the fewest in-flight requests under `bound` among `candidates`, ties rotating
 * from `cursor` (over `n` global ranks); -1 when none is under. @internal
 */
export const leastUnderBound = (
  inflight: ReadonlyArray<number>,
  candidates: ReadonlySet<number>,
  bound: number,
  cursor: number,
  n: number
): number => {
  let rank = -1
  for (let k = 0; k < n; k++) {
    const i = (cursor + k) % n
    if (!candidates.has(i) || inflight[i]! >= bound) continue
    if (rank < 0 || inflight[i]! < inflight[rank]!) rank = i
  }
  return rank
}

/** The explicit refusal when every candidate (or the pinned rank) is over `bound`. @internal */
export const overloaded = (
  bound: number,
  ranks: ReadonlyArray<RankStatus>,
  pinned?: number | undefined
): RouterError => ({
  _tag: "RouterError",
  reason: "Overloaded",
  message:
    pinned === undefined
      ? `every usable rank holds ${bound} requests in flight (overloadBound)`
      : `rank ${pinned} holds ${bound} requests in flight (overloadBound)`,
  ...(pinned === undefined ? {} : { field: "routedDpRank" }),
  ranks
})
