/**
 * The shape-aware step-time model: GEMM and attention efficiency as functions of the operation's
 * shape (tokens through it, per-GPU matrix size, arithmetic intensity), elementwise traffic, a
 * per-step and a per-layer launch term (the latter removed when decode replays a CUDA graph) and
 * a per-chunk prefill cost. Fitted by {@link fitShape}; the default step model stays
 * {@link stepTimeFromAggregates}.
 *
 * @since 0.6.0
 */
import type { RankAggregate } from "./Batch.js"
import type { CalibrationSample } from "./Calibration.js"
import type { GpuSpec } from "./Hardware.js"
import {
  evalShape,
  isInverse,
  type ShapeParameterName,
  shapeBlockRow,
  shapeParameterNames,
  stepSeconds
} from "./internal/shapeTheta.js"
import type { ModelSpec } from "./Model.js"
import type { ParameterPrior } from "./Priors.js"

/**
 * The name of one {@link ShapeParameters} field (`"memoryEfficiency"`, ..., `"perChunkOverheadSeconds"`).
 *
 * @category models
 * @since 0.6.0
 */
export type { ShapeParameterName } from "./internal/shapeTheta.js"

/**
 * The parameters of the shape-aware model. Efficiencies are fractions (0..1] of the datasheet
 * peaks; the rest are seconds or dimensionless. Per GPU: `memoryEfficiency` (weights and KV
 * reads), `computeEfficiency` (large GEMMs), `linkEfficiency`, `collectiveLatencySeconds` (per
 * peer), `ridgeOverlap` (a GEMM costs `max(memory, compute) + ridgeOverlap x min(memory,
 * compute)` at datasheet peaks: near the ridge, arithmetic intensity ~ peak / bandwidth, neither
 * side hides the other), `gemmRowSeconds` (per token per GEMM: a small per-GPU matrix runs
 * further below peak, so compute efficiency falls as `2 N K / (2 N K + gemmRowSeconds x peak)`),
 * `elementwiseEfficiency` (norms, residual adds, rope and the MLP activation: activation bytes
 * per token per layer, not sharded for the norms), `attentionEfficiency` (attention pair FLOPs).
 * Per (measuring stack, GPU): `perLayerOverheadSeconds`, `perRequestSecondsPerLayer`,
 * `fixedOverheadSeconds` (per step), `launchSecondsPerLayer` (a step without a CUDA graph takes
 * at least `layers x launchSecondsPerLayer`: the CPU issues kernels ahead of the GPU, so an eager
 * step costs the larger of the GPU's work and the issue time; prefill is always eager),
 * `perRequestOverheadSeconds` (per request of the busiest rank, per step),
 * `perChunkOverheadSeconds` (per prefill chunk of the busiest rank, per step).
 *
 * @category models
 * @since 0.6.0
 */
export type ShapeParameters = { readonly [K in ShapeParameterName]: number }

/**
 * Default priors of the shape-aware fit: centres from what the hardware can do, wide relative
 * spreads for overheads, so data that identifies a parameter overrides its prior. `ridgeOverlap`
 * 0.3 (0 = a perfect roofline, 1 = no overlap), `gemmRowSeconds` 20 ps per token per GEMM
 * (a 4096 x 3072 slice of a 7B model at TP 4 on an A100 is then at 80% of its large-GEMM
 * efficiency), `launchSecondsPerLayer` 100 us (a Python eager loop), `perChunkOverheadSeconds`
 * 100 us; the rest as {@link defaultPriors}.
 *
 * @example
 * ```ts
 * import { defaultShapePriors } from "@loadledger/step-time"
 * defaultShapePriors.ridgeOverlap.plausible // => [0, 1]
 * ```
 *
 * @category calibration
 * @since 0.6.0
 */
export const defaultShapePriors: { readonly [K in ShapeParameterName]: ParameterPrior } = {
  memoryEfficiency: { centre: 0.75, relativeSd: 0.25, plausible: [0.45, 0.95] },
  computeEfficiency: { centre: 0.7, relativeSd: 0.35, plausible: [0.25, 0.98] },
  linkEfficiency: { centre: 0.6, relativeSd: 0.4, plausible: [0.15, 0.95] },
  collectiveLatencySeconds: { centre: 5e-6, relativeSd: 1, plausible: [0.5e-6, 50e-6] },
  ridgeOverlap: { centre: 0.3, relativeSd: 1, plausible: [0, 1] },
  gemmRowSeconds: { centre: 20e-12, relativeSd: 1.5, plausible: [0, 1e-9] },
  elementwiseEfficiency: { centre: 0.5, relativeSd: 0.5, plausible: [0.1, 0.95] },
  attentionEfficiency: { centre: 0.4, relativeSd: 0.5, plausible: [0.05, 0.95] },
  perLayerOverheadSeconds: { centre: 20e-6, relativeSd: 1, plausible: [1e-6, 300e-6] },
  perRequestSecondsPerLayer: { centre: 0.5e-6, relativeSd: 1.5, plausible: [0, 20e-6] },
  fixedOverheadSeconds: { centre: 3e-3, relativeSd: 1, plausible: [0.1e-3, 30e-3] },
  launchSecondsPerLayer: { centre: 100e-6, relativeSd: 1.5, plausible: [0, 2e-3] },
  perRequestOverheadSeconds: { centre: 100e-6, relativeSd: 1.5, plausible: [0, 2e-3] },
  perChunkOverheadSeconds: { centre: 100e-6, relativeSd: 1.5, plausible: [0, 5e-3] }
}

/**
 * The prior centres of {@link defaultShapePriors} as parameters (what a fit on no data returns).
 *
 * @example
 * ```ts
 * import { defaultShapeParameters } from "@loadledger/step-time"
 * defaultShapeParameters.launchSecondsPerLayer // => 0.0001
 * ```
 *
 * @category presets
 * @since 0.6.0
 */
export const defaultShapeParameters: ShapeParameters = Object.fromEntries(
  shapeParameterNames.map((n) => [n, defaultShapePriors[n].centre])
) as ShapeParameters

/**
 * The fit's parameter vector theta of {@link ShapeParameters}: the fields in declaration order,
 * efficiencies as 1 / efficiency (so every term of the model is linear in theta).
 *
 * @example
 * ```ts
 * import { defaultShapeParameters, shapeTheta } from "@loadledger/step-time"
 * shapeTheta(defaultShapeParameters)[0] // => 1 / 0.75
 * shapeTheta(defaultShapeParameters).length // => 14
 * ```
 *
 * @category calibration
 * @since 0.6.0
 */
export const shapeTheta = (p: ShapeParameters): Array<number> =>
  shapeParameterNames.map((n, i) => (isInverse(i) ? 1 / p[n] : p[n]))

/**
 * The parameters of a theta vector ({@link shapeTheta}'s inverse).
 *
 * @example
 * ```ts
 * import { defaultShapeParameters, shapeFromTheta, shapeTheta } from "@loadledger/step-time"
 * shapeFromTheta(shapeTheta(defaultShapeParameters)).memoryEfficiency // => 0.75
 * ```
 *
 * @category calibration
 * @since 0.6.0
 */
export const shapeFromTheta = (t: ReadonlyArray<number>): ShapeParameters =>
  Object.fromEntries(
    shapeParameterNames.map((n, i) => [n, isInverse(i) ? 1 / t[i]! : t[i]!])
  ) as ShapeParameters

/**
 * What {@link shapeStepSeconds} runs on: the model, the GPU, the fitted parameters (of the stack
 * you simulate on that GPU, e.g. `fitShape(...).success.gpus["h100-80gb"].stacks["my-stack"]`)
 * and whether decode steps replay a CUDA graph (`cudaGraph`, default true: decode pays no
 * per-layer launch floor; steps with a prefill chunk always do).
 *
 * @category models
 * @since 0.6.0
 */
export interface ShapeStepConfig {
  readonly model: ModelSpec
  readonly gpu: GpuSpec
  readonly params: ShapeParameters
  readonly cudaGraph?: boolean | undefined
}

/**
 * The shape-aware step time (seconds) of one lockstep step from each DP rank's aggregates: the
 * same structure as {@link stepTimeFromAggregates} (per-rank attention and projections, MLP from
 * the global token count, two collectives per layer, every rank waits for the slowest), with the
 * GEMM, attention and overhead terms of {@link ShapeParameters}.
 *
 * **When to use**: to time steps with a {@link fitShape} calibration. The simulator's default
 * step model is still {@link stepTimeFromAggregates}; this is the option that fits held-out
 * models better where the README's cross-validation table says so.
 *
 * @example
 * ```ts
 * import { defaultShapeParameters, gpus, models, shapeStepSeconds, withTp } from "@loadledger/step-time"
 * // a slow eager loop: 400 us of kernel issue per layer, 80 layers = 32 ms > the GPU's ~23 ms
 * const params = { ...defaultShapeParameters, launchSecondsPerLayer: 400e-6 }
 * const config = { model: withTp(models["llama2-70b"]!, 8), gpu: gpus["a100-80gb"]!, params }
 * const decode = [{ attentionPairs: 8 * 600, tokens: 8, numDecodes: 8, extendTokens: 0 }]
 * const graph = shapeStepSeconds(config, decode)
 * const eager = shapeStepSeconds({ ...config, cudaGraph: false }, decode)
 * graph < 0.025 // => true
 * eager - graph > 0.008 // => true
 * ```
 *
 * @category step time
 * @since 0.6.0
 */
export const shapeStepSeconds = (config: ShapeStepConfig, ranks: ReadonlyArray<RankAggregate>): number =>
  stepSeconds(
    config.model,
    config.gpu,
    ranks,
    shapeTheta(config.params),
    config.cudaGraph === false || ranks.some((r) => r.extendTokens > 0)
  )

/**
 * The shape-aware model's seconds for one calibration row (a step, a Vidur layer or attention
 * row, or a collective) under `params`: what {@link fitShape} fits to `measuredSeconds`. A step
 * row with `cudaGraph: false` runs its decode eagerly (pays the per-layer launch floor).
 *
 * **When to use**: to generate rows from known parameters (a synthetic calibration, as the tests
 * do) or to score a fitted stack on rows of your own without the warnings of {@link predictShape}.
 *
 * @example
 * ```ts
 * import { defaultShapeParameters, gpus, models, shapeSampleSeconds } from "@loadledger/step-time"
 * const row = { kind: "all-reduce" as const, gpu: gpus["a100-80gb"]!, gpus: 2, bytes: 0, measuredSeconds: 1 }
 * shapeSampleSeconds(defaultShapeParameters, row) // => 5e-6
 * ```
 *
 * @category calibration
 * @since 0.7.0
 */
export const shapeSampleSeconds = (params: ShapeParameters, sample: CalibrationSample): number =>
  evalShape(shapeBlockRow(sample), shapeTheta(params))
