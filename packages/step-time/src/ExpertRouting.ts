/**
 * The per-EP-rank routing the step-time model charges an MoE layer with
 * (`StepTimeConfig.experts`): from each expert's share of the load and a placement, the chance a
 * token is sent to each physical expert slot, and each EP rank's share of the token-expert pairs.
 *
 * @since 0.7.0
 */
import {
  contiguousPlacement,
  type ExpertLoadError,
  type ExpertPlacement,
  eplbPlacement,
  isExpertLoadError,
  zipfExpertLoad
} from "./ExpertLoad.js"
import type { ModelSpec } from "./Model.js"

/**
 * Where a step's token-expert pairs go. `slotProbabilities[r][j]`: the chance one token is sent
 * to the j-th slot of EP rank r (a token picks `topK` distinct experts: an expert's inclusion
 * chance is at most 1; a redundant expert's tokens split evenly over its replicas).
 * `epRankShares[r]`: EP rank r's share of the pairs (sums to 1). `hotSpotFactor`: the hottest EP
 * rank's share times the EP size (1 when every rank gets an equal share; the factor by which its
 * expert GEMMs exceed a balanced rank's when compute-bound).
 *
 * @category experts
 * @since 0.7.0
 */
export interface ExpertRouting {
  readonly slotProbabilities: ReadonlyArray<ReadonlyArray<number>>
  readonly epRankShares: ReadonlyArray<number>
  readonly hotSpotFactor: number
}

const bad = (field: string, message: string): ExpertLoadError => ({ _tag: "ExpertLoadError", field, message })

/**
 * Each expert's inclusion chance from its load share: `min(1, c x load)` with `c` such that the
 * chances sum to `topK` (water-filling: an expert a token cannot pick more than once gives its
 * excess to the others; when fewer than `topK` experts carry load, each of them is 1).
 */
const inclusion = (load: ReadonlyArray<number>, topK: number): Array<number> => {
  const pi = load.map(() => 0)
  const capped = load.map(() => false)
  let left = topK
  for (let round = 0; round <= load.length; round++) {
    const free = load.reduce((a, x, i) => (capped[i] ? a : a + x), 0)
    if (!(free > 0) || left <= 0) break
    let newly = false
    for (let i = 0; i < load.length; i++) {
      if (capped[i]) continue
      pi[i] = (left * load[i]!) / free
      if (pi[i]! >= 1) {
        pi[i] = 1
        capped[i] = true
        newly = true
      }
    }
    if (!newly) break
    left = topK - capped.reduce((a, c) => a + (c ? 1 : 0), 0)
  }
  return pi
}

/**
 * The routing of a load profile (`load[e]`: expert e's share, any positive scale) over a
 * placement, for tokens that each pick `topK` experts. Errors name the field: an expert with load
 * that no rank holds, an id out of range, a rank with no slot.
 *
 * @example
 * ```ts
 * import { eplbPlacement, type ExpertRouting, expertRouting } from "@loadledger/step-time"
 * // uniform: every EP rank gets its 1/ep share
 * const uniform = expertRouting([1, 1, 1, 1, 1, 1, 1, 1], [[0, 1], [2, 3], [4, 5], [6, 7]], 2) as ExpertRouting
 * uniform.hotSpotFactor // => 1
 * uniform.slotProbabilities[0] // => [0.25, 0.25]
 * // one hot expert: its EP rank gets 60% of the pairs
 * const load = [8, 1, 1, 1, 1, 1, 1, 1]
 * const hot = expertRouting(load, [[0, 1], [2, 3], [4, 5], [6, 7]], 1) as ExpertRouting
 * hot.hotSpotFactor // => 2.4000000000000004
 * // EPLB with 4 redundant slots over the same ranks flattens it to 28%
 * const eplb = expertRouting(load, eplbPlacement(load, 4, 4) as never, 1) as ExpertRouting
 * eplb.hotSpotFactor // => 1.1199999999999999
 * expertRouting([1, 1], [[0], []], 1) // => { _tag: "ExpertLoadError", field: "placement[1]", message: "placement[1] must hold at least one expert" }
 * ```
 *
 * @category experts
 * @since 0.7.0
 */
export const expertRouting = (
  load: ReadonlyArray<number>,
  placement: ExpertPlacement,
  topK: number
): ExpertRouting | ExpertLoadError => {
  const e = load.length
  if (e === 0 || !load.every((x) => typeof x === "number" && Number.isFinite(x) && x >= 0))
    return bad("load", "load must be a non-empty array of finite numbers >= 0")
  if (!(load.reduce((a, b) => a + b, 0) > 0)) return bad("load", "load must have a positive sum")
  if (!(Number.isSafeInteger(topK) && topK >= 1 && topK <= e))
    return bad("topK", `topK must be an integer from 1 to the number of experts (${e}), got ${topK}`)
  if (!Array.isArray(placement) || placement.length === 0)
    return bad("placement", "placement must be a non-empty array of EP ranks")
  const replicas = new Array<number>(e).fill(0)
  for (let r = 0; r < placement.length; r++) {
    const slots = placement[r]
    if (!Array.isArray(slots) || slots.length === 0)
      return bad(`placement[${r}]`, `placement[${r}] must hold at least one expert`)
    for (let j = 0; j < slots.length; j++) {
      const id = slots[j]
      if (!(Number.isSafeInteger(id) && id >= 0 && id < e))
        return bad(`placement[${r}][${j}]`, `placement[${r}][${j}] must be an expert id from 0 to ${e - 1}`)
      replicas[id]!++
    }
  }
  const missing = load.findIndex((x, i) => x > 0 && replicas[i] === 0)
  if (missing >= 0) return bad("placement", `placement holds no replica of expert ${missing}, which has load`)
  const pi = inclusion(load, topK)
  const slotProbabilities: Array<Array<number>> = placement.map((slots: ReadonlyArray<number>) =>
    slots.map((id) => pi[id]! / replicas[id]!)
  )
  const pairs = slotProbabilities.map((q) => q.reduce((a: number, b: number) => a + b, 0))
  const sum = pairs.reduce((a, b) => a + b, 0)
  const epRankShares = pairs.map((x) => x / sum)
  return {
    slotProbabilities,
    epRankShares,
    hotSpotFactor: Math.max(...epRankShares) * placement.length
  }
}

/**
 * How the experts of a model are loaded and placed, for {@link expertRoutingFor}: a Zipf
 * exponent (`zipfS`, with its `seed`) or a measured profile (`load`, one share per expert), and
 * the remedy: `"contiguous"` (default: the engines' placement), or `"eplb"` with
 * `numRedundantExperts` extra slots (default 0: rebalanced placement only).
 *
 * @category experts
 * @since 0.7.0
 */
export interface ExpertSkewSpec {
  readonly zipfS?: number | undefined
  readonly seed?: number | undefined
  readonly load?: ReadonlyArray<number> | undefined
  readonly placement?: "contiguous" | "eplb" | undefined
  readonly numRedundantExperts?: number | undefined
}

/**
 * The routing of a model's MoE layers under a skew and a remedy: the load (Zipf over
 * `model.mlp.numExperts`, or `spec.load`), placed on `model.mlp.ep` EP ranks, for the model's
 * top-k. Ready for `StepTimeConfig.experts`. Errors name the field (`zipfS`, `load`,
 * `numRedundantExperts`, `model.mlp` for a dense model).
 *
 * @example
 * ```ts
 * import { expertRoutingFor, gpus, isExpertLoadError, models, stepTime } from "@loadledger/step-time"
 * const model = models["glm-5.3"]!
 * const skewed = expertRoutingFor(model, { zipfS: 1.2 })
 * const eplb = expertRoutingFor(model, { zipfS: 1.2, placement: "eplb", numRedundantExperts: 32 })
 * if (isExpertLoadError(skewed) || isExpertLoadError(eplb)) throw new Error("bad spec")
 * skewed.hotSpotFactor > 1.5 // => true
 * eplb.hotSpotFactor < 1.05 // => true
 * // a prefill of 8,192 tokens on each of 8 ranks: the hot EP rank's GEMMs lengthen the step
 * const config = { model, gpu: gpus["h200"]! }
 * const ranks = Array.from({ length: 8 }, () => ({ decode: [], extend: [{ prefix: 0, tokens: 8192 }] }))
 * const even = stepTime(config, ranks).moeSeconds
 * stepTime({ ...config, experts: skewed }, ranks).moeSeconds / even > 1.5 // => true
 * stepTime({ ...config, experts: eplb }, ranks).moeSeconds / even < 1.05 // => true
 * expertRoutingFor(models["llama2-70b"]!, { zipfS: 1 })
 * // => { _tag: "ExpertLoadError", field: "model.mlp", message: "model.mlp must be an MoE layer for an expert skew, got a dense MLP" }
 * ```
 *
 * @category experts
 * @since 0.7.0
 */
export const expertRoutingFor = (model: ModelSpec, spec: ExpertSkewSpec): ExpertRouting | ExpertLoadError => {
  const m = model.mlp
  if (m.kind !== "moe")
    return bad("model.mlp", "model.mlp must be an MoE layer for an expert skew, got a dense MLP")
  const load = spec.load ?? zipfExpertLoad(m.numExperts, spec.zipfS ?? 0, spec.seed ?? 1)
  if (isExpertLoadError(load))
    return load.field === "s"
      ? { ...load, field: "zipfS", message: load.message.replace(/^s /, "zipfS ") }
      : load
  if (load.length !== m.numExperts)
    return bad("load", `load must have one share per expert (${m.numExperts}), got ${load.length}`)
  if (!load.every((x) => typeof x === "number" && Number.isFinite(x) && x >= 0) || !load.some((x) => x > 0))
    return bad("load", "load must be finite numbers >= 0 with a positive sum")
  // EPLB balances what it measures: the pairs each expert receives (inclusion chances)
  const placement =
    spec.placement === "eplb"
      ? eplbPlacement(inclusion(load, m.topK), m.ep, spec.numRedundantExperts ?? 0)
      : contiguousPlacement(m.numExperts, m.ep)
  if (isExpertLoadError(placement)) return placement
  return expertRouting(load, placement, m.topK)
}
