/**
 * Calibration fit: maximum a posteriori efficiencies and overheads under physical priors.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import type { CalibrationError, CalibrationSample } from "./Calibration.js"
import { mape } from "./Calibration.js"
import type { Efficiencies } from "./Efficiencies.js"
import {
  evalRow,
  jointFeatures,
  jointLower,
  jointOf,
  jointPrior,
  layoutOf,
  type Row,
  rowOf,
  stacksOf
} from "./internal/layout.js"
import { nnls } from "./internal/nnls.js"
import { checkSamples } from "./internal/sampleChecks.js"
import { fromTheta, NG, toTheta } from "./internal/theta.js"
import { defaultPriors, type Priors, priorCentres } from "./Priors.js"

/**
 * Fitted efficiencies and the in-sample error: `mape` is the mean absolute percentage error
 * (percent) over the fitted rows. `stacks` holds one full parameter set per measurement stack
 * (each row's `source`): the GPU's efficiencies, shared by every stack, with that stack's own
 * overheads. `params` is the first stack's (in row order; the only one when every row comes
 * from one source), or the efficiencies with the prior's overheads when only collectives were
 * fitted. A FitResult is a {@link StackParameters}: pass it whole to {@link predict},
 * {@link mape} or {@link identifiability} to score each row with its own stack's overheads.
 *
 * @category calibration
 * @since 0.1.0
 */
export interface FitResult {
  readonly params: Efficiencies
  readonly stacks: Readonly<Record<string, Efficiencies>>
  readonly rows: number
  readonly iterations: number
  readonly mape: number
}

/**
 * Options of {@link fit}: `priors` (default {@link defaultPriors}; `"none"` for the plain
 * least-squares fit of 0.1.0), `noiseScale` (the relative error a measured row is expected to
 * carry, default 0.05: it sets how strongly the data pull against the priors), `start` (default:
 * the prior centres), `maxIterations` (30), `outlierScale` (0.1).
 *
 * @category calibration
 * @since 0.2.0
 */
export interface FitOptions {
  readonly start?: Partial<Efficiencies> | undefined
  readonly maxIterations?: number | undefined
  readonly outlierScale?: number | undefined
  readonly priors?: Priors | "none" | undefined
  readonly noiseScale?: number | undefined
}

const objective = (
  ps: ReadonlyArray<Row>,
  theta: ReadonlyArray<number>,
  c: number,
  noise: number,
  prior: { centre: ReadonlyArray<number>; sd: ReadonlyArray<number> } | undefined
) => {
  let s = 0
  for (const p of ps) {
    const e = (evalRow(p, theta) - p.p.y) / p.p.y
    s += c * c * Math.log1p((e / c) ** 2)
  }
  s /= noise * noise
  if (prior !== undefined)
    for (let i = 0; i < theta.length; i++) s += ((theta[i]! - prior.centre[i]!) / prior.sd[i]!) ** 2
  return s
}

/**
 * Fit the efficiencies and overheads to measured rows (steps, layers, attention kernels,
 * collectives: see {@link CalibrationSample}) as the maximum a posteriori estimate under
 * physical priors.
 *
 * **When to use**: to calibrate {@link stepTime} on your hardware and serving stack; then check
 * the result with {@link identifiability} before trusting it on another model. Each row's
 * features are the derivatives of its modelled time with respect to the parameters (bytes over
 * bandwidth, FLOPs over peak, collective peers, layers, requests, one per step), so fitted
 * parameters carry to another model on the same hardware when the data separate them.
 *
 * Parameters per stack: efficiencies and the collective latency belong to the GPU and are
 * shared by every row; the overheads (per layer, per request, per step, eager) belong to the
 * stack that measured the row (its `source`: a serving stack's whole steps carry its CPU and
 * launch costs, a kernel profiler's rows only GPU time), so two models measured on one stack
 * pin that stack's overheads for a third, and one stack's overheads never absorb another's.
 *
 * Method: the roofline's `max` makes the model piecewise linear; the fit alternates between
 * picking each term's active side and a non-negative least-squares solve on relative errors
 * (divided by `noiseScale`), augmented with one row per parameter for its Gaussian prior
 * (`(theta - centre) / sd`, theta = 1/efficiency or the overhead), iteratively reweighted with
 * Cauchy weights `1 / (1 + (e / outlierScale)^2)` so that a few corrupt rows (the splitwise
 * TP2 batch-64 prefill rows report 64 prompts faster than 32) cannot drag the fit; the best
 * iterate by the penalised Cauchy loss is kept. Parameters the data cannot separate (one
 * model's per-step overhead and weight-read time are collinear) stay near their priors instead of
 * landing on 17% HBM efficiency with zero overheads. With `priors: "none"` parameters no row
 * depends on keep their `start` value. Fails when there are no rows or a measured time is not
 * positive.
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
  options?: FitOptions
): Result.Result<FitResult, CalibrationError> => {
  const invalid = checkSamples(samples)
  if (invalid !== undefined) return Result.fail(invalid)
  const priors = options?.priors ?? defaultPriors
  const layout = layoutOf(samples)
  const n = layout.size
  const lower = jointLower(layout)
  const prior = priors === "none" ? undefined : jointPrior(layout, priors)
  const noise = options?.noiseScale ?? 0.05
  const ps = samples.map((s) => rowOf(layout, s))
  const start = priors === "none" ? { ...options?.start } : { ...priorCentres(priors), ...options?.start }
  let theta = jointOf(layout, start)
  let best = theta
  const maxIt = options?.maxIterations ?? 30
  const outlier = options?.outlierScale ?? 0.1
  let bestObj = objective(ps, theta, outlier, noise, prior)
  let iterations = 0
  let weights = ps.map(() => 1)
  for (; iterations < maxIt; iterations++) {
    const rows = ps.map((p) => jointFeatures(p, theta, n))
    const norms = new Array<number>(n).fill(0)
    for (const f of rows) for (let i = 0; i < n; i++) norms[i]! += f[i]! ** 2
    const free = norms.map((v) => prior !== undefined || v > 0)
    // theta = lower + phi, phi >= 0; rows divided by y (relative error) and the noise scale
    const a: Array<Array<number>> = []
    const b: Array<number> = []
    ps.forEach((p, r) => {
      const f = rows[r]!
      let rhs = p.p.y
      for (let i = 0; i < n; i++) rhs -= f[i]! * (free[i] ? lower[i]! : theta[i]!)
      const w = Math.sqrt(weights[r]!) / p.p.y / noise
      a.push(f.map((v, i) => (free[i] ? v * w : 0)))
      b.push(rhs * w)
    })
    if (prior !== undefined)
      for (let i = 0; i < n; i++) {
        const row = new Array<number>(n).fill(0)
        row[i] = 1 / prior.sd[i]!
        a.push(row)
        b.push((prior.centre[i]! - lower[i]!) / prior.sd[i]!)
      }
    const scale = new Array<number>(n).fill(0)
    for (const row of a) for (let i = 0; i < n; i++) scale[i]! += row[i]! * row[i]!
    const s = scale.map((v) => (v > 0 ? Math.sqrt(v) : 1))
    const phi = nnls(
      a.map((row) => row.map((v, i) => v / s[i]!)),
      b,
      n
    )
    const next = theta.map((t, i) => (free[i] ? lower[i]! + phi[i]! / s[i]! : t))
    const obj = objective(ps, next, outlier, noise, prior)
    weights = ps.map((p) => {
      const e = Math.abs((evalRow(p, next) - p.p.y) / p.p.y)
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
  const stacks = stacksOf(layout, best)
  const first = layout.stacks[0]
  // only collectives: the fitted GPU parameters with the starting overheads
  const params =
    first === undefined ? fromTheta([...best.slice(0, NG), ...toTheta(start).slice(NG)]) : stacks[first]!
  return Result.succeed({
    params,
    stacks,
    rows: ps.length,
    iterations,
    mape: mape(samples, { params, stacks }).mape
  })
}
