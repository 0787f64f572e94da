import type { Percentiles } from "../Result.js"

/** A growable Float64 sample buffer (ITL has millions of samples). */
export class Samples {
  private buf = new Float64Array(1024)
  length = 0
  push(x: number): void {
    if (this.length === this.buf.length) {
      const b = new Float64Array(this.buf.length * 2)
      b.set(this.buf)
      this.buf = b
    }
    this.buf[this.length++] = x
  }
  sorted(): Float64Array {
    return this.buf.slice(0, this.length).sort()
  }
}

/** Linear interpolation between order statistics (numpy's default). */
export const quantile = (sorted: Float64Array, q: number): number | undefined => {
  const n = sorted.length
  if (n === 0) return undefined
  const pos = (n - 1) * q
  const lo = Math.floor(pos)
  const hi = Math.min(n - 1, lo + 1)
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo)
}

export const percentiles = (sorted: Float64Array): Percentiles => {
  let sum = 0
  for (let i = 0; i < sorted.length; i++) sum += sorted[i]!
  return {
    count: sorted.length,
    p50: quantile(sorted, 0.5),
    p90: quantile(sorted, 0.9),
    p99: quantile(sorted, 0.99),
    mean: sorted.length === 0 ? undefined : sum / sorted.length
  }
}
