/**
 * Non-negative least squares (Lawson and Hanson, "Solving Least Squares Problems", 1974, ch. 23):
 * minimise |A x - b|^2 subject to x >= 0. Small dense problems only (a handful of columns).
 */

const solveNormal = (
  a: ReadonlyArray<ReadonlyArray<number>>,
  b: ReadonlyArray<number>,
  cols: ReadonlyArray<number>
) => {
  // least squares on the selected columns via normal equations + Gaussian elimination
  const k = cols.length
  const m: Array<Array<number>> = Array.from({ length: k }, () => new Array<number>(k + 1).fill(0))
  for (let r = 0; r < a.length; r++) {
    const row = a[r]!
    for (let i = 0; i < k; i++) {
      const ai = row[cols[i]!]!
      if (ai === 0) continue
      const mi = m[i]!
      for (let j = 0; j < k; j++) mi[j]! += ai * row[cols[j]!]!
      mi[k]! += ai * b[r]!
    }
  }
  // a small ridge (relative to the diagonal) splits exactly collinear columns instead of blowing up
  let diag = 0
  for (let i = 0; i < k; i++) diag = Math.max(diag, m[i]![i]!)
  for (let i = 0; i < k; i++) m[i]![i]! += 1e-9 * diag
  for (let c = 0; c < k; c++) {
    let piv = c
    for (let r = c + 1; r < k; r++) if (Math.abs(m[r]![c]!) > Math.abs(m[piv]![c]!)) piv = r
    const tmp = m[c]!
    m[c] = m[piv]!
    m[piv] = tmp
    const d = m[c]![c]!
    if (d === 0) continue
    for (let r = 0; r < k; r++) {
      if (r === c) continue
      const f = m[r]![c]! / d
      if (f === 0) continue
      for (let j = c; j <= k; j++) m[r]![j]! -= f * m[c]![j]!
    }
  }
  return cols.map((_, i) => (m[i]![i]! === 0 ? 0 : m[i]![k]! / m[i]![i]!))
}

/** Solve min |A x - b| with x >= 0. `a` is row-major (rows x n). */
export const nnls = (
  a: ReadonlyArray<ReadonlyArray<number>>,
  b: ReadonlyArray<number>,
  n: number
): Array<number> => {
  const x = new Array<number>(n).fill(0)
  const passive = new Array<boolean>(n).fill(false)
  const gradient = () => {
    const w = new Array<number>(n).fill(0)
    for (let r = 0; r < a.length; r++) {
      const row = a[r]!
      let res = b[r]!
      for (let j = 0; j < n; j++) res -= row[j]! * x[j]!
      for (let j = 0; j < n; j++) w[j]! += row[j]! * res
    }
    return w
  }
  const tol = 1e-12
  for (let outer = 0; outer < 3 * n + 10; outer++) {
    const w = gradient()
    let best = -1
    let bestW = tol
    for (let j = 0; j < n; j++)
      if (!passive[j] && w[j]! > bestW) {
        bestW = w[j]!
        best = j
      }
    if (best < 0) break
    passive[best] = true
    for (let inner = 0; inner < 3 * n + 10; inner++) {
      const cols = [...Array(n).keys()].filter((j) => passive[j])
      const z = solveNormal(a, b, cols)
      if (z.every((v) => v > 0)) {
        for (let j = 0; j < n; j++) x[j] = 0
        cols.forEach((c, i) => {
          x[c] = z[i]!
        })
        break
      }
      let alpha = 1
      cols.forEach((c, i) => {
        if (z[i]! <= 0) {
          const denom = x[c]! - z[i]!
          const al = denom > 0 ? x[c]! / denom : 0
          if (al < alpha) alpha = al
        }
      })
      cols.forEach((c, i) => {
        x[c] = x[c]! + alpha * (z[i]! - x[c]!)
      })
      for (const c of cols)
        if (x[c]! <= tol) {
          x[c] = 0
          passive[c] = false
        }
    }
  }
  return x
}
