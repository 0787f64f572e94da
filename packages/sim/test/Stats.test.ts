import { fc, test } from "@fast-check/vitest"
import { describe, expect, it } from "vitest"
import { CountedSamples } from "../src/internal/countedSamples.js"
import { LatencySamples, quantile, Samples, SKETCH_RELATIVE_ACCURACY } from "../src/internal/stats.js"

/** The reference: the expanded sample, sorted; the mean sums value x count over distinct values ascending. */
const reference = (pushes: ReadonlyArray<readonly [number, number]>) => {
  const expanded = Float64Array.from(pushes.flatMap(([x, c]) => Array<number>(c).fill(x))).sort()
  const counts = new Map<number, number>()
  for (const [x, c] of pushes) counts.set(x, (counts.get(x) ?? 0) + c)
  const keys = Float64Array.from(counts.keys()).sort()
  let sum = 0
  for (const k of keys) sum += k * counts.get(k)!
  return { expanded, mean: expanded.length === 0 ? undefined : sum / expanded.length }
}

const value = fc.oneof(
  fc.double({ noNaN: true }),
  fc.constantFrom(0, -0, 0.01, 0.03, 1e-300, -1e-300, Number.MAX_VALUE, -Number.MAX_VALUE),
  fc.integer({ min: -3, max: 3 }).map((k) => k / 7)
)

describe("CountedSamples", () => {
  test.prop([fc.array(fc.tuple(value, fc.integer({ min: 1, max: 5 })), { maxLength: 300 })])(
    "quantiles and mean equal those of the expanded sample",
    (pushes) => {
      const s = new CountedSamples()
      for (const [x, c] of pushes) {
        if (c === 1) s.push(x)
        else s.pushMany(x, c)
      }
      const ref = reference(pushes)
      const q = s.quantiles()
      for (const p of [0, 0.01, 0.25, 0.5, 0.9, 0.99, 1]) expect(q(p)).toBe(quantile(ref.expanded, p))
      const pc = s.percentiles()
      expect(pc.count).toBe(ref.expanded.length)
      expect(pc.mean).toBe(ref.mean)
      expect(pc.p50).toBe(quantile(ref.expanded, 0.5))
    }
  )

  it("a radix pass over many runs orders values whose low bits differ", () => {
    const s = new CountedSamples()
    const xs = Array.from({ length: 70_000 }, (_, i) => 1 + ((i * 7919) % 70_000) * Number.EPSILON)
    for (const x of xs) s.pushMany(x, 2)
    const q = s.quantiles()
    expect(q(0)).toBe(1)
    expect(q(1)).toBe(1 + 69_999 * Number.EPSILON)
    expect(q(0.5)).toBe(1 + 35_000 * Number.EPSILON)
  })

  it("NaN samples sort last, as in a sorted Float64Array", () => {
    const s = new CountedSamples()
    s.push(2)
    s.push(Number.NaN)
    s.push(1)
    const sorted = Float64Array.from([2, Number.NaN, 1]).sort()
    expect(sorted[2]).toBeNaN()
    expect(s.quantiles()(0)).toBe(1)
    expect(s.quantiles()(0.25)).toBe(1.5)
    for (const p of [0.5, 0.75, 1]) expect(s.quantiles()(p)).toBe(quantile(sorted, p))
    expect(s.quantiles()(1)).toBeNaN()
    expect(s.percentiles().mean).toBeNaN()
  })

  it("an empty sample has no percentiles", () => {
    expect(new CountedSamples().percentiles()).toEqual({
      count: 0,
      p50: undefined,
      p90: undefined,
      p99: undefined,
      mean: undefined
    })
  })
})

describe("latency statistics past the exact limit (the sketch)", () => {
  const positive = fc.double({ min: 1e-4, max: 1e4, noNaN: true })
  /** `v` is within the sketch's relative error of the sample at rank floor or ceil of q (n - 1). */
  const near = (sorted: Float64Array, q: number, v: number | undefined) => {
    const pos = (sorted.length - 1) * q
    const tol = (x: number) => Math.abs(v! - x) <= SKETCH_RELATIVE_ACCURACY * x * (1 + 1e-9)
    return tol(sorted[Math.floor(pos)]!) || tol(sorted[Math.ceil(pos)]!)
  }

  test.prop([fc.array(positive, { minLength: 1, maxLength: 400 }), fc.integer({ min: 1, max: 60 })])(
    "LatencySamples: exact up to the limit, then every percentile within the stated relative error",
    (xs, limit) => {
      const s = new LatencySamples(limit)
      for (const x of xs) s.push(x)
      const sorted = Float64Array.from(xs).sort()
      const { percentiles: p, quantile: at } = s.summary()
      expect(p.count).toBe(xs.length)
      if (xs.length <= limit) {
        expect(p.relativeError).toBeUndefined()
        expect(p.p99).toBe(quantile(sorted, 0.99))
        return
      }
      expect(p.relativeError).toBe(SKETCH_RELATIVE_ACCURACY)
      for (const [q, v] of [
        [0.5, p.p50],
        [0.9, p.p90],
        [0.99, p.p99],
        [0, at(0)],
        [1, at(1)]
      ] as const)
        expect(near(sorted, q, v)).toBe(true)
      const mean = xs.reduce((a, b) => a + b, 0) / xs.length
      expect(Math.abs(p.mean! - mean)).toBeLessThanOrEqual(1e-9 * Math.max(...xs))
    }
  )

  test.prop([fc.array(fc.tuple(positive, fc.integer({ min: 1, max: 5 })), { minLength: 1, maxLength: 300 })])(
    "CountedSamples: past its run limit, percentiles of the expanded sample within the relative error",
    (pushes) => {
      const s = new CountedSamples(20)
      for (const [x, c] of pushes) s.pushMany(x, c)
      const { expanded } = reference(pushes)
      const p = s.percentiles()
      expect(p.count).toBe(expanded.length)
      const q = s.quantiles()
      if (p.relativeError === undefined) {
        expect(q(0.5)).toBe(quantile(expanded, 0.5))
        return
      }
      for (const [at, v] of [
        [0.5, p.p50],
        [0.9, p.p90],
        [0.99, p.p99],
        [0.25, q(0.25)]
      ] as const)
        expect(near(expanded, at, v)).toBe(true)
    }
  )

  it("a sketched run keeps no per-sample storage: 1M pushes past a limit of 1,000", () => {
    const s = new LatencySamples(1000)
    for (let i = 1; i <= 1_000_000; i++) s.push(i / 1000)
    const p = s.summary().percentiles
    expect(p.count).toBe(1_000_000)
    expect(Math.abs(p.p50! - 500) / 500).toBeLessThanOrEqual(SKETCH_RELATIVE_ACCURACY)
    expect(Math.abs(p.p99! - 990) / 990).toBeLessThanOrEqual(SKETCH_RELATIVE_ACCURACY)
  })
})

describe("Samples", () => {
  test.prop([fc.array(fc.oneof(value, fc.constant(Number.NaN)), { maxLength: 2000 })])(
    "sorted() orders as Float64Array.prototype.sort (-0 before +0, NaN last), bit for bit",
    (xs) => {
      const s = new Samples()
      for (const x of xs) s.push(x)
      const got = s.sorted()
      const want = Float64Array.from(xs).sort()
      expect(Array.from(got).map((x) => (Object.is(x, -0) ? "-0" : x))).toEqual(
        Array.from(want).map((x) => (Object.is(x, -0) ? "-0" : x))
      )
    }
  )
})
