/**
 * Maximum a posteriori fit of a piecewise-linear, homogeneous model (f(c theta) = c f(theta)) to
 * relative errors: alternate between linearising at the current theta (each row's features are
 * its derivatives) and a bounded least-squares solve (theta = lower + phi, phi >= 0, solved by
 * `nnls`) augmented with one Gaussian prior row per parameter, iteratively reweighted with Cauchy
 * weights so a few corrupt rows cannot drag the fit; the best iterate by the penalised Cauchy loss
 * is kept. The generic form of `Fit.ts`'s loop, shared by the shape-aware fit.
 */
import { nnls } from "./nnls.js"

export interface MapProblem<R> {
  readonly rows: ReadonlyArray<R>
  readonly y: (r: R) => number
  readonly value: (r: R, theta: ReadonlyArray<number>) => number
  /** d value / d theta at theta, scattered over the whole vector. */
  readonly features: (r: R, theta: ReadonlyArray<number>) => ReadonlyArray<number>
  readonly lower: ReadonlyArray<number>
  readonly prior: { readonly centre: ReadonlyArray<number>; readonly sd: ReadonlyArray<number> }
  readonly start: ReadonlyArray<number>
  readonly noise: number
  readonly outlier: number
  readonly maxIterations: number
  /** Per-row multiplicity (bootstrap resampling); default 1. */
  readonly counts?: ReadonlyArray<number> | undefined
}

export const mapObjective = <R>(p: MapProblem<R>, theta: ReadonlyArray<number>): number => {
  const c = p.outlier
  let s = 0
  p.rows.forEach((r, k) => {
    const e = (p.value(r, theta) - p.y(r)) / p.y(r)
    s += (p.counts?.[k] ?? 1) * c * c * Math.log1p((e / c) ** 2)
  })
  s /= p.noise * p.noise
  for (let i = 0; i < theta.length; i++) s += ((theta[i]! - p.prior.centre[i]!) / p.prior.sd[i]!) ** 2
  return s
}

export const mapFit = <R>(
  p: MapProblem<R>
): { readonly theta: Array<number>; readonly iterations: number } => {
  const n = p.start.length
  let theta = [...p.start]
  let best = theta
  let bestObj = mapObjective(p, theta)
  let weights = p.rows.map((_, k) => p.counts?.[k] ?? 1)
  let iterations = 0
  for (; iterations < p.maxIterations; iterations++) {
    const a: Array<Array<number>> = []
    const b: Array<number> = []
    p.rows.forEach((r, k) => {
      if (weights[k] === 0) return
      const f = p.features(r, theta)
      const y = p.y(r)
      let rhs = y
      for (let i = 0; i < n; i++) rhs -= f[i]! * p.lower[i]!
      const w = Math.sqrt(weights[k]!) / y / p.noise
      a.push(f.map((v) => v * w))
      b.push(rhs * w)
    })
    for (let i = 0; i < n; i++) {
      const row = new Array<number>(n).fill(0)
      row[i] = 1 / p.prior.sd[i]!
      a.push(row)
      b.push((p.prior.centre[i]! - p.lower[i]!) / p.prior.sd[i]!)
    }
    const scale = new Array<number>(n).fill(0)
    for (const row of a) for (let i = 0; i < n; i++) scale[i]! += row[i]! * row[i]!
    const s = scale.map((v) => (v > 0 ? Math.sqrt(v) : 1))
    const phi = nnls(
      a.map((row) => row.map((v, i) => v / s[i]!)),
      b,
      n
    )
    const next = phi.map((v, i) => p.lower[i]! + v / s[i]!)
    const obj = mapObjective(p, next)
    weights = p.rows.map((r, k) => {
      const e = Math.abs((p.value(r, next) - p.y(r)) / p.y(r))
      return (p.counts?.[k] ?? 1) / (1 + (e / p.outlier) ** 2)
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
  return { theta: best, iterations }
}
