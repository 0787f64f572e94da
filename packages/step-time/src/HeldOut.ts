/**
 * Leave-one-model-out and leave-one-GPU-out cross-validation of either calibration kind (the
 * per-GPU roofline fit {@link fit}, or the shape-aware {@link fitShape}), scored per
 * (model, source, phase, GPU) cell of each held-out fold.
 *
 * @since 0.6.0
 */
import * as Result from "effect/Result"
import type { CalibrationError, CalibrationSample } from "./Calibration.js"
import { parametersFor, predict, sampleModel } from "./Calibration.js"
import type { Efficiencies } from "./Efficiencies.js"
import { belowPhysicalFloor } from "./Feasibility.js"
import { type FitResult, fit } from "./Fit.js"
import { stackOf } from "./internal/layout.js"
import { mean, median } from "./internal/summary.js"
import { fromTheta, NG, toTheta } from "./internal/theta.js"
import { defaultPriors, priorCentres } from "./Priors.js"
import { fitShape } from "./ShapeFit.js"
import { predictShape } from "./ShapePredict.js"

/**
 * One scored cell of a held-out fold: the rows of one (model, source, phase, GPU) that the fold
 * held out, their MAPE, median and mean signed error (percent, positive = predicted too slow), and
 * the distinct warnings the predictions carried (shape-aware kind; the roofline kind names only a
 * GPU or stack it had to pool).
 *
 * @category calibration
 * @since 0.6.0
 */
export interface HeldOutCell {
  readonly fold: string
  readonly model: string
  readonly source: string
  readonly phase: string
  readonly gpu: string
  readonly rows: number
  readonly mape: number
  readonly medianApe: number
  readonly bias: number
  readonly warnings: ReadonlyArray<string>
}

/**
 * The calibration {@link heldOutCells} cross-validates: `"roofline"` ({@link fit} per GPU, the
 * default step model's parameters) or `"shape"` ({@link fitShape}).
 *
 * @category calibration
 * @since 0.6.0
 */
export type CalibrationKind = "roofline" | "shape"

type Predictor = (s: CalibrationSample) => {
  readonly seconds: number
  readonly warnings: ReadonlyArray<string>
}

const rooflinePredictor = (
  train: ReadonlyArray<CalibrationSample>
): Result.Result<Predictor, CalibrationError> => {
  const byGpu = new Map<string, Array<CalibrationSample>>()
  for (const s of train) byGpu.set(s.gpu.name, [...(byGpu.get(s.gpu.name) ?? []), s])
  const fits = new Map<string, FitResult>()
  for (const [g, rows] of byGpu) {
    const r = fit(rows)
    if (Result.isFailure(r)) return Result.fail(r.failure)
    fits.set(g, r.success)
  }
  const prior = priorCentres(defaultPriors)
  const modelled = [...fits].filter(([g]) => byGpu.get(g)!.some((s) => sampleModel(s) !== undefined))
  return Result.succeed((s) => {
    const stack = stackOf(s)
    const f = fits.get(s.gpu.name)
    const withPrior = (gpu: Efficiencies): Efficiencies => ({
      ...prior,
      ...Object.fromEntries(Object.entries(gpu).slice(0, NG))
    })
    if (f !== undefined) {
      if (stack === undefined || Object.hasOwn(f.stacks, stack))
        return { seconds: predict(s, f), warnings: [] }
      return {
        seconds: predict(s, withPrior(f.params)),
        warnings: [`stack ${stack} not measured on ${s.gpu.name}: prior overheads`]
      }
    }
    if (modelled.length === 0)
      return { seconds: predict(s, prior), warnings: [`${s.gpu.name} not in the fit: priors`] }
    // an unseen GPU: the mean of the fitted GPUs' parameters (efficiencies as fractions of this GPU's peaks)
    const thetas = modelled.map(([, g]) =>
      toTheta(stack !== undefined && Object.hasOwn(g.stacks, stack) ? g.stacks[stack]! : parametersFor(g, s))
    )
    const t = thetas[0]!.map((_, i) => thetas.reduce((a, x) => a + x[i]!, 0) / thetas.length)
    return {
      seconds: predict(s, fromTheta(t)),
      warnings: [
        `${s.gpu.name} not in the fit: parameters pooled from ${modelled.map(([g]) => g).join(", ")}`
      ]
    }
  })
}

const shapePredictor = (
  train: ReadonlyArray<CalibrationSample>
): Result.Result<Predictor, CalibrationError> => {
  // a fold that holds out the only GPU trains on nothing: predict from the priors, with the warning
  if (train.length === 0)
    return Result.succeed((s) => predictShape({ kind: "shape", gpus: {}, intervals: "covariance" }, s))
  const r = fitShape(train)
  return Result.isFailure(r) ? Result.fail(r.failure) : Result.succeed((s) => predictShape(r.success, s))
}

/**
 * Cross-validate a calibration kind holding out one model (`by: "model"`: every row of it, on
 * every GPU) or one GPU (`by: "gpu"`: every model's rows on it; its efficiencies then come from
 * the other GPUs, pooled as fractions of its datasheet peaks) at a time, and score each held-out
 * (model, source, phase, GPU) cell. Rows below their physical floor are dropped first
 * ({@link belowPhysicalFloor}); collectives are never held out. Nothing is fitted on the held-out
 * rows.
 *
 * **When to use**: to know how a calibration transfers to a model or a GPU it never saw, cell by
 * cell (`pnpm bench:steptime` prints both kinds' tables over the shared data). Fails only when a
 * fit fails.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { gpus, heldOutCells, models, stepTime } from "@loadledger/step-time"
 * const gpu = gpus["h100-80gb"]!, truth = { memoryEfficiency: 0.8, fixedOverheadSeconds: 0.005 }
 * const rows = ["llama2-70b", "bloom-176b"].flatMap((name) => [1, 4, 16].map((b) => {
 *   const model = models[name]!, ranks = [{ decode: Array(b).fill(1000), extend: [] }]
 *   return { model, gpu, ranks, phase: "decode" as const, source: "s", measuredSeconds: stepTime({ model, gpu, params: truth }, ranks).stepSeconds }
 * }))
 * const cells = Result.getOrThrow(heldOutCells(rows, { by: "model", kind: "roofline" }))
 * cells.map((c) => `${c.fold} ${c.rows}`).join(", ") // => "llama2-70b 3, bloom-176b 3"
 * ```
 *
 * @category calibration
 * @since 0.6.0
 */
export const heldOutCells = (
  samples: ReadonlyArray<CalibrationSample>,
  options: { readonly by: "model" | "gpu"; readonly kind: CalibrationKind }
): Result.Result<ReadonlyArray<HeldOutCell>, CalibrationError> => {
  const kept = belowPhysicalFloor(samples).kept
  const modelRows = kept.filter((s) => sampleModel(s) !== undefined)
  const keyOf = (s: CalibrationSample) => (options.by === "model" ? sampleModel(s)! : s.gpu.name)
  const folds = [...new Set(modelRows.map(keyOf))]
  const out: Array<HeldOutCell> = []
  for (const fold of folds) {
    const train = kept.filter((s) => sampleModel(s) === undefined || keyOf(s) !== fold)
    const predictor = (options.kind === "shape" ? shapePredictor : rooflinePredictor)(train)
    if (Result.isFailure(predictor)) return Result.fail(predictor.failure)
    const cells = new Map<string, { s: CalibrationSample; e: Array<number>; w: Set<string> }>()
    for (const s of modelRows) {
      if (keyOf(s) !== fold) continue
      const k = `${sampleModel(s)}|${s.source ?? "unspecified"}|${s.phase ?? "step"}|${s.gpu.name}`
      const c = cells.get(k) ?? { s, e: [], w: new Set<string>() }
      const p = predictor.success(s)
      c.e.push((100 * (p.seconds - s.measuredSeconds)) / s.measuredSeconds)
      for (const w of p.warnings) c.w.add(w)
      cells.set(k, c)
    }
    for (const { s, e, w } of cells.values()) {
      const abs = e.map(Math.abs)
      out.push({
        fold,
        model: sampleModel(s)!,
        source: s.source ?? "unspecified",
        phase: s.phase ?? "step",
        gpu: s.gpu.name,
        rows: e.length,
        mape: mean(abs),
        medianApe: median(abs),
        bias: mean(e),
        warnings: [...w]
      })
    }
  }
  return Result.succeed(out)
}
