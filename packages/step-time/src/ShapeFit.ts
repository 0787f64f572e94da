/**
 * The shape-aware calibration ({@link fitShape}): one parameter curve per GPU fitted jointly over
 * every model and stack measured on it, with intervals and identification per parameter.
 * Predictions with their warnings are in `ShapePredict.ts`.
 *
 * @since 0.6.0
 */
import * as Result from "effect/Result"
import type { CalibrationError, CalibrationSample } from "./Calibration.js"
import { stackOf } from "./internal/layout.js"
import { mapFit } from "./internal/mapFit.js"
import { mulberry32 } from "./internal/rng.js"
import { checkSamples } from "./internal/sampleChecks.js"
import { identify, type ParameterEstimate } from "./internal/shapeIdent.js"
import {
  evalShape,
  SG,
  type ShapeRow,
  SP,
  SS,
  shapeBlockRow,
  shapeFeatures,
  shapeParameterNames
} from "./internal/shapeTheta.js"
import {
  defaultShapeParameters,
  defaultShapePriors,
  type ShapeParameters,
  shapeFromTheta,
  shapeTheta
} from "./ShapeAware.js"

/**
 * `ParameterEstimate`: one fitted parameter of a {@link ShapeGpuFit} (`name`, `stack` for a
 * stack's overhead, `label`, `value`, 95% interval `low`..`high`, `status`, the prior's `plausible`
 * range); `ShapeStatus`: `"identified" | "weak" | "prior" | "unused" | "not identified"`.
 *
 * @category calibration
 * @since 0.6.0
 */
export type { ParameterEstimate, ShapeStatus } from "./internal/shapeIdent.js"

/**
 * What the rows of one GPU covered: models, tensor-parallel degrees, layer counts, stacks, and per
 * phase the tokens per step (steps) or per layer (layer rows). {@link predictShape} warns outside it.
 *
 * @category calibration
 * @since 0.6.0
 */
export interface ShapeDomain {
  readonly models: ReadonlyArray<string>
  readonly tp: ReadonlyArray<number>
  readonly layers: readonly [number, number] | undefined
  readonly tokens: Readonly<Record<string, readonly [number, number]>>
}

/**
 * One GPU of a {@link ShapeFitResult}: the full parameters per stack (the GPU's shared
 * efficiencies and shape terms, the stack's own overheads), each parameter's estimate with its
 * 95% interval and status (`identified`: the data shrink its spread to at most half the prior's;
 * `weak`: to 50-80%; `prior`: the prior sets it; `unused`: no row depends on it; `not identified`:
 * in an unseparable set), the unseparable sets, the robust relative residual scale, the domain.
 *
 * @category calibration
 * @since 0.6.0
 */
export interface ShapeGpuFit {
  readonly gpu: string
  readonly rows: number
  readonly stacks: Readonly<Record<string, ShapeParameters>>
  readonly estimates: ReadonlyArray<ParameterEstimate>
  readonly unseparable: ReadonlyArray<ReadonlyArray<string>>
  readonly residualScale: number
  readonly domain: ShapeDomain
  readonly iterations: number
}

/**
 * A shape-aware calibration: one {@link ShapeGpuFit} per GPU the rows name (collective-only GPUs
 * included), and the interval method (`covariance` or `bootstrap`).
 *
 * @category calibration
 * @since 0.6.0
 */
export interface ShapeFitResult {
  readonly kind: "shape"
  readonly gpus: Readonly<Record<string, ShapeGpuFit>>
  readonly intervals: "covariance" | "bootstrap"
}

/**
 * Options of {@link fitShape}: `noiseScale` (0.05: the relative error a row is expected to carry,
 * how hard the data pull against the priors), `outlierScale` (0.1), `maxIterations` (30),
 * `bootstrap` (`{ samples, seed }`: percentile intervals from that many refits on rows drawn with
 * replacement from a seeded generator, instead of the covariance at the MAP).
 *
 * @category calibration
 * @since 0.6.0
 */
export interface ShapeFitOptions {
  readonly noiseScale?: number | undefined
  readonly outlierScale?: number | undefined
  readonly maxIterations?: number | undefined
  readonly bootstrap?: { readonly samples: number; readonly seed: number } | undefined
}

interface Block {
  readonly row: ShapeRow
  readonly block: number | undefined
}

const rowTheta = (b: Block, joint: ReadonlyArray<number>): Array<number> => {
  const t = joint.slice(0, SG)
  if (b.block === undefined) for (let i = 0; i < SS; i++) t.push(0)
  else for (let i = 0; i < SS; i++) t.push(joint[b.block + i]!)
  return t
}

const priorVector = (stacks: ReadonlyArray<string>) => {
  const one = shapeTheta(defaultShapeParameters)
  const centre = [...one.slice(0, SG), ...stacks.flatMap(() => one.slice(SG))]
  const names = [...shapeParameterNames.slice(0, SG), ...stacks.flatMap(() => shapeParameterNames.slice(SG))]
  const sd = centre.map((c, i) => defaultShapePriors[names[i]!].relativeSd * c)
  const lower = names.map((_, i) => (i < SG && [0, 1, 2, 6, 7].includes(i) ? 1 : 0))
  return { centre, sd, lower }
}

const domainOf = (rows: ReadonlyArray<CalibrationSample>): ShapeDomain => {
  const models = new Set<string>()
  const tp = new Set<number>()
  let layers: [number, number] | undefined
  const tokens: Record<string, [number, number]> = {}
  for (const s of rows) {
    if (!("model" in s)) continue
    models.add(s.model.name)
    tp.add(s.model.tp)
    const tok =
      s.kind === "layer"
        ? s.tokens
        : s.ranks.reduce((a, b) => a + b.decode.length + b.extend.reduce((x, c) => x + c.tokens, 0), 0)
    const key = `${s.kind ?? "step"}/${s.phase ?? "step"}`
    const r = tokens[key]
    tokens[key] = r === undefined ? [tok, tok] : [Math.min(r[0], tok), Math.max(r[1], tok)]
    if (s.kind === undefined || s.kind === "step")
      layers =
        layers === undefined
          ? [s.model.numLayers, s.model.numLayers]
          : [Math.min(layers[0], s.model.numLayers), Math.max(layers[1], s.model.numLayers)]
  }
  return { models: [...models].sort(), tp: [...tp].sort((a, b) => a - b), layers, tokens }
}

const fitGpu = (
  gpu: string,
  samples: ReadonlyArray<CalibrationSample>,
  o: ShapeFitOptions | undefined
): ShapeGpuFit => {
  const stacks = [...new Set(samples.map(stackOf).filter((k): k is string => k !== undefined))]
  const blocks: Array<Block> = samples.map((s) => {
    const k = stackOf(s)
    return { row: shapeBlockRow(s), block: k === undefined ? undefined : SG + SS * stacks.indexOf(k) }
  })
  const { centre, sd, lower } = priorVector(stacks)
  const n = centre.length
  const features = (b: Block, joint: ReadonlyArray<number>) => {
    const f = shapeFeatures(b.row, rowTheta(b, joint))
    const out = new Array<number>(n).fill(0)
    for (let i = 0; i < SG; i++) out[i] = f[i]!
    if (b.block !== undefined) for (let i = 0; i < SS; i++) out[b.block + i] = f[SG + i]!
    return out
  }
  const problem = {
    rows: blocks,
    y: (b: Block) => b.row.y,
    value: (b: Block, joint: ReadonlyArray<number>) => evalShape(b.row, rowTheta(b, joint)),
    features,
    lower,
    prior: { centre, sd },
    start: centre,
    noise: o?.noiseScale ?? 0.05,
    outlier: o?.outlierScale ?? 0.1,
    maxIterations: o?.maxIterations ?? 30
  }
  const { theta, iterations } = mapFit(problem)
  const errs = blocks.map((b) => Math.abs(problem.value(b, theta) / b.row.y - 1)).sort((a, b) => a - b)
  const residualScale = errs.length > 0 ? 1.4826 * errs[Math.floor(errs.length / 2)]! : 0
  let boot: Array<Array<number>> | undefined
  if (o?.bootstrap !== undefined && o.bootstrap.samples > 0 && blocks.length > 0) {
    const next = mulberry32(o.bootstrap.seed)
    boot = []
    for (let b = 0; b < o.bootstrap.samples; b++) {
      const counts = new Array<number>(blocks.length).fill(0)
      for (let k = 0; k < blocks.length; k++) counts[Math.floor((next() / 2 ** 32) * blocks.length)]!++
      boot.push(
        mapFit({ ...problem, start: theta, counts, maxIterations: Math.min(problem.maxIterations, 10) }).theta
      )
    }
  }
  const { estimates, unseparable } = identify({
    theta,
    lower,
    prior: { centre, sd },
    jacobian: blocks.map((b) => ({ f: features(b, theta), y: b.row.y, w: 1 })),
    residualScale,
    stacks,
    plausible: (name) => defaultShapePriors[name].plausible,
    bootstrap: boot
  })
  const stackParams = Object.fromEntries(
    stacks.map((k, j) => [
      k,
      shapeFromTheta([...theta.slice(0, SG), ...theta.slice(SG + SS * j, SG + SS * (j + 1))])
    ])
  )
  if (stacks.length === 0) stackParams[""] = shapeFromTheta([...theta.slice(0, SG), ...centre.slice(SG, SP)])
  return {
    gpu,
    rows: samples.length,
    stacks: stackParams,
    estimates,
    unseparable,
    residualScale,
    domain: domainOf(samples),
    iterations
  }
}

/**
 * Fit the shape-aware model ({@link ShapeParameters}) to measured rows of any kinds, models, GPUs
 * and stacks, as the MAP under {@link defaultShapePriors}, and say per parameter how well the data
 * pin it.
 *
 * **When to use**: to calibrate {@link shapeStepSeconds} across models: the GPU's efficiency
 * curves are shared by every model and stack measured on it, the overheads belong to (stack, GPU).
 * Check each estimate's `status` before trusting a prediction, and use {@link predictShape}, which
 * says when a row falls outside what identified the parameters. A step row with `cudaGraph: false`
 * (splitwise's rows) runs its decode eagerly and pays the launch floor.
 *
 * Method: parameters of one GPU never meet another GPU's rows, so each GPU is one joint solve
 * (its GPU block and one overhead block per stack) by the MAP iteration of {@link fit}, on the
 * model of `internal/shapeTheta.ts`. Intervals: 95%, from the posterior covariance at the MAP with
 * the data term scaled by the fit's robust residual scale, or from `bootstrap`. Fails when there
 * are no rows or a measured time is not positive.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { defaultShapeParameters, fitShape, gpus, models, shapeSampleSeconds, withTp } from "@loadledger/step-time"
 * // layer rows generated by the model itself from known efficiencies
 * const truth = { ...defaultShapeParameters, memoryEfficiency: 0.8, computeEfficiency: 0.6 }
 * const gpu = gpus["a100-80gb"]!
 * const rows = [1, 2, 4, 8].flatMap((tp) => [1, 64, 512, 4096].map((tokens) => {
 *   const row = { kind: "layer" as const, model: withTp(models["llama2-70b"]!, tp), gpu, tokens, source: "vidur", measuredSeconds: 1 }
 *   return { ...row, measuredSeconds: shapeSampleSeconds(truth, row) }
 * }))
 * const est = Result.getOrThrow(fitShape(rows)).gpus["a100-80gb"]!.estimates
 * const memory = est.find((e) => e.name === "memoryEfficiency")!
 * memory.status // => "identified"
 * Math.abs(memory.value - 0.8) < 0.01 && memory.low < 0.8 && memory.high > 0.8 // => true
 * est.find((e) => e.name === "launchSecondsPerLayer")!.status // => "unused"
 * ```
 *
 * @category calibration
 * @since 0.6.0
 */
export const fitShape = (
  samples: ReadonlyArray<CalibrationSample>,
  options?: ShapeFitOptions
): Result.Result<ShapeFitResult, CalibrationError> => {
  const invalid = checkSamples(samples)
  if (invalid !== undefined) return Result.fail(invalid)
  const byGpu = new Map<string, Array<CalibrationSample>>()
  for (const s of samples) byGpu.set(s.gpu.name, [...(byGpu.get(s.gpu.name) ?? []), s])
  const gpus: Record<string, ShapeGpuFit> = {}
  for (const [g, rows] of byGpu) gpus[g] = fitGpu(g, rows, options)
  return Result.succeed({
    kind: "shape",
    gpus,
    intervals: options?.bootstrap === undefined ? "covariance" : "bootstrap"
  })
}
