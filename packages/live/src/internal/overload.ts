/**
 * The overload bound of `RouterOptions.overloadBound`: a rank holding `bound` requests of this
 * router in flight is over it; it is never chosen while another usable rank is under it, and when
 * every usable rank is over, the answer is the `RouterError` `Overloaded`.
 *
 * The faults this guards against: ai-dynamo/dynamo #9688 (round-robin, random, least-loaded still
 * chose over-threshold workers; all over must be an overload refusal, not "no instances found"),
 * smg-project/smg #2220 (no absolute per-worker overload veto; all vetoed sheds with a 503) and
 * #2518 (re-check the bound at dispatch). @internal
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
