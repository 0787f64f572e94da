/**
 * Expert hot spots (issue 33): how the tokens' expert choices spread over the experts of an MoE
 * layer (a Zipf popularity, or a measured expert-load profile), where the experts sit on the
 * expert-parallel (EP) ranks (the engines' contiguous default, or EPLB's rebalanced placement with
 * redundant experts), and the per-EP-rank routing the step-time model charges
 * (`StepTimeConfig.experts`): the hottest EP rank's MoE GEMMs set the step.
 *
 * @since 0.7.0
 */
import { mulberry32 } from "./internal/rng.js"

/**
 * A bad argument of an expert-load function: `field` names it.
 *
 * @category experts
 * @since 0.7.0
 */
export interface ExpertLoadError {
  readonly _tag: "ExpertLoadError"
  readonly field: string
  readonly message: string
}

/**
 * True for an {@link ExpertLoadError}.
 *
 * @example
 * ```ts
 * import { isExpertLoadError, zipfExpertLoad } from "@loadledger/step-time"
 * isExpertLoadError(zipfExpertLoad(0, 1)) // => true
 * isExpertLoadError(zipfExpertLoad(8, 1)) // => false
 * ```
 *
 * @category experts
 * @since 0.7.0
 */
export const isExpertLoadError = (x: unknown): x is ExpertLoadError =>
  typeof x === "object" && x !== null && (x as { _tag?: unknown })._tag === "ExpertLoadError"

const bad = (field: string, want: string, got: unknown): ExpertLoadError => ({
  _tag: "ExpertLoadError",
  field,
  message: `${field} must be ${want}, got ${typeof got === "number" ? got : JSON.stringify(got)}`
})

/**
 * Each expert's share of the token-expert pairs (sums to 1) under a Zipf popularity of exponent
 * `s` (>= 0): the k-th most popular expert's share is proportional to `k^-s` (`s = 0`: uniform).
 * Popularity is independent of the expert's id (measured expert loads of DeepSeek-V3 show no
 * order by id): the popularity ranks are dealt to the ids by a seeded shuffle (`seed`, default 1;
 * pure: the same seed, the same profile).
 *
 * @example
 * ```ts
 * import { zipfExpertLoad } from "@loadledger/step-time"
 * zipfExpertLoad(4, 0) // => [0.25, 0.25, 0.25, 0.25]
 * const load = zipfExpertLoad(256, 1.2) as ReadonlyArray<number>
 * Math.abs(load.reduce((a, b) => a + b, 0) - 1) < 1e-12 // => true
 * Math.max(...load) > 0.15 // => true
 * zipfExpertLoad(8, -1) // => { _tag: "ExpertLoadError", field: "s", message: "s must be a finite number >= 0, got -1" }
 * ```
 *
 * @category experts
 * @since 0.7.0
 */
export const zipfExpertLoad = (
  numExperts: number,
  s: number,
  seed = 1
): ReadonlyArray<number> | ExpertLoadError => {
  if (!(Number.isSafeInteger(numExperts) && numExperts >= 1))
    return bad("numExperts", "an integer >= 1", numExperts)
  if (!(typeof s === "number" && Number.isFinite(s) && s >= 0)) return bad("s", "a finite number >= 0", s)
  const weights = Array.from({ length: numExperts }, (_, k) => (k + 1) ** -s)
  const total = weights.reduce((a, b) => a + b, 0)
  const ids = Array.from({ length: numExperts }, (_, i) => i)
  const next = mulberry32(seed)
  for (let i = numExperts - 1; i > 0; i--) {
    const j = next() % (i + 1)
    ;[ids[i], ids[j]] = [ids[j]!, ids[i]!]
  }
  const load = new Array<number>(numExperts)
  for (let k = 0; k < numExperts; k++) load[ids[k]!] = weights[k]! / total
  return load
}

/**
 * Where the experts (and their replicas) sit: `placement[r]` lists the expert ids EP rank `r`
 * holds, one entry per physical expert slot (an id on several ranks is a redundant expert; the
 * tokens routed to it split evenly over its replicas).
 *
 * @category experts
 * @since 0.7.0
 */
export type ExpertPlacement = ReadonlyArray<ReadonlyArray<number>>

/**
 * The engines' default placement: `numExperts / ep` consecutive ids per EP rank (SGLang's and
 * vLLM's expert-parallel MoE layers shard the experts by contiguous ranges; sgl-project/sglang
 * `python/sglang/srt/eplb/expert_location.py` `ExpertLocationMetadata.init_trivial`, read on main,
 * 2026, described not copied).
 *
 * @example
 * ```ts
 * import { contiguousPlacement } from "@loadledger/step-time"
 * contiguousPlacement(8, 4) // => [[0, 1], [2, 3], [4, 5], [6, 7]]
 * contiguousPlacement(6, 4) // => { _tag: "ExpertLoadError", field: "ep", message: "ep must be an integer >= 1 dividing numExperts (6), got 4" }
 * ```
 *
 * @category experts
 * @since 0.7.0
 */
export const contiguousPlacement = (numExperts: number, ep: number): ExpertPlacement | ExpertLoadError => {
  if (!(Number.isSafeInteger(numExperts) && numExperts >= 1))
    return bad("numExperts", "an integer >= 1", numExperts)
  if (!(Number.isSafeInteger(ep) && ep >= 1 && numExperts % ep === 0))
    return bad("ep", `an integer >= 1 dividing numExperts (${numExperts})`, ep)
  const per = numExperts / ep
  return Array.from({ length: ep }, (_, r) => Array.from({ length: per }, (_, j) => r * per + j))
}

/**
 * EPLB's placement (expert-parallel load balancing): give the `numRedundantExperts` extra slots to
 * the experts with the largest load per replica, one at a time, then pack the replicas (each
 * `load / replicas`), heaviest first, each onto the least-loaded EP rank with a free slot that does
 * not hold that expert yet (`(numExperts + numRedundantExperts) / ep` slots per rank). With 0
 * redundant experts it only rebalances the placement.
 *
 * Source: the algorithm described in deepseek-ai/EPLB `README.md` (2025: "replicate heavy-loaded
 * experts and heuristically pack the duplicated experts to GPUs"; its global policy, without the
 * node-level hierarchy), served by SGLang `--enable-eplb --ep-num-redundant-experts N` and vLLM
 * `--enable-eplb` (`eplb_config.num_redundant_experts`). Implemented from that description; a
 * greedy longest-first packing, not the upstream code.
 *
 * @example
 * ```ts
 * import { eplbPlacement } from "@loadledger/step-time"
 * // expert 0 takes 70% of the load: rebalanced, it shares no rank with a heavy one
 * eplbPlacement([0.7, 0.1, 0.1, 0.1], 2, 0) // => [[0, 3], [1, 2]]
 * // two redundant slots both go to expert 0 (0.7 / 3 per replica still beats 0.1)
 * eplbPlacement([0.7, 0.1, 0.1, 0.1], 2, 2) // => [[0, 0, 3], [0, 1, 2]]
 * eplbPlacement([0.7, 0.1, 0.1], 2, 0)
 * // => { _tag: "ExpertLoadError", field: "ep", message: "ep must be an integer >= 1 dividing numExperts + numRedundantExperts (3), got 2" }
 * ```
 *
 * @category experts
 * @since 0.7.0
 */
export const eplbPlacement = (
  load: ReadonlyArray<number>,
  ep: number,
  numRedundantExperts: number
): ExpertPlacement | ExpertLoadError => {
  const e = load.length
  if (e === 0 || !load.every((x) => typeof x === "number" && Number.isFinite(x) && x >= 0))
    return bad("load", "a non-empty array of finite numbers >= 0", load)
  if (!(Number.isSafeInteger(numRedundantExperts) && numRedundantExperts >= 0))
    return bad("numRedundantExperts", "an integer >= 0", numRedundantExperts)
  const slots = e + numRedundantExperts
  if (!(Number.isSafeInteger(ep) && ep >= 1 && slots % ep === 0))
    return bad("ep", `an integer >= 1 dividing numExperts + numRedundantExperts (${slots})`, ep)
  const replicas = new Array<number>(e).fill(1)
  for (let k = 0; k < numRedundantExperts; k++) {
    let best = 0
    for (let i = 1; i < e; i++) if (load[i]! / replicas[i]! > load[best]! / replicas[best]!) best = i
    replicas[best]!++
  }
  const items: Array<{ expert: number; weight: number }> = []
  for (let i = 0; i < e; i++)
    for (let c = 0; c < replicas[i]!; c++) items.push({ expert: i, weight: load[i]! / replicas[i]! })
  items.sort((a, b) => b.weight - a.weight || a.expert - b.expert)
  const per = slots / ep
  const placed: Array<Array<number>> = Array.from({ length: ep }, () => [])
  const sums = new Array<number>(ep).fill(0)
  for (const it of items) {
    let pick = -1
    for (const strict of [true, false]) {
      for (let r = 0; r < ep; r++) {
        if (placed[r]!.length >= per || (strict && placed[r]!.includes(it.expert))) continue
        if (pick < 0 || sums[r]! < sums[pick]!) pick = r
      }
      if (pick >= 0) break
    }
    placed[pick]!.push(it.expert)
    sums[pick]! += it.weight
  }
  return placed
}
