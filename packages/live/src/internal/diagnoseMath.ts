/**
 * The small numerics of the diagnosis (`Diagnose.ts`): mean, median, a relative deviation and the
 * 3x3 least-squares solve of the load fit. Pure.
 */

/** The mean (0 for none). */
export const mean = (xs: ReadonlyArray<number>): number =>
  xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)

/** The median (`undefined` for none: an unknown, never a 0). */
export const medianOf = (xs: ReadonlyArray<number>): number | undefined => {
  if (xs.length === 0) return undefined
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

/** The median, 0 for none (where an empty set means "no deviation": the verdict's own figures). */
export const median = (xs: ReadonlyArray<number>): number => medianOf(xs) ?? 0

/** `x / m - 1`, 0 when `m` is not positive. */
export const rel = (x: number, m: number): number => (m > 0 ? x / m - 1 : 0)

/** Solve the 3x3 normal equations (ridge 1e-9); zeros when singular. */
export const solve3 = (a: Array<Array<number>>, b: Array<number>): [number, number, number] => {
  for (let i = 0; i < 3; i++) a[i]![i]! += 1e-9
  const m = a.map((row, i) => [...row, b[i]!])
  for (let c = 0; c < 3; c++) {
    let p = c
    for (let r = c + 1; r < 3; r++) if (Math.abs(m[r]![c]!) > Math.abs(m[p]![c]!)) p = r
    ;[m[c], m[p]] = [m[p]!, m[c]!]
    if (Math.abs(m[c]![c]!) < 1e-12) return [0, 0, 0]
    for (let r = 0; r < 3; r++)
      if (r !== c) {
        const f = m[r]![c]! / m[c]![c]!
        for (let k = c; k < 4; k++) m[r]![k]! -= f * m[c]![k]!
      }
  }
  return [m[0]![3]! / m[0]![0]!, m[1]![3]! / m[1]![1]!, m[2]![3]! / m[2]![2]!]
}
