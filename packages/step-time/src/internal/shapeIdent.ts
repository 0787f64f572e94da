/**
 * Intervals and identification of a shape-aware fit of one GPU: the Laplace approximation at the
 * MAP (posterior covariance `(D + P)^-1` of the data's information `D` from the rows' Jacobian of
 * relative errors, divided by the fit's robust residual scale, and the prior's `P`), or seeded
 * bootstrap percentiles over rows; the parameters whose combinations the data pin no better than
 * +-50% (eigenvalues of `D` below 4 in relative units) form unseparable sets.
 */
import { EigenvalueDecomposition, inverse, Matrix } from "ml-matrix"
import { isInverse, SG, type ShapeParameterName, shapeParameterNames } from "./shapeTheta.js"

export type ShapeStatus = "identified" | "weak" | "prior" | "unused" | "not identified"

export interface ParameterEstimate {
  readonly name: ShapeParameterName
  readonly stack?: string | undefined
  readonly label: string
  readonly value: number
  readonly low: number
  readonly high: number
  readonly status: ShapeStatus
  readonly plausible: readonly [number, number]
}

export interface IdentInput {
  readonly theta: ReadonlyArray<number>
  readonly lower: ReadonlyArray<number>
  readonly prior: { readonly centre: ReadonlyArray<number>; readonly sd: ReadonlyArray<number> }
  /** Per row: features (d seconds / d theta) and the measured seconds. */
  readonly jacobian: ReadonlyArray<{
    readonly f: ReadonlyArray<number>
    readonly y: number
    readonly w: number
  }>
  readonly residualScale: number
  readonly stacks: ReadonlyArray<string>
  readonly plausible: (name: ShapeParameterName) => readonly [number, number]
  /** Bootstrap thetas (percentile intervals replace the covariance ones when given). */
  readonly bootstrap?: ReadonlyArray<ReadonlyArray<number>> | undefined
}

export const nameOf = (i: number): ShapeParameterName =>
  shapeParameterNames[i < SG ? i : SG + ((i - SG) % (shapeParameterNames.length - SG))]!
export const stackOfIndex = (stacks: ReadonlyArray<string>, i: number): string | undefined =>
  i < SG ? undefined : stacks[Math.floor((i - SG) / (shapeParameterNames.length - SG))]

const quantile = (xs: ReadonlyArray<number>, q: number) => {
  const s = [...xs].sort((a, b) => a - b)
  const k = (s.length - 1) * q
  const lo = Math.floor(k)
  return s[lo]! + (s[Math.min(lo + 1, s.length - 1)]! - s[lo]!) * (k - lo)
}

export const identify = (
  input: IdentInput
): { readonly estimates: Array<ParameterEstimate>; readonly unseparable: Array<Array<string>> } => {
  const { theta, prior } = input
  const n = theta.length
  const label = (i: number) => {
    const st = stackOfIndex(input.stacks, i)
    return st === undefined ? nameOf(i) : `${nameOf(i)} (${st})`
  }
  const unit = theta.map((t, i) => Math.max(Math.abs(t), prior.centre[i]!))
  const sigma = Math.max(input.residualScale, 0.01)
  const info = Array.from({ length: n }, () => new Array<number>(n).fill(0))
  for (const { f, y, w } of input.jacobian) {
    const g = f.map((v, i) => (v * unit[i]!) / y / sigma)
    for (let i = 0; i < n; i++) {
      if (g[i] === 0) continue
      for (let j = 0; j < n; j++) info[i]![j]! += w * g[i]! * g[j]!
    }
  }
  const priorVar = prior.sd.map((sd, i) => (sd / unit[i]!) ** 2)
  const post = inverse(
    new Matrix(info.map((row, i) => row.map((v, j) => v + (i === j ? 1 / priorVar[i]! : 0))))
  )
  const used = theta.map((_, i) => i).filter((i) => info[i]![i]! > 1e-12)
  const inSet = new Set<number>()
  const unseparable: Array<Array<string>> = []
  if (used.length > 0) {
    const eig = new EigenvalueDecomposition(new Matrix(used.map((i) => used.map((j) => info[i]![j]!))), {
      assumeSymmetric: true
    })
    const vecs = eig.eigenvectorMatrix
    eig.realEigenvalues.forEach((v, k) => {
      if (v >= 4) return
      const members = used.filter((_, r) => Math.abs(vecs.get(r, k)) >= 0.3)
      if (members.length < 2) return
      for (const m of members) inSet.add(m)
      unseparable.push(members.map(label))
    })
  }
  const toValue = (i: number, t: number) => (isInverse(i) ? 1 / t : t)
  const estimates = theta.map((t, i): ParameterEstimate => {
    const name = nameOf(i)
    let lo: number
    let hi: number
    if (input.bootstrap !== undefined && input.bootstrap.length >= 2) {
      const xs = input.bootstrap.map((b) => b[i]!)
      lo = quantile(xs, 0.025)
      hi = quantile(xs, 0.975)
    } else {
      const sd = Math.sqrt(Math.max(post.get(i, i), 0)) * unit[i]!
      lo = Math.max(input.lower[i]!, t - 1.96 * sd)
      hi = t + 1.96 * sd
    }
    const ratio = Math.sqrt(Math.max(post.get(i, i), 0) / priorVar[i]!)
    const status: ShapeStatus = !used.includes(i)
      ? "unused"
      : inSet.has(i)
        ? "not identified"
        : ratio <= 0.5
          ? "identified"
          : ratio <= 0.8
            ? "weak"
            : "prior"
    const [low, high] = isInverse(i) ? [toValue(i, hi), toValue(i, lo)] : [lo, hi]
    const stack = stackOfIndex(input.stacks, i)
    return {
      name,
      ...(stack === undefined ? {} : { stack }),
      label: label(i),
      value: toValue(i, t),
      low,
      high,
      status,
      plausible: input.plausible(name)
    }
  })
  return { estimates, unseparable }
}
