import { fc, test } from "@fast-check/vitest"
import { describe, expect, it } from "vitest"
import { CountedSamples, quantile } from "../src/internal/stats.js"

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
