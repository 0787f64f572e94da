/**
 * Predictions of a shape-aware calibration with the reasons not to trust them: a GPU or stack the
 * fit never saw, a row outside the models, TP degrees, layer counts or token counts that fitted
 * the GPU, and parameters the row depends on that the data do not identify.
 *
 * @since 0.6.0
 */
import type { CalibrationSample } from "./Calibration.js"
import { stackOf } from "./internal/layout.js"
import { evalShape, SG, shapeBlockRow, shapeFeatures, shapeParameterNames } from "./internal/shapeTheta.js"
import { defaultShapeParameters, type ShapeParameters, shapeFromTheta, shapeTheta } from "./ShapeAware.js"
import type { ShapeFitResult, ShapeGpuFit } from "./ShapeFit.js"

/**
 * A {@link predictShape} result: the modelled seconds, the parameters used, and one line per
 * reason the figure rests on something the data did not pin (empty: every parameter the row
 * leans on is identified and the row is inside the fitted domain).
 *
 * @category calibration
 * @since 0.6.0
 */
export interface ShapePrediction {
  readonly seconds: number
  readonly params: ShapeParameters
  readonly warnings: ReadonlyArray<string>
}

const mean = (xs: ReadonlyArray<ReadonlyArray<number>>) =>
  xs[0]!.map((_, i) => xs.reduce((a, x) => a + x[i]!, 0) / xs.length)

/** The parameters for a sample's GPU and stack, pooled over the other GPUs when the fit lacks them. */
const paramsFor = (
  fit: ShapeFitResult,
  gpu: string,
  stack: string | undefined,
  warnings: Array<string>
): { params: ShapeParameters; cell: ShapeGpuFit | undefined } => {
  const cell = fit.gpus[gpu]
  const others = Object.values(fit.gpus).filter((g) => g.gpu !== gpu)
  const pooledStack = (k: string) => {
    const from = others.filter((g) => Object.hasOwn(g.stacks, k))
    return from.length === 0 ? undefined : { from, t: mean(from.map((g) => shapeTheta(g.stacks[k]!))) }
  }
  if (cell !== undefined) {
    const own = stack === undefined ? Object.values(cell.stacks)[0] : cell.stacks[stack]
    if (own !== undefined) return { params: own, cell }
    const gpuT = shapeTheta(Object.values(cell.stacks)[0] ?? defaultShapeParameters).slice(0, SG)
    const pooled = stack === undefined ? undefined : pooledStack(stack)
    warnings.push(
      pooled === undefined
        ? `stack ${stack} was not measured on ${gpu}: its overheads are the priors' (NOT IDENTIFIED)`
        : `stack ${stack} was not measured on ${gpu}: its overheads are pooled from ${pooled.from.map((g) => g.gpu).join(", ")} (NOT IDENTIFIED on ${gpu})`
    )
    const stackT = pooled?.t ?? shapeTheta(defaultShapeParameters)
    return { params: shapeFromTheta([...gpuT, ...stackT.slice(SG)]), cell }
  }
  const gpuFrom = others.filter((g) => g.domain.models.length > 0)
  if (gpuFrom.length === 0) {
    warnings.push(
      `${gpu} is not in the fit and no other GPU is: every parameter is its prior (NOT IDENTIFIED)`
    )
    return { params: defaultShapeParameters, cell: undefined }
  }
  const gpuT = mean(gpuFrom.map((g) => shapeTheta(Object.values(g.stacks)[0]!))).slice(0, SG)
  const pooled = stack === undefined ? undefined : pooledStack(stack)
  warnings.push(
    `${gpu} is not in the fit: its efficiencies and shape terms are the mean of ${gpuFrom.map((g) => g.gpu).join(", ")} (as fractions of ${gpu}'s datasheet peaks; NOT IDENTIFIED for ${gpu})`
  )
  const stackT = pooled?.t ?? shapeTheta(defaultShapeParameters)
  return { params: shapeFromTheta([...gpuT, ...stackT.slice(SG)]), cell: undefined }
}

const tokensOf = (s: CalibrationSample) =>
  s.kind === "layer"
    ? s.tokens
    : "ranks" in s
      ? s.ranks.reduce((a, b) => a + b.decode.length + b.extend.reduce((x, c) => x + c.tokens, 0), 0)
      : 0

/**
 * Predict one row with a {@link fitShape} calibration and say what the figure rests on.
 *
 * **When to use**: whenever a shape-aware prediction leaves the rows that fitted it (another model,
 * GPU, TP degree, batch): a capacity plan should carry the warnings with the number. Warnings:
 * the GPU is not in the fit (its efficiencies are pooled from the fitted GPUs as fractions of its
 * datasheet peaks) or the stack was not measured on it (overheads pooled from other GPUs, or the
 * priors); the model, TP degree, layer count or token count lies outside the GPU's training
 * domain; a parameter carrying at least 5% of the predicted time is not identified (its status and
 * share named). Pure; never throws.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { fitShape, gpus, models, predictShape, withTp } from "@loadledger/step-time"
 * const rows = [1, 2, 4].flatMap((tp) => [1, 64, 512, 4096].map((tokens) => ({
 *   kind: "layer" as const, model: withTp(models["llama2-70b"]!, tp), gpu: gpus["a100-80gb"]!, tokens,
 *   source: "vidur", measuredSeconds: (tokens * 1.4e-6 + 0.0011) / tp })))
 * const fitted = Result.getOrThrow(fitShape(rows))
 * const p = predictShape(fitted, { ...rows[0]!, gpu: gpus["h100-80gb"]!, model: withTp(models["llama2-70b"]!, 8) })
 * p.warnings[0]!.startsWith("h100-80gb is not in the fit") // => true
 * p.warnings.some((w) => w.includes("TP 8")) // => false
 * ```
 *
 * @category calibration
 * @since 0.6.0
 */
export const predictShape = (fit: ShapeFitResult, sample: CalibrationSample): ShapePrediction => {
  const warnings: Array<string> = []
  const stack = stackOf(sample)
  const { params, cell } = paramsFor(fit, sample.gpu.name, stack, warnings)
  const row = shapeBlockRow(sample)
  const theta = shapeTheta(params)
  const seconds = evalShape(row, theta)
  if (cell !== undefined && "model" in sample) {
    const d = cell.domain
    const m = sample.model
    if (!d.models.includes(m.name))
      warnings.push(`model ${m.name} was not among ${cell.gpu}'s rows (${d.models.join(", ")})`)
    if (d.tp.length > 0 && (m.tp < d.tp[0]! || m.tp > d.tp[d.tp.length - 1]!))
      warnings.push(`TP ${m.tp} is outside ${cell.gpu}'s fitted TP ${d.tp.join(", ")}`)
    if (
      (sample.kind === undefined || sample.kind === "step") &&
      d.layers !== undefined &&
      (m.numLayers < d.layers[0] || m.numLayers > d.layers[1])
    )
      warnings.push(
        `${m.numLayers} layers is outside the fitted ${d.layers[0]}-${d.layers[1]} (per-step and per-layer overheads extrapolate)`
      )
    const range = d.tokens[`${sample.kind ?? "step"}/${sample.phase ?? "step"}`]
    const tok = tokensOf(sample)
    if (range !== undefined && (tok < range[0] || tok > range[1]))
      warnings.push(
        `${tok} tokens is outside the fitted ${range[0]}-${range[1]} for ${sample.kind ?? "step"} ${sample.phase ?? "step"} rows`
      )
  }
  if (cell !== undefined && seconds > 0) {
    const f = shapeFeatures(row, theta)
    f.forEach((v, i) => {
      const share = (v * theta[i]!) / seconds
      if (share < 0.05) return
      const name = shapeParameterNames[i]!
      const est = cell.estimates.find((e) => e.name === name && (i < SG || e.stack === stack))
      if (est !== undefined && est.status !== "identified")
        warnings.push(
          `${est.label} carries ${(100 * share).toFixed(0)}% of the time and is ${est.status === "not identified" ? "NOT IDENTIFIED" : `${est.status} (set ${est.status === "prior" ? "by its prior" : "only partly by the data"})`}`
        )
    })
  }
  return { seconds, params, warnings }
}
