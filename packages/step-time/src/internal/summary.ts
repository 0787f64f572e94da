/** Error summaries shared by the calibration modules. */
import type { CalibrationSample, MapeReport } from "../CalibrationTypes.js"

export const median = (xs: ReadonlyArray<number>): number => {
  if (xs.length === 0) return 0
  const s = [...xs].sort((a, b) => a - b)
  const n = s.length
  return n % 2 === 1 ? s[(n - 1) / 2]! : (s[n / 2 - 1]! + s[n / 2]!) / 2
}

export const mean = (xs: ReadonlyArray<number>): number =>
  xs.length > 0 ? xs.reduce((a, b) => a + b, 0) / xs.length : 0

export const summarize = (
  errors: ReadonlyArray<{ readonly s: CalibrationSample; readonly e: number }>
): MapeReport => {
  const groups = new Map<string, Array<number>>()
  for (const { s, e } of errors) {
    const key = `${s.group ?? s.gpu.name}/${s.phase ?? "step"}`
    const g = groups.get(key) ?? []
    g.push(e)
    groups.set(key, g)
  }
  const byGroup: Record<string, { mape: number; medianApe: number; rows: number }> = {}
  for (const [k, g] of groups) byGroup[k] = { mape: mean(g), medianApe: median(g), rows: g.length }
  const all = errors.map((x) => x.e)
  return { mape: mean(all), medianApe: median(all), rows: errors.length, byGroup }
}
