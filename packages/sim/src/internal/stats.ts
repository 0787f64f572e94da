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

/**
 * Samples with many repeats (ITL: every decode of a step shares the step's gap), kept as
 * value -> count. Percentiles are those of the expanded sample.
 */
export class CountedSamples {
  private readonly counts = new Map<number, number>()
  // run-length front: the decodes of one step mostly share one gap
  private runValue = Number.NaN
  private runCount = 0
  length = 0
  push(x: number): void {
    this.length++
    if (x === this.runValue) {
      this.runCount++
      return
    }
    this.flush()
    this.runValue = x
    this.runCount = 1
  }
  private flush(): void {
    if (this.runCount > 0)
      this.counts.set(this.runValue, (this.counts.get(this.runValue) ?? 0) + this.runCount)
    this.runCount = 0
    this.runValue = Number.NaN
  }
  percentiles(): Percentiles {
    const { q, sum } = this.table()
    return {
      count: this.length,
      p50: q(0.5),
      p90: q(0.9),
      p99: q(0.99),
      mean: this.length === 0 ? undefined : sum / this.length
    }
  }
  /** The quantile function of the expanded sample (for CDFs); `undefined` when empty. */
  quantiles(): (p: number) => number | undefined {
    return this.table().q
  }
  private table(): { q: (p: number) => number | undefined; sum: number } {
    this.flush()
    const keys = Float64Array.from(this.counts.keys()).sort()
    const cum = new Float64Array(keys.length)
    let acc = 0
    let sum = 0
    for (let i = 0; i < keys.length; i++) {
      const c = this.counts.get(keys[i]!)!
      acc += c
      sum += keys[i]! * c
      cum[i] = acc
    }
    // the k-th smallest value (0-based) of the expanded sample
    const at = (k: number): number => {
      let lo = 0
      let hi = keys.length - 1
      while (lo < hi) {
        const mid = (lo + hi) >> 1
        if (cum[mid]! > k) hi = mid
        else lo = mid + 1
      }
      return keys[lo]!
    }
    const q = (p: number): number | undefined => {
      if (this.length === 0) return undefined
      const pos = (this.length - 1) * p
      const lo = Math.floor(pos)
      const a = at(lo)
      const b = at(Math.min(this.length - 1, lo + 1))
      return a + (b - a) * (pos - lo)
    }
    return { q, sum }
  }
}
