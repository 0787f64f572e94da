/**
 * A run-length sample of repeated values (ITL: every decode of a step shares the step's gap), read
 * once at the end as exact percentiles while it holds at most `EXACT_SAMPLES` runs, then folded
 * into a DDSketch; split from `stats.ts` (issue 29: files <= 300 lines), which holds the plain
 * sample buffers, the percentile readers and the sketch summary this file uses.
 */
import { DDSketch } from "@datadog/sketches-js"
import type { Percentiles } from "../Result.js"
import { EXACT_SAMPLES, SKETCH_RELATIVE_ACCURACY, sketchSummary, sortByValue } from "./stats.js"

/** The distinct values of a counted sample, ascending, with cumulative counts and the exact sum. */
interface Table {
  readonly keys: Float64Array
  readonly cum: Float64Array
  readonly sum: number
}

/**
 * Samples with many repeats (ITL: every decode of a step shares the step's gap), kept as runs of
 * (value, count) in typed arrays. Percentiles are those of the expanded sample; the mean sums
 * `value x count` over the distinct values in ascending order. The table is built once, by an LSD
 * radix sort of the runs on their IEEE-754 bits (a run count in the hundreds of thousands made a
 * `Map` of values and a comparison sort a third of a simulation's time). Past `exactLimit` runs the
 * runs fold into a DDSketch (weighted by their counts) and later samples go there: percentiles then
 * carry `relativeError` (NaN samples are counted in `length` and left out of the sketch).
 */
export class CountedSamples {
  private vals = new Float64Array(1024)
  private cnts = new Float64Array(1024)
  private runs = 0
  private nanCount = 0
  private cached: Table | undefined = undefined
  private sketch: DDSketch | undefined = undefined
  length = 0

  constructor(private readonly exactLimit = EXACT_SAMPLES) {}

  push(x: number): void {
    this.pushMany(x, 1)
  }

  /** `count` (>= 1) samples of value `x`. */
  pushMany(x: number, count: number): void {
    this.length += count
    this.cached = undefined
    if (Number.isNaN(x)) {
      this.nanCount += count
      return
    }
    if (this.sketch !== undefined) {
      this.sketch.accept(x, count)
      return
    }
    const runs = this.runs
    if (runs > 0 && this.vals[runs - 1] === x) {
      this.cnts[runs - 1]! += count
      return
    }
    if (runs >= this.exactLimit) {
      const sk = new DDSketch({ relativeAccuracy: SKETCH_RELATIVE_ACCURACY })
      for (let i = 0; i < runs; i++) sk.accept(this.vals[i]!, this.cnts[i]!)
      sk.accept(x, count)
      this.sketch = sk
      this.vals = new Float64Array(0)
      this.cnts = new Float64Array(0)
      this.runs = 0
      return
    }
    if (runs === this.vals.length) {
      const v = new Float64Array(runs * 2)
      v.set(this.vals)
      this.vals = v
      const c = new Float64Array(runs * 2)
      c.set(this.cnts)
      this.cnts = c
    }
    // -0 and +0 are one value (as a Map key would make them)
    this.vals[runs] = x === 0 ? 0 : x
    this.cnts[runs] = count
    this.runs = runs + 1
  }

  percentiles(): Percentiles {
    if (this.sketch !== undefined) return sketchSummary(this.sketch, this.length).percentiles
    const q = this.quantiles()
    return {
      count: this.length,
      p50: q(0.5),
      p90: q(0.9),
      p99: q(0.99),
      mean: this.length === 0 ? undefined : this.table().sum / this.length
    }
  }

  /** The quantile function of the expanded sample (for CDFs); `undefined` when empty. */
  quantiles(): (p: number) => number | undefined {
    if (this.sketch !== undefined) return sketchSummary(this.sketch, this.length).quantile
    const { keys, cum } = this.table()
    const length = this.length
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
    return (p) => {
      if (length === 0) return undefined
      const pos = (length - 1) * p
      const lo = Math.floor(pos)
      const a = at(lo)
      const b = at(Math.min(length - 1, lo + 1))
      return a + (b - a) * (pos - lo)
    }
  }

  private table(): Table {
    if (this.cached) return this.cached
    const n = this.runs
    const order = sortByValue(this.vals, n)
    const size = n + (this.nanCount > 0 ? 1 : 0)
    const keys = new Float64Array(size)
    const cum = new Float64Array(size)
    let d = -1
    for (let i = 0; i < n; i++) {
      const j = order[i]!
      const v = this.vals[j]!
      if (d >= 0 && keys[d] === v) cum[d]! += this.cnts[j]!
      else {
        d++
        keys[d] = v
        cum[d] = this.cnts[j]!
      }
    }
    // NaN sorts after every number (as in a sorted Float64Array)
    if (this.nanCount > 0) {
      d++
      keys[d] = Number.NaN
      cum[d] = this.nanCount
    }
    const distinct = d + 1
    let acc = 0
    let sum = 0
    for (let i = 0; i < distinct; i++) {
      const c = cum[i]!
      acc += c
      sum += keys[i]! * c
      cum[i] = acc
    }
    this.cached = { keys: keys.subarray(0, distinct), cum: cum.subarray(0, distinct), sum }
    return this.cached
  }
}
