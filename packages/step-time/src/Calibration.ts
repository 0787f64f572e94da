/**
 * Calibration: fit the efficiencies and overheads of the step-time model to measured step times
 * by least squares, and measure the fit's error (MAPE) on held-out rows.
 *
 * @since 0.1.0
 */
import { Result } from "effect"
import { aggregate, type RankAggregate, type RankBatch } from "./Batch.js"
import { defaultEfficiencies, type Efficiencies } from "./Efficiencies.js"
import type { GpuSpec } from "./Hardware.js"
import { nnls } from "./internal/nnls.js"
import type { ModelSpec } from "./Model.js"
import { stepTimeFromAggregates } from "./StepTime.js"

/**
 * One measured step: the model and GPU it ran on, each rank's batch, and the measured step time
 * in seconds. `group` and `phase` label the row for per-group error reports (e.g. `h100-80gb`,
 * `decode`).
 *
 * @category calibration
 * @since 0.1.0
 */
export interface CalibrationSample {
  readonly model: ModelSpec
  readonly gpu: GpuSpec
  readonly ranks: ReadonlyArray<RankBatch>
  readonly measuredSeconds: number
  readonly group?: string | undefined
  readonly phase?: "decode" | "prefill" | undefined
  /** Rows measured on the same setup share this key (repeats); see {@link crossValidate}. */
  readonly configuration?: string | undefined
}

/**
 * Why calibration could not run (`field` names the bad input: `samples`, or a CSV column).
 *
 * @category errors
 * @since 0.1.0
 */
export interface CalibrationError {
  readonly _tag: "CalibrationError"
  readonly field: string
  readonly message: string
  readonly row?: number | undefined
}

/**
 * Fitted efficiencies and the in-sample error: `mape` is the mean absolute percentage error
 * (percent) over the fitted rows.
 *
 * @category calibration
 * @since 0.1.0
 */
export interface FitResult {
  readonly params: Efficiencies
  readonly rows: number
  readonly iterations: number
  readonly mape: number
}

// theta = [1/mem, 1/comp, 1/link, latency, perLayer, perRequest, fixed, eager]: every term of the
// model is one theta_i times a physical quantity, so the model is piecewise linear in theta.
const NP = 8
const lower = [1, 1, 1, 0, 0, 0, 0, 0]
const toTheta = (p: Efficiencies): Array<number> => [
  1 / p.memoryEfficiency,
  1 / p.computeEfficiency,
  1 / p.linkEfficiency,
  p.collectiveLatencySeconds,
  p.perLayerOverheadSeconds,
  p.perRequestSecondsPerLayer,
  p.fixedOverheadSeconds,
  p.eagerOverheadSecondsPerLayer
]
const fromTheta = (t: ReadonlyArray<number>): Efficiencies => ({
  memoryEfficiency: 1 / t[0]!,
  computeEfficiency: 1 / t[1]!,
  linkEfficiency: 1 / t[2]!,
  collectiveLatencySeconds: t[3]!,
  perLayerOverheadSeconds: t[4]!,
  perRequestSecondsPerLayer: t[5]!,
  fixedOverheadSeconds: t[6]!,
  eagerOverheadSecondsPerLayer: t[7]!
})

interface Prepared {
  readonly model: ModelSpec
  readonly gpu: GpuSpec
  readonly aggs: ReadonlyArray<RankAggregate>
  readonly y: number
}
const prepare = (s: CalibrationSample): Prepared => ({
  model: s.model,
  gpu: s.gpu,
  aggs: s.ranks.map((b) => aggregate(b, s.model.attention.sparseTopK)),
  y: s.measuredSeconds
})
const evalTheta = (s: Prepared, theta: ReadonlyArray<number>): number =>
  stepTimeFromAggregates({ model: s.model, gpu: s.gpu, params: fromTheta(theta) }, s.aggs).stepSeconds

// the physical features of a sample at theta: d(step)/d(theta_i), exact on each linear piece
const features = (s: Prepared, theta: ReadonlyArray<number>): Array<number> => {
  const base = evalTheta(s, theta)
  return theta.map((ti, i) => {
    const h = Math.max(Math.abs(ti), 1e-9) * 1e-6
    const t2 = [...theta]
    t2[i] = ti + h
    return (evalTheta(s, t2) - base) / h
  })
}

// Cauchy loss on relative errors: quadratic for small errors, logarithmic for gross ones
const objective = (ps: ReadonlyArray<Prepared>, theta: ReadonlyArray<number>, c: number) => {
  let s = 0
  for (const p of ps) {
    const e = (evalTheta(p, theta) - p.y) / p.y
    s += c * c * Math.log1p((e / c) ** 2)
  }
  return s
}

/**
 * Fit the efficiencies and overheads to measured step times by least squares on relative
 * errors, through the model's physical features.
 *
 * **When to use**: to calibrate {@link stepTime} on your hardware and serving stack. Each row's
 * features are the derivatives of the modelled step time with respect to the parameters (bytes
 * over bandwidth, FLOPs over peak, collective peers, layers, requests, one per step), so the
 * fitted parameters carry to another model on the same hardware. The roofline's `max` makes the
 * model piecewise linear: the fit alternates between picking each term's active side at the
 * current parameters and a non-negative least-squares solve (efficiencies stay in (0, 1],
 * overheads >= 0), iteratively reweighted with Cauchy weights `1 / (1 + (e / outlierScale)^2)`
 * on the relative residuals e (`outlierScale` default 0.1: a row 10% off counts half) so that a
 * few corrupt rows (the splitwise TP2 batch-64 prefill rows report 64 prompts faster than 32)
 * cannot drag the fit; the best iterate by Cauchy loss is
 * kept. Parameters no row depends on (e.g. eager overhead on decode-only data) keep
 * their `start` value. Fails when there are no rows or a measured time is not positive.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { fit, gpus, models, stepTime, withTp } from "@loadledger/step-time"
 * const model = withTp(models["llama2-70b"]!, 4)
 * const gpu = gpus["h100-80gb"]!
 * const truth = { memoryEfficiency: 0.8, fixedOverheadSeconds: 0.004 }
 * const samples = [1, 2, 4, 8, 16, 32].map((b) => {
 *   const ranks = [{ decode: Array(b).fill(1000), extend: [] }]
 *   return { model, gpu, ranks, measuredSeconds: stepTime({ model, gpu, params: truth }, ranks).stepSeconds }
 * })
 * const r = fit(samples)
 * Result.isSuccess(r) && r.success.mape < 1 // => true
 * ```
 *
 * @category calibration
 * @since 0.1.0
 */
export const fit = (
  samples: ReadonlyArray<CalibrationSample>,
  options?: {
    readonly start?: Partial<Efficiencies> | undefined
    readonly maxIterations?: number | undefined
    readonly outlierScale?: number | undefined
  }
): Result.Result<FitResult, CalibrationError> => {
  if (samples.length === 0)
    return Result.fail({ _tag: "CalibrationError", field: "samples", message: "no samples" })
  const bad = samples.findIndex((s) => !(s.measuredSeconds > 0) || !Number.isFinite(s.measuredSeconds))
  if (bad >= 0)
    return Result.fail({
      _tag: "CalibrationError",
      field: "measuredSeconds",
      row: bad,
      message: "measured step time must be a positive number of seconds"
    })
  const ps = samples.map(prepare)
  let theta = toTheta({ ...defaultEfficiencies, ...options?.start })
  let best = theta
  const maxIt = options?.maxIterations ?? 30
  const outlier = options?.outlierScale ?? 0.1
  let bestObj = objective(ps, theta, outlier)
  let iterations = 0
  let weights = ps.map(() => 1)
  for (; iterations < maxIt; iterations++) {
    const rows = ps.map((p) => features(p, theta))
    const norms = new Array<number>(NP).fill(0)
    for (const f of rows) for (let i = 0; i < NP; i++) norms[i]! += (f[i]! / 1) ** 2
    const free = norms.map((n) => n > 0)
    // weighted system: rows divided by y (relative error), theta = lower + phi, fixed params moved to b
    const a: Array<Array<number>> = []
    const b: Array<number> = []
    const scale = new Array<number>(NP).fill(0)
    ps.forEach((p, r) => {
      const f = rows[r]!
      let rhs = p.y
      for (let i = 0; i < NP; i++) rhs -= f[i]! * (free[i] ? lower[i]! : theta[i]!)
      const w = Math.sqrt(weights[r]!) / p.y
      a.push(f.map((v, i) => (free[i] ? v * w : 0)))
      b.push(rhs * w)
    })
    for (const row of a) for (let i = 0; i < NP; i++) scale[i]! += row[i]! * row[i]!
    const s = scale.map((v) => (v > 0 ? Math.sqrt(v) : 1))
    const phi = nnls(
      a.map((row) => row.map((v, i) => v / s[i]!)),
      b,
      NP
    )
    const next = theta.map((t, i) => (free[i] ? lower[i]! + phi[i]! / s[i]! : t))
    const obj = objective(ps, next, outlier)
    // Cauchy weights on relative residuals: a row `outlierScale` off counts half, gross outliers
    // almost nothing, so a few corrupt rows cannot drag the fit
    weights = ps.map((p) => {
      const e = Math.abs((evalTheta(p, next) - p.y) / p.y)
      return 1 / (1 + (e / outlier) ** 2)
    })
    if (obj < bestObj) {
      bestObj = obj
      best = next
    }
    const change = Math.max(
      ...next.map((v, i) => Math.abs(v - theta[i]!) / Math.max(Math.abs(theta[i]!), 1e-12))
    )
    theta = next
    if (change < 1e-9) {
      iterations++
      break
    }
  }
  return Result.succeed({
    params: fromTheta(best),
    rows: ps.length,
    iterations,
    mape: mape(samples, fromTheta(best)).mape
  })
}

/**
 * The modelled step time of a sample under `params`.
 *
 * @example
 * ```ts
 * import { defaultEfficiencies, gpus, models, predict } from "@loadledger/step-time"
 * const s = { model: models["glm-5.3"]!, gpu: gpus["h200"]!, ranks: [{ decode: [8192], extend: [] }], measuredSeconds: 0.03 }
 * predict(s, defaultEfficiencies) > 0 // => true
 * ```
 *
 * @category calibration
 * @since 0.1.0
 */
export const predict = (sample: CalibrationSample, params: Partial<Efficiencies>): number =>
  evalTheta(prepare(sample), toTheta({ ...defaultEfficiencies, ...params }))

/**
 * Mean absolute percentage error (percent) overall and per `group/phase` label, with the median
 * absolute percentage error next to it (robust to a few corrupt rows).
 *
 * @category calibration
 * @since 0.1.0
 */
export interface MapeReport {
  readonly mape: number
  readonly medianApe: number
  readonly rows: number
  readonly byGroup: Record<
    string,
    { readonly mape: number; readonly medianApe: number; readonly rows: number }
  >
}

const median = (xs: ReadonlyArray<number>): number => {
  if (xs.length === 0) return 0
  const s = [...xs].sort((a, b) => a - b)
  const n = s.length
  return n % 2 === 1 ? s[(n - 1) / 2]! : (s[n / 2 - 1]! + s[n / 2]!) / 2
}

const summarize = (
  errors: ReadonlyArray<{ readonly s: CalibrationSample; readonly e: number }>
): MapeReport => {
  const groups = new Map<string, Array<number>>()
  for (const { s, e } of errors) {
    const key = `${s.group ?? s.gpu.name}/${s.phase ?? "step"}`
    const g = groups.get(key) ?? []
    g.push(e)
    groups.set(key, g)
  }
  const mean = (xs: ReadonlyArray<number>) => (xs.length > 0 ? xs.reduce((a, b) => a + b, 0) / xs.length : 0)
  const byGroup: Record<string, { mape: number; medianApe: number; rows: number }> = {}
  for (const [k, g] of groups) byGroup[k] = { mape: mean(g), medianApe: median(g), rows: g.length }
  const all = errors.map((x) => x.e)
  return { mape: mean(all), medianApe: median(all), rows: errors.length, byGroup }
}

/**
 * Mean absolute percentage error of `params` on `samples`, overall and per `group/phase` label.
 *
 * @example
 * ```ts
 * import { gpus, mape, models, stepTime } from "@loadledger/step-time"
 * const model = models["glm-5.3"]!, gpu = gpus["h200"]!, ranks = [{ decode: [8192], extend: [] }]
 * const t = stepTime({ model, gpu }, ranks).stepSeconds
 * mape([{ model, gpu, ranks, measuredSeconds: t * 1.1 }], {}).mape.toFixed(2) // => "9.09"
 * ```
 *
 * @category calibration
 * @since 0.1.0
 */
export const mape = (
  samples: ReadonlyArray<CalibrationSample>,
  params: Partial<Efficiencies>
): MapeReport => {
  const theta = toTheta({ ...defaultEfficiencies, ...params })
  return summarize(
    samples.map((s) => ({
      s,
      e: (100 * Math.abs(evalTheta(prepare(s), theta) - s.measuredSeconds)) / s.measuredSeconds
    }))
  )
}

/**
 * K-fold cross-validation: each fold is fitted on the other rows and scored on its own; returns
 * the held-out MAPE overall and per `group/phase`. By default row i is held out in fold
 * `i mod folds`. With `holdOut: "configuration"` all rows sharing a `configuration` key (the
 * repeats of one measured setup) are held out together, so the score is on setups the fit never
 * saw (the n-th distinct configuration goes to fold `n mod folds`).
 *
 * **When to use**: to report how well a calibration predicts rows it did not see (issue 5:
 * "fit on part of the rows, report MAPE on the rest").
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { crossValidate, gpus, models, stepTime } from "@loadledger/step-time"
 * const model = models["llama2-70b"]!, gpu = gpus["a100-80gb"]!
 * const samples = [1, 2, 4, 8, 16, 32, 64].map((b) => {
 *   const ranks = [{ decode: Array(b).fill(600), extend: [] }]
 *   return { model, gpu, ranks, measuredSeconds: stepTime({ model, gpu }, ranks).stepSeconds }
 * })
 * const cv = crossValidate(samples, 7)
 * Result.isSuccess(cv) && cv.success.mape < 1 // => true
 * ```
 *
 * @category calibration
 * @since 0.1.0
 */
export const crossValidate = (
  samples: ReadonlyArray<CalibrationSample>,
  folds = 5,
  options?: {
    readonly start?: Partial<Efficiencies> | undefined
    readonly holdOut?: "row" | "configuration" | undefined
  }
): Result.Result<MapeReport, CalibrationError> => {
  if (samples.length < 2 || folds < 2)
    return Result.fail({
      _tag: "CalibrationError",
      field: "samples",
      message: "need at least 2 rows and 2 folds"
    })
  const configs = new Map<string, number>()
  const foldOf = samples.map((s, i) => {
    if (options?.holdOut !== "configuration") return i % folds
    const key = s.configuration ?? `row ${i}`
    const n = configs.get(key) ?? configs.size
    configs.set(key, n)
    return n % folds
  })
  const scored: Array<{ s: CalibrationSample; p: Efficiencies }> = []
  for (let f = 0; f < folds; f++) {
    const train = samples.filter((_, i) => foldOf[i] !== f)
    const test = samples.filter((_, i) => foldOf[i] === f)
    if (test.length === 0) continue
    const r = fit(train, { start: options?.start })
    if (Result.isFailure(r)) return Result.fail(r.failure)
    for (const s of test) scored.push({ s, p: r.success.params })
  }
  // score each held-out row with its own fold's parameters
  return Result.succeed(summarize(scored.map(({ s, p }) => ({ s, e: mape([s], p).mape }))))
}
