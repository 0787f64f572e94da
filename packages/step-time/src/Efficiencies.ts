/**
 * The fitted knobs of the step-time model: roofline efficiencies and overheads.
 *
 * @since 0.1.0
 */

/**
 * Efficiencies (fractions of the datasheet peaks, 0..1] and overheads (seconds) of the step-time
 * model. Every term of {@link stepTime} is one physical quantity times one of these, which is
 * what lets {@link fit} recover them by least squares and carry them to another model.
 *
 * - `memoryEfficiency`: achieved / peak HBM bandwidth (weights and KV reads).
 * - `computeEfficiency`: achieved / peak tensor FLOPs.
 * - `linkEfficiency`: achieved / peak NVLink bandwidth in collectives.
 * - `collectiveLatencySeconds`: latency per peer of one collective (a collective over g GPUs
 *   costs `(g - 1) x` this).
 * - `perLayerOverheadSeconds`: per layer and rank (norms, routing, launches under CUDA graph).
 * - `perRequestSecondsPerLayer`: per request in a rank's batch, per layer (attention metadata).
 * - `fixedOverheadSeconds`: per step (scheduler, sampling, embedding).
 * - `perRequestOverheadSeconds`: per step and request in the busiest rank's batch (the serving
 *   stack's per-request CPU work: scheduling, sampling, output handling; each DP rank's
 *   scheduler runs in parallel, so the rank with the most requests sets it).
 * - `eagerOverheadSecondsPerLayer`: extra launch cost per layer when the step runs without CUDA
 *   graph.
 *
 * @example
 * ```ts
 * import { defaultEfficiencies } from "@loadledger/step-time"
 * defaultEfficiencies.memoryEfficiency // => 0.7
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface Efficiencies {
  readonly memoryEfficiency: number
  readonly computeEfficiency: number
  readonly linkEfficiency: number
  readonly collectiveLatencySeconds: number
  readonly perLayerOverheadSeconds: number
  readonly perRequestSecondsPerLayer: number
  readonly fixedOverheadSeconds: number
  readonly eagerOverheadSecondsPerLayer: number
  readonly perRequestOverheadSeconds: number
}

/**
 * Default efficiencies, chosen so that glm-5.3 on h200 at batch 32 (4 x 8K per rank, 8 ranks)
 * lands near the published ~30 ms step / ~19 ms MoE (issue 5): 70% of HBM bandwidth for weight
 * streaming, 50% of tensor peak, 70% of NVLink, 2 us per collective peer, 10 us per layer,
 * 0.5 us per request per layer, 3 ms per step, 30 us per layer in eager mode, no per-request CPU
 * cost per step (an overlapped scheduler hides it). Calibrate with
 * {@link fit} for your own stack.
 *
 * @example
 * ```ts
 * import { defaultEfficiencies } from "@loadledger/step-time"
 * defaultEfficiencies.fixedOverheadSeconds // => 0.003
 * ```
 *
 * @category presets
 * @since 0.1.0
 */
export const defaultEfficiencies: Efficiencies = {
  memoryEfficiency: 0.7,
  computeEfficiency: 0.5,
  linkEfficiency: 0.7,
  collectiveLatencySeconds: 2e-6,
  perLayerOverheadSeconds: 10e-6,
  perRequestSecondsPerLayer: 0.5e-6,
  fixedOverheadSeconds: 3e-3,
  eagerOverheadSecondsPerLayer: 30e-6,
  perRequestOverheadSeconds: 0
}
