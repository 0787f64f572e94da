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
export const sketchSummary = (sk: DDSketch, length: number): LatencySummary => {
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

/**
 * The indices `0..n-1` ordered by `vals[i]` ascending (numbers only, no NaN; stable): an LSD radix
 * sort in four 16-bit passes over the values' bits, made order-preserving (negative numbers have
 * every bit flipped, others the sign bit), skipping a pass whose digit is the same for all.
 */
export const sortByValue = (vals: Float64Array, n: number): Uint32Array => {
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
