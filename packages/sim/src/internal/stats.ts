/**
 * Latency statistics of one run: a growable sample buffer (TTFT, E2E) and a run-length sample of
 * repeated values (ITL), both read once at the end as exact percentiles (numpy's linear method)
 * while they hold at most `EXACT_SAMPLES` values (runs, for ITL); past that they fold into a
 * DDSketch (`@datadog/sketches-js` 2.1.1, Masson, Rim & Lee, VLDB 2019) of relative accuracy
 * `SKETCH_RELATIVE_ACCURACY`, so a run's memory stops growing with its requests.
 */
import { DDSketch } from "@datadog/sketches-js"
import type { Percentiles } from "../Result.js"

/**
 * Samples kept exactly before a statistic folds into a sketch: 2^19 (4 MB of TTFT or E2E values;
 * 8 MB of ITL runs). Every trace this repository ships stays exact.
 */
export const EXACT_SAMPLES = 2 ** 19

/**
 * A sketched quantile is within this share of a sample value at that rank (DDSketch's guarantee:
 * the bucket of value v spans [v (1 - a), v (1 + a)]).
 */
export const SKETCH_RELATIVE_ACCURACY = 0.005

/** A latency statistic's read-out: its percentiles and its quantile function (`undefined` when empty). */
export interface LatencySummary {
  readonly percentiles: Percentiles
  readonly quantile: (q: number) => number | undefined
}

/** The read-out of a sketch (positive and zero values; negative values are kept too). */
const sketchSummary = (sk: DDSketch, length: number): LatencySummary => {
  const n = sk.count
  const quantile = (q: number): number | undefined => (n === 0 ? undefined : sk.getValueAtQuantile(q))
  return {
    percentiles: {
      count: length,
      p50: quantile(0.5),
      p90: quantile(0.9),
      p99: quantile(0.99),
      mean: n === 0 ? undefined : sk.sum / n,
      relativeError: SKETCH_RELATIVE_ACCURACY
    },
    quantile
  }
}

/** A growable Float64 sample buffer. */
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
  /**
   * The values ascending, as `Float64Array.prototype.sort` orders them (-0 before +0): by the radix
   * sort of `sortByValue` (the typed-array sort was 5% of a replay of the Azure trace), or by that
   * sort when a NaN is present (it puts NaN last).
   */
  sorted(): Float64Array {
    const n = this.length
    const vals = this.buf.subarray(0, n)
    for (let i = 0; i < n; i++) if (Number.isNaN(vals[i]!)) return vals.slice().sort()
    const order = sortByValue(vals, n)
    const out = new Float64Array(n)
    for (let i = 0; i < n; i++) out[i] = vals[order[i]!]!
    return out
  }

  /** The values pushed, in push order (a view: valid until the next push). */
  values(): Float64Array {
    return this.buf.subarray(0, this.length)
  }
}

/**
 * One latency per request (TTFT or E2E): exact samples up to `exactLimit`, then a DDSketch holding
 * them all (the exact buffer is dropped). Exact percentiles are numpy's linear method; sketched
 * ones carry `relativeError`.
 */
export class LatencySamples {
  private exact: Samples | undefined = new Samples()
  private sketch: DDSketch | undefined = undefined

  constructor(private readonly exactLimit = EXACT_SAMPLES) {}

  get length(): number {
    return this.exact?.length ?? this.sketch!.count
  }

  push(x: number): void {
    const e = this.exact
    if (e !== undefined) {
      if (e.length < this.exactLimit) {
        e.push(x)
        return
      }
      const sk = new DDSketch({ relativeAccuracy: SKETCH_RELATIVE_ACCURACY })
      const vs = e.values()
      for (let i = 0; i < vs.length; i++) sk.accept(vs[i]!)
      this.sketch = sk
      this.exact = undefined
    }
    this.sketch!.accept(x)
  }

  summary(): LatencySummary {
    if (this.exact === undefined) return sketchSummary(this.sketch!, this.sketch!.count)
    const sorted = this.exact.sorted()
    return { percentiles: percentiles(sorted), quantile: (q) => quantile(sorted, q) }
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

/**
 * The indices `0..n-1` ordered by `vals[i]` ascending (numbers only, no NaN; stable): an LSD radix
 * sort in four 16-bit passes over the values' bits, made order-preserving (negative numbers have
 * every bit flipped, others the sign bit), skipping a pass whose digit is the same for all.
 */
const sortByValue = (vals: Float64Array, n: number): Uint32Array => {
  const words = new Uint32Array(vals.buffer, vals.byteOffset, vals.length * 2)
  // little- or big-endian: which 32-bit word of a double holds the sign
  const hiWord = new Uint32Array(new Float64Array([-0]).buffer)[1] === 0x80000000 ? 1 : 0
  const hi = new Uint32Array(n)
  const lo = new Uint32Array(n)
  for (let i = 0; i < n; i++) {
    const h = words[2 * i + hiWord]!
    const l = words[2 * i + 1 - hiWord]!
    if (h & 0x80000000) {
      hi[i] = ~h >>> 0
      lo[i] = ~l >>> 0
    } else {
      hi[i] = (h | 0x80000000) >>> 0
      lo[i] = l
    }
  }
  let order = new Uint32Array(n)
  for (let i = 0; i < n; i++) order[i] = i
  let next = new Uint32Array(n)
  const count = new Uint32Array(65536)
  for (let pass = 0; pass < 4; pass++) {
    const src = pass < 2 ? lo : hi
    const shift = pass % 2 === 0 ? 0 : 16
    count.fill(0)
    for (let i = 0; i < n; i++) count[(src[i]! >>> shift) & 0xffff]!++
    if (n === 0 || count[(src[0]! >>> shift) & 0xffff] === n) continue
    let acc = 0
    for (let b = 0; b < 65536; b++) {
      const c = count[b]!
      count[b] = acc
      acc += c
    }
    for (let i = 0; i < n; i++) {
      const j = order[i]!
      next[count[(src[j]! >>> shift) & 0xffff]!++] = j
    }
    const t = order
    order = next
    next = t
  }
  return order
}
