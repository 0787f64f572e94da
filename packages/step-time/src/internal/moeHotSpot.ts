/**
 * The MoE layer under a skewed expert routing (`StepTimeConfig.experts`): each EP rank's roofline
 * over the expert weights it touches and the token-expert pairs it computes; the hottest sets the
 * step. Read by `stepCore`.
 */
import type { ExpertRouting } from "../ExpertRouting.js"

// distinct slots touched per EP rank, per global token count: the pow loop is O(slots), and a
// run repeats token counts, so it is computed once per (routing, tokens)
const distinctCache = new WeakMap<ExpertRouting, Map<number, Float64Array>>()
const CACHE_LIMIT = 8192

const distinctOf = (routing: ExpertRouting, tokens: number): Float64Array => {
  let byTokens = distinctCache.get(routing)
  if (byTokens === undefined) {
    byTokens = new Map()
    distinctCache.set(routing, byTokens)
  }
  let d = byTokens.get(tokens)
  if (d === undefined) {
    const q = routing.slotProbabilities
    d = new Float64Array(q.length)
    for (let r = 0; r < q.length; r++) {
      let sum = 0
      for (const p of q[r]!) sum += 1 - (1 - p) ** tokens
      d[r] = sum
    }
    if (byTokens.size >= CACHE_LIMIT) byTokens.clear()
    byTokens.set(tokens, d)
  }
  return d
}

/** The shape of the MoE layer the roofline needs (bytes per param, bandwidths already scaled). */
export interface MoeShape {
  readonly expertParams: number
  readonly sharedExpertParams: number
  readonly bytesPerParam: number
  readonly bw: number
  readonly peak: number
}

/**
 * One MoE layer's time on every EP rank for `tokens` global tokens, written to `out[r]`; returns
 * the largest. Rank r reads the weights of the slots it touches and its shared expert, and
 * computes `tokens x sum(slot chances)` expert pairs plus its `tokens / ep` share of the shared
 * expert.
 */
export const moeLayerPerEpRank = (
  routing: ExpertRouting,
  tokens: number,
  m: MoeShape,
  out: Array<number>
): number => {
  const d = distinctOf(routing, tokens)
  const q = routing.slotProbabilities
  const ep = q.length
  let max = 0
  for (let r = 0; r < ep; r++) {
    let chance = 0
    for (const p of q[r]!) chance += p
    const bytes = (d[r]! * m.expertParams + m.sharedExpertParams) * m.bytesPerParam
    const flops = 2 * tokens * (chance * m.expertParams + m.sharedExpertParams / ep)
    const t = Math.max(bytes / m.bw, flops / m.peak)
    out[r] = t
    if (t > max) max = t
  }
  return max
}
