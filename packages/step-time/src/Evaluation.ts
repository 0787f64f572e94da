/**
 * Held-out evaluation of a calibration: K-fold over rows or configurations, leave-one-model-out
 * (scored with the error breakdowns of `ErrorBreakdown.ts`), and the thinning that keeps it fast.
 *
 * @since 0.2.0
 */
import * as Result from "effect/Result"
import type { CalibrationError, CalibrationSample, MapeReport } from "./Calibration.js"
import { mape, sampleModel } from "./Calibration.js"
import type { Efficiencies } from "./Efficiencies.js"
import type { ErrorBreakdown, ErrorCell } from "./ErrorBreakdown.js"
import { belowPhysicalFloor } from "./Feasibility.js"
import { type FitOptions, fit } from "./Fit.js"
import { breakdownOf, cell, signed } from "./internal/breakdown.js"
import { stackOf } from "./internal/layout.js"
import { summarize } from "./internal/summary.js"
import { defaultPriors, priorCentres } from "./Priors.js"

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
  options?: FitOptions & { readonly holdOut?: "row" | "configuration" | undefined }
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
    const r = fit(train, options)
    if (Result.isFailure(r)) return Result.fail(r.failure)
    for (const s of test) scored.push({ s, p: r.success.params })
  }
  // score each held-out row with its own fold's parameters
  return Result.succeed(summarize(scored.map(({ s, p }) => ({ s, e: mape([s], p).mape }))))
}

/**
 * One held-out model of {@link leaveOneModelOut}: its errors when every row of it was left out
 * of the fit, and per GPU the parameters used (`stacks`: per measurement stack of the held-out
 * rows), whether any other model's rows calibrated that GPU (`priorOnly`: none did; the
 * efficiencies rest on the priors and any collective rows), and the stacks of held-out rows that
 * no other model's rows on that GPU measured (`unfittedStacks`: their overheads are the prior
 * centres).
 *
 * @category calibration
 * @since 0.2.0
 */
export interface HeldOutModel {
  readonly model: string
  readonly errors: ErrorBreakdown
  /** The held-out model's rows measured below their physical floor: neither fitted nor scored. */
  readonly excludedRows: number
  readonly byGpu: Record<
    string,
    ErrorCell & {
      readonly priorOnly: boolean
      readonly unfittedStacks: ReadonlyArray<string>
      readonly trainRows: number
      readonly stacks: Readonly<Record<string, Efficiencies>>
    }
  >
}

/**
 * Leave-one-model-out cross-validation: for each model, fit each GPU's parameters on every other
 * model's rows of that GPU (and the model-independent collective rows), then score the held-out
 * model's rows, each with the overheads of the stack that measured it (its `source`) as the
 * other models' rows of that stack fitted them: nothing is fitted on the held-out model's rows.
 * Rows measured below their {@link physicalFloorSeconds} (impossible: see
 * {@link belowPhysicalFloor}) are dropped from every fit and every score, for every model alike,
 * and counted in `excludedRows`.
 *
 * **When to use**: to know whether a calibration transfers to a model it never saw, which
 * row-wise or configuration-wise folds of one model cannot tell (issue 17). Fits use
 * {@link fit}'s options (priors by default). A GPU with no rows left falls back to the prior
 * centres; a stack that no other model's rows on that GPU measured gets the fitted efficiencies
 * with the prior's overheads (listed in `unfittedStacks`). Fails only when {@link fit} fails.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { gpus, leaveOneModelOut, models, stepTime } from "@loadledger/step-time"
 * const gpu = gpus["h100-80gb"]!
 * // one stack measured both models: 80% of HBM, 5 ms per step, 0.2 ms per request per step
 * const truth = { memoryEfficiency: 0.8, fixedOverheadSeconds: 0.005, perRequestOverheadSeconds: 2e-4 }
 * const rows = ["llama2-70b", "bloom-176b"].flatMap((name) => [1, 4, 16, 64].map((b) => {
 *   const model = models[name]!, ranks = [{ decode: Array(b).fill(1000), extend: [] }]
 *   const measuredSeconds = stepTime({ model, gpu, params: truth }, ranks).stepSeconds
 *   return { model, gpu, ranks, phase: "decode" as const, source: "my-stack", measuredSeconds }
 * }))
 * const r = Result.getOrThrow(leaveOneModelOut(rows))
 * r.map((m) => m.model).join(",") // => "llama2-70b,bloom-176b"
 * r[0]!.errors.overall.mape < 10 // => true
 * ```
 *
 * @category calibration
 * @since 0.2.0
 */
export const leaveOneModelOut = (
  allSamples: ReadonlyArray<CalibrationSample>,
  options?: FitOptions
): Result.Result<ReadonlyArray<HeldOutModel>, CalibrationError> => {
  const { kept: samples, below } = belowPhysicalFloor(allSamples)
  const names = [...new Set(samples.map(sampleModel).filter((m): m is string => m !== undefined))]
  const out: Array<HeldOutModel> = []
  const prior = priorCentres(
    options?.priors === "none" || options?.priors === undefined ? defaultPriors : options.priors
  )
  for (const name of names) {
    const test = samples.filter((s) => sampleModel(s) === name)
    const gpuNames = [...new Set(test.map((s) => s.gpu.name))]
    const scored: Array<{ s: CalibrationSample; e: number }> = []
    const byGpu: Record<string, HeldOutModel["byGpu"][string]> = {}
    for (const g of gpuNames) {
      const train = samples.filter((s) => s.gpu.name === g && sampleModel(s) !== name)
      const rows = test.filter((s) => s.gpu.name === g)
      let fitted: { readonly params: Efficiencies; readonly stacks: Readonly<Record<string, Efficiencies>> } =
        {
          params: prior,
          stacks: {}
        }
      if (train.length > 0) {
        const r = fit(train, options)
        if (Result.isFailure(r)) return Result.fail(r.failure)
        fitted = r.success
      }
      // a stack no training row measured: the fitted GPU parameters with the prior's overheads
      const gpuOnly: Efficiencies = {
        ...prior,
        memoryEfficiency: fitted.params.memoryEfficiency,
        computeEfficiency: fitted.params.computeEfficiency,
        linkEfficiency: fitted.params.linkEfficiency,
        collectiveLatencySeconds: fitted.params.collectiveLatencySeconds
      }
      const used = [...new Set(rows.map(stackOf).filter((k): k is string => k !== undefined))]
      const unfittedStacks = used.filter((k) => !Object.hasOwn(fitted.stacks, k))
      const stacks = Object.fromEntries(
        used.map((k) => [k, Object.hasOwn(fitted.stacks, k) ? fitted.stacks[k]! : gpuOnly])
      )
      const scoredHere = rows.map((s) => ({ s, e: signed(s, { params: gpuOnly, stacks }) }))
      scored.push(...scoredHere)
      byGpu[g] = {
        ...cell(scoredHere.map((r) => r.e)),
        priorOnly: !train.some((s) => sampleModel(s) !== undefined),
        unfittedStacks,
        trainRows: train.length,
        stacks
      }
    }
    out.push({
      model: name,
      errors: breakdownOf(scored),
      excludedRows: below.filter((s) => sampleModel(s) === name).length,
      byGpu
    })
  }
  return Result.succeed(out)
}

/**
 * Thin a calibration set to a geometric grid, so that every model and GPU weighs alike in a
 * joint fit and leave-one-model-out stays fast: step rows keep the first row of each
 * `configuration` (repeats dropped), layer and attention rows those whose `batchSize` (tokens or
 * requests) is a power of two, collectives the first row of each power-of-two size bucket per
 * (kind, GPUs, GPU). Order is kept. The README's leave-one-model-out table uses it
 * (`loadledger calibrate --thin`).
 *
 * @example
 * ```ts
 * import { gpus, models, thinSamples } from "@loadledger/step-time"
 * const model = models["llama2-70b"]!, gpu = gpus["a100-80gb"]!
 * const rows = [1, 2, 3, 4, 8].map((tokens) => ({ kind: "layer" as const, model, gpu, tokens, batchSize: tokens, measuredSeconds: 1 }))
 * thinSamples(rows).map((s) => s.batchSize).join(",") // => "1,2,4,8"
 * ```
 *
 * @category calibration
 * @since 0.2.0
 */
export const thinSamples = <S extends CalibrationSample>(samples: ReadonlyArray<S>): Array<S> => {
  const seen = new Set<string>()
  const pow2 = (n: number) => n >= 1 && Number.isInteger(Math.log2(n))
  return samples.filter((s) => {
    if (s.kind === "all-reduce" || s.kind === "send-recv") {
      const key = `${s.kind} ${s.gpus} ${s.gpu.name} ${Math.floor(Math.log2(Math.max(1, s.bytes)))}`
      if (seen.has(key)) return false
      seen.add(key)
      return true
    }
    if (s.kind === "layer" || s.kind === "attention") return pow2(s.batchSize ?? 1)
    if (s.configuration === undefined) return true
    if (seen.has(s.configuration)) return false
    seen.add(s.configuration)
    return true
  })
}
