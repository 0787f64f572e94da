/**
 * Physical priors and plausible ranges for the step-time model's parameters.
 *
 * @since 0.2.0
 */
import type { Efficiencies } from "./Efficiencies.js"

/**
 * One parameter's prior: a centre (the value believed before seeing data), a relative spread
 * `relativeSd` (one standard deviation as a fraction of the centre: the fit treats the prior as
 * Gaussian in the parameter the model is linear in, `1 / efficiency` or the overhead itself), and
 * the `plausible` range outside which {@link identifiability} flags a fitted value.
 *
 * @category calibration
 * @since 0.2.0
 */
export interface ParameterPrior {
  readonly centre: number
  readonly relativeSd: number
  readonly plausible: readonly [number, number]
}

/**
 * A prior for every parameter of {@link Efficiencies}.
 *
 * @category calibration
 * @since 0.2.0
 */
export type Priors = { readonly [K in keyof Efficiencies]: ParameterPrior }

/**
 * Default physical priors, from what the hardware can do rather than from any profile:
 *
 * - `memoryEfficiency` 0.75 (plausible 0.45-0.95): large GEMV/GEMM weight streams reach 70-90%
 *   of HBM peak (NVIDIA's STREAM-like figures for H100/A100); below ~45% the "bandwidth" is
 *   absorbing time that belongs to something else.
 * - `computeEfficiency` 0.6 (0.25-0.95): large BF16 GEMMs run at 60-80% of dense tensor peak.
 * - `linkEfficiency` 0.6 (0.15-0.95): NCCL ring all-reduce bus bandwidth over NVLink.
 * - `collectiveLatencySeconds` 5 us per peer (0.5-50 us): NCCL small-message latency.
 * - `perLayerOverheadSeconds` 20 us (1-300 us): norms, rope, residual adds and their launches.
 * - `perRequestSecondsPerLayer` 0.5 us (0-20 us): attention metadata per request.
 * - `fixedOverheadSeconds` 3 ms (0.1-30 ms): scheduler, sampling, embedding, input preparation.
 * - `eagerOverheadSecondsPerLayer` 30 us (0-300 us): kernel launches without CUDA graph.
 * - `perRequestOverheadSeconds` 100 us (0-2 ms) per request per step: a serving stack's
 *   per-sequence CPU work (scheduling, sampling, detokenising), tens of us in an overlapped
 *   scheduler, hundreds in a synchronous Python loop.
 *
 * Spreads are wide for overheads (relative sd 1) and tighter for efficiencies (0.25-0.4), so data
 * that identifies a parameter overrides its prior and data that cannot leaves it near the centre.
 *
 * @example
 * ```ts
 * import { defaultPriors } from "@loadledger/step-time"
 * defaultPriors.memoryEfficiency.plausible // => [0.45, 0.95]
 * ```
 *
 * @category calibration
 * @since 0.2.0
 */
export const defaultPriors: Priors = {
  memoryEfficiency: { centre: 0.75, relativeSd: 0.25, plausible: [0.45, 0.95] },
  computeEfficiency: { centre: 0.6, relativeSd: 0.35, plausible: [0.25, 0.95] },
  linkEfficiency: { centre: 0.6, relativeSd: 0.4, plausible: [0.15, 0.95] },
  collectiveLatencySeconds: { centre: 5e-6, relativeSd: 1, plausible: [0.5e-6, 50e-6] },
  perLayerOverheadSeconds: { centre: 20e-6, relativeSd: 1, plausible: [1e-6, 300e-6] },
  perRequestSecondsPerLayer: { centre: 0.5e-6, relativeSd: 1.5, plausible: [0, 20e-6] },
  fixedOverheadSeconds: { centre: 3e-3, relativeSd: 1, plausible: [0.1e-3, 30e-3] },
  eagerOverheadSecondsPerLayer: { centre: 30e-6, relativeSd: 1, plausible: [0, 300e-6] },
  perRequestOverheadSeconds: { centre: 100e-6, relativeSd: 1.5, plausible: [0, 2e-3] }
}

/**
 * The prior centres as an {@link Efficiencies} (what a fit on no informative data returns).
 *
 * @example
 * ```ts
 * import { defaultPriors, priorCentres } from "@loadledger/step-time"
 * priorCentres(defaultPriors).fixedOverheadSeconds // => 0.003
 * ```
 *
 * @category calibration
 * @since 0.2.0
 */
export const priorCentres = (priors: Priors): Efficiencies => ({
  memoryEfficiency: priors.memoryEfficiency.centre,
  computeEfficiency: priors.computeEfficiency.centre,
  linkEfficiency: priors.linkEfficiency.centre,
  collectiveLatencySeconds: priors.collectiveLatencySeconds.centre,
  perLayerOverheadSeconds: priors.perLayerOverheadSeconds.centre,
  perRequestSecondsPerLayer: priors.perRequestSecondsPerLayer.centre,
  fixedOverheadSeconds: priors.fixedOverheadSeconds.centre,
  eagerOverheadSecondsPerLayer: priors.eagerOverheadSecondsPerLayer.centre,
  perRequestOverheadSeconds: priors.perRequestOverheadSeconds.centre
})
