/**
 * Identifiability check of a calibration: which parameters the data pin down, which they cannot
 * separate, which only the prior sets, and which fitted values are physically implausible.
 *
 * @since 0.2.0
 */
import { EigenvalueDecomposition, inverse, Matrix } from "ml-matrix"
import type { CalibrationParameters, CalibrationSample } from "./Calibration.js"
import { jointFeatures, jointOf, jointPrior, layoutOf, nameAt, rowOf, stackAt } from "./internal/layout.js"
import { NE, type ParameterName } from "./internal/theta.js"
import { defaultPriors, type Priors } from "./Priors.js"

/**
 * A parameter as {@link identifiability} names it: the name of an {@link Efficiencies} field,
 * followed for an overhead by its stack in parentheses when the rows come from more than one
 * stack (`fixedOverheadSeconds (splitwise)`).
 *
 * @category calibration
 * @since 0.2.0
 */
export type ParameterLabel = ParameterName | `${ParameterName} (${string})`

/**
 * What {@link identifiability} found.
 *
 * - `conditionNumber`: of the data's information matrix over the parameters some row depends on,
 *   after scaling each to unit norm (1 = orthogonal effects; above ~1e4 some combination is
 *   nearly invisible to the data; `Infinity` = exactly collinear).
 * - `unseparable`: the parameters loading (|component| >= 0.3) on the directions of parameter
 *   space the data pin no better than +-50% (data information below 4, a standard error above
 *   0.5 in relative units), as one set (empty when there is none): the data cannot tell these
 *   apart (e.g. one model's per-layer and per-step overheads, both constant per step).
 * - `priorDominated`: parameters whose posterior spread is more than half their prior spread:
 *   their value comes from the prior, not the data.
 * - `unused`: parameters no row depends on.
 * - `implausible`: fitted values outside the prior's plausible range.
 * - `ok`: no implausible value and no unseparable set; `messages`: one line per finding.
 *
 * @category calibration
 * @since 0.2.0
 */
export interface IdentifiabilityReport {
  readonly conditionNumber: number
  readonly unseparable: ReadonlyArray<ReadonlyArray<ParameterLabel>>
  readonly priorDominated: ReadonlyArray<ParameterLabel>
  readonly unused: ReadonlyArray<ParameterLabel>
  readonly implausible: ReadonlyArray<{
    readonly parameter: ParameterName
    /** The stack of an overhead (absent for the GPU's efficiencies and collective latency). */
    readonly stack?: string | undefined
    readonly value: number
    readonly plausible: readonly [number, number]
  }>
  readonly ok: boolean
  readonly messages: ReadonlyArray<string>
}

/**
 * Check whether `samples` identify `params` (usually the output of {@link fit}: pass the
 * {@link FitResult} whole to check every stack's overheads, or one {@link Efficiencies} for all).
 *
 * **When to use**: before trusting a calibration on anything it was not fitted to. A low in-sample
 * MAPE says nothing when the parameters are not identified: a single-model profile fits
 * Llama-2-70B TP8 on H100 at 6.6% with 17% HBM efficiency and no overheads, and then predicts
 * BLOOM-176B 78% off. This check flags such fits: implausible values (17% HBM), and the
 * parameters the data cannot separate.
 *
 * Method: the Jacobian of every row's relative error with respect to each parameter, in relative
 * units (a parameter's change as a fraction of `max(value, prior centre)`), divided by
 * `noiseScale` (default 0.05), gives the data's Fisher information `D`; its eigenvectors with
 * eigenvalue below 4 are the combinations pinned no better than +-50%, and the parameters loading
 * on them (|component| >= 0.3) are reported as unseparable. Adding the prior's information `P`
 * gives the posterior covariance `(D + P)^-1`; a parameter whose posterior variance exceeds half
 * its prior variance is prior-dominated. The parameters are those of {@link fit}: the GPU's
 * efficiencies and collective latency once, and each stack's overheads (per row `source`),
 * labelled with the stack when there are several. Pure; never throws (no rows: everything is
 * unused).
 *
 * @example
 * ```ts
 * import { gpus, identifiability, models, stepTime } from "@loadledger/step-time"
 * const model = models["llama2-70b"]!, gpu = gpus["h100-80gb"]!
 * const samples = [1, 8, 32].map((b) => {
 *   const ranks = [{ decode: Array(b).fill(1000), extend: [] }]
 *   return { model, gpu, ranks, measuredSeconds: stepTime({ model, gpu }, ranks).stepSeconds }
 * })
 * const r = identifiability(samples, { memoryEfficiency: 0.17, fixedOverheadSeconds: 0 })
 * r.implausible.map((x) => x.parameter).join(",") // => "memoryEfficiency,fixedOverheadSeconds"
 * r.unseparable.some((set) => set.includes("fixedOverheadSeconds") && set.includes("perLayerOverheadSeconds")) // => true
 * r.ok // => false
 * ```
 *
 * @category calibration
 * @since 0.2.0
 */
export const identifiability = (
  samples: ReadonlyArray<CalibrationSample>,
  params: CalibrationParameters,
  options?: { readonly priors?: Priors | undefined; readonly noiseScale?: number | undefined }
): IdentifiabilityReport => {
  const priors = options?.priors ?? defaultPriors
  const noise = options?.noiseScale ?? 0.05
  const layout = layoutOf(samples)
  const n = layout.size
  const theta = "stacks" in params ? jointOf(layout, params.params, params.stacks) : jointOf(layout, params)
  const prior = jointPrior(layout, priors)
  const label = (i: number): ParameterLabel => {
    const stack = stackAt(layout, i)
    return stack === undefined || layout.stacks.length <= 1 ? nameAt(i) : `${nameAt(i)} (${stack})`
  }
  const unit = theta.map((t, i) => Math.max(Math.abs(t), prior.centre[i]!))
  const info = Array.from({ length: n }, () => new Array<number>(n).fill(0))
  for (const s of samples) {
    const r = rowOf(layout, s)
    const f = jointFeatures(r, theta, n).map((v, i) => (v * unit[i]!) / r.p.y / noise)
    for (let i = 0; i < n; i++) {
      if (f[i] === 0) continue
      for (let j = 0; j < n; j++) info[i]![j]! += f[i]! * f[j]!
    }
  }
  const all = theta.map((_, i) => i)
  const used = all.filter((i) => info[i]![i]! > 1e-12)
  const unused = all.filter((i) => !used.includes(i)).map(label)
  const unseparable: Array<Array<ParameterLabel>> = []
  let conditionNumber = 1
  if (used.length > 0) {
    const d = new Matrix(used.map((i) => used.map((j) => info[i]![j]!)))
    const eig = new EigenvalueDecomposition(d, { assumeSymmetric: true })
    const vals = eig.realEigenvalues
    const vecs = eig.eigenvectorMatrix
    // the weak directions span one subspace (a degenerate eigenspace has no preferred basis), so
    // every parameter loading on any of them belongs to one unseparable set
    const weak = vals.map((v, k) => (v < 4 ? k : -1)).filter((k) => k >= 0)
    const set = used.filter((_, r) => weak.some((k) => Math.abs(vecs.get(r, k)) >= 0.3)).map(label)
    if (set.length > 0) unseparable.push(set)
    const norms = used.map((i) => Math.sqrt(info[i]![i]!))
    const r = new Matrix(used.map((i, a) => used.map((j, b) => info[i]![j]! / norms[a]! / norms[b]!)))
    const rv = new EigenvalueDecomposition(r, { assumeSymmetric: true }).realEigenvalues
    const max = Math.max(...rv)
    const min = Math.min(...rv)
    conditionNumber = min <= max * 1e-14 ? Number.POSITIVE_INFINITY : max / min
  }
  // posterior = (D + P)^-1 in relative units; prior variance of theta_i / unit_i is (sd_i / unit_i)^2
  const priorVar = prior.sd.map((sd, i) => (sd / unit[i]!) ** 2)
  const post = inverse(
    new Matrix(info.map((row, i) => row.map((v, j) => v + (i === j ? 1 / priorVar[i]! : 0))))
  )
  const priorDominated = used.filter((i) => post.get(i, i) > 0.5 * priorVar[i]!).map(label)
  const implausible = all.flatMap((i) => {
    const parameter = nameAt(i)
    // theta holds 1 / efficiency for the three efficiencies, the overhead itself otherwise
    const value = i < NE ? 1 / theta[i]! : theta[i]!
    const range = priors[parameter].plausible
    const stack = stackAt(layout, i)
    return value < range[0] || value > range[1]
      ? [{ parameter, ...(stack === undefined ? {} : { stack }), value, plausible: range }]
      : []
  })
  const fmt = (v: number) => (Math.abs(v) < 1 && v !== 0 ? v.toPrecision(3) : String(v))
  const messages = [
    ...implausible.map(
      (x) =>
        `${x.stack === undefined || layout.stacks.length <= 1 ? x.parameter : `${x.parameter} (${x.stack})`} = ${fmt(x.value)} is outside the plausible ${fmt(x.plausible[0])}..${fmt(x.plausible[1])}`
    ),
    ...unseparable.map((set) => `the data cannot separate ${set.join(", ")}`),
    ...priorDominated.map((n) => `${n} is set by its prior, not by the data`),
    ...unused.map((n) => `no row depends on ${n}`)
  ]
  return {
    conditionNumber,
    unseparable,
    priorDominated,
    unused,
    implausible,
    ok: implausible.length === 0 && unseparable.length === 0,
    messages
  }
}
