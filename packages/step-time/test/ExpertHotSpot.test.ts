/**
 * Expert hot spots (issue 33): a skewed expert routing in the step-time model, the Zipf load, the
 * placements (contiguous, EPLB) and their laws.
 */
import { fc, test } from "@fast-check/vitest"
import { describe, expect, it } from "vitest"
import {
  aggregate,
  contiguousPlacement,
  type ExpertLoadError,
  type ExpertRouting,
  eplbPlacement,
  expertRouting,
  expertRoutingFor,
  gpus,
  isExpertLoadError,
  models,
  stepCostFromAggregates,
  stepTime,
  stepTimeFromAggregates,
  zipfExpertLoad
} from "../src/index.js"
import { arbRanks } from "./arbitraries.js"

const moeConfigs = [
  { model: models["glm-5.3"]!, gpu: gpus["h200"]! },
  { model: { ...models["deepseek-v3"]!, collective: "all-to-all" as const }, gpu: gpus["b200"]! }
]
const arbConfig = fc.constantFrom(...moeConfigs)
const routingOf = (x: ExpertRouting | ExpertLoadError): ExpertRouting => {
  if (isExpertLoadError(x)) throw new Error(x.message)
  return x
}
/** A load profile over 256 experts: a Zipf draw, or arbitrary shares. */
const arbLoad = fc.oneof(
  fc
    .record({ s: fc.double({ min: 0, max: 2, noNaN: true }), seed: fc.integer({ min: 0, max: 1000 }) })
    .map(({ s, seed }) => zipfExpertLoad(256, s, seed) as ReadonlyArray<number>),
  fc.array(fc.double({ min: 0.001, max: 1, noNaN: true }), { minLength: 256, maxLength: 256 })
)
const prefill = Array.from({ length: 8 }, () => ({ decode: [], extend: [{ prefix: 0, tokens: 8192 }] }))

describe("the step under a skewed expert routing", () => {
  test.prop([arbConfig, arbRanks])(
    "uniform experts: no hot-spot penalty (the default model's step)",
    (c, ranks) => {
      const uniform = routingOf(expertRoutingFor(c.model, { zipfS: 0 }))
      const plain = stepTime(c, ranks)
      const skewed = stepTime({ ...c, experts: uniform }, ranks)
      expect(skewed.stepSeconds).toBeCloseTo(plain.stepSeconds, 12)
      expect(skewed.moeSeconds).toBeCloseTo(plain.moeSeconds, 12)
      for (const r of skewed.ranks) expect(r.moeWaitSeconds ?? 0).toBeCloseTo(0, 12)
    }
  )

  test.prop([arbConfig, arbRanks, arbLoad])(
    "a compute-bound MoE step is never faster skewed than uniform; the hottest rank waits 0, the others >= 0",
    (c, ranks, load) => {
      const r = routingOf(expertRoutingFor(c.model, { load }))
      const all = [...ranks, ...prefill].slice(0, 8)
      const plain = stepTime(c, all)
      const skewed = stepTime({ ...c, experts: r }, all)
      expect(skewed.moeSeconds).toBeGreaterThanOrEqual(plain.moeSeconds * (1 - 1e-12))
      expect(skewed.stepSeconds).toBeGreaterThanOrEqual(plain.stepSeconds * (1 - 1e-12))
      const waits = skewed.ranks.map((x) => x.moeWaitSeconds!)
      expect(Math.min(...waits)).toBe(0)
      for (const x of skewed.ranks) expect(x.syncWaitSeconds).toBeGreaterThanOrEqual(x.moeWaitSeconds!)
    }
  )

  test.prop([arbConfig, arbRanks, arbLoad])(
    "the lean cost equals the full result to the last bit",
    (c, ranks, load) => {
      const config = { ...c, experts: routingOf(expertRoutingFor(c.model, { load })) }
      const aggs = ranks.map((b) => aggregate(b, c.model.attention.sparseTopK))
      const full = stepTimeFromAggregates(config, aggs)
      const lean = stepCostFromAggregates(config, aggs)
      expect(lean.stepSeconds).toBe(full.stepSeconds)
      for (const [i, x] of full.ranks.entries()) expect(lean.syncWaitSeconds[i]).toBe(x.syncWaitSeconds)
    }
  )

  it("glm-5.3 on H200, 8 x 8,192-token prefills: Zipf 1.2 costs 30% more, EPLB with 32 redundant experts takes it back", () => {
    const c = moeConfigs[0]!
    const plain = stepTime(c, prefill)
    const zipf = routingOf(expertRoutingFor(c.model, { zipfS: 1.2 }))
    const eplb = routingOf(
      expertRoutingFor(c.model, { zipfS: 1.2, placement: "eplb", numRedundantExperts: 32 })
    )
    const hot = stepTime({ ...c, experts: zipf }, prefill)
    const cured = stepTime({ ...c, experts: eplb }, prefill)
    expect(plain.stepSeconds).toBeCloseTo(1.1875, 3)
    expect(hot.stepSeconds / plain.stepSeconds).toBeCloseTo(1.301, 2)
    expect(cured.stepSeconds / plain.stepSeconds).toBeLessThan(1.001)
    expect(hot.hottestEpShare! * 8).toBeCloseTo(zipf.hotSpotFactor, 12)
    // the rank on the hottest EP rank's GPU waits 0; every other rank waits for it
    const hottest = zipf.epRankShares.indexOf(Math.max(...zipf.epRankShares))
    expect(hot.ranks[hottest]!.moeWaitSeconds).toBe(0)
    expect(hot.ranks.filter((r) => r.moeWaitSeconds! > 0.05).length).toBe(7)
  })

  it("in a memory-bound decode step a skew can be faster: no token picks the coldest experts, whose weights are not read", () => {
    const c = moeConfigs[0]!
    const decode = Array.from({ length: 8 }, () => ({ decode: Array(32).fill(4000), extend: [] }))
    const zipf = routingOf(expertRoutingFor(c.model, { zipfS: 1.5 }))
    expect(stepTime({ ...c, experts: zipf }, decode).moeSeconds).toBeLessThan(stepTime(c, decode).moeSeconds)
  })
})

describe("loads and placements", () => {
  test.prop([fc.integer({ min: 1, max: 512 }), fc.double({ min: 0, max: 3, noNaN: true }), fc.nat()])(
    "a Zipf load sums to 1, and sorted it falls as k^-s",
    (e, s, seed) => {
      const load = zipfExpertLoad(e, s, seed) as ReadonlyArray<number>
      expect(load.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12)
      const sorted = [...load].sort((a, b) => b - a)
      for (let k = 1; k < e; k++) expect(sorted[k]! / sorted[0]!).toBeCloseTo((k + 1) ** -s, 9)
    }
  )

  test.prop([arbLoad, fc.constantFrom(0, 8, 32, 64)])(
    "EPLB: every expert with load placed, equal slots per rank, the hottest share at most the mean plus the heaviest replica",
    (load, redundant) => {
      const p = eplbPlacement(load, 8, redundant)
      if (isExpertLoadError(p)) throw new Error(p.message)
      expect(p.every((slots) => slots.length === (256 + redundant) / 8)).toBe(true)
      expect(new Set(p.flat()).size).toBe(256)
      const r = routingOf(expertRouting(load, p, 1))
      const replicas = new Map<number, number>()
      for (const id of p.flat()) replicas.set(id, (replicas.get(id) ?? 0) + 1)
      const total = load.reduce((a, b) => a + b, 0)
      const heaviest = Math.max(...load.map((x, i) => x / total / replicas.get(i)!))
      expect(Math.max(...r.epRankShares)).toBeLessThanOrEqual(1 / 8 + heaviest + 1e-12)
    }
  )

  it("redundant experts lower the hot spot of a Zipf 1.0 profile on glm-5.3 (8 EP ranks)", () => {
    const m = models["glm-5.3"]!
    const factor = (spec: Parameters<typeof expertRoutingFor>[1]) =>
      routingOf(expertRoutingFor(m, spec)).hotSpotFactor
    expect(factor({ zipfS: 1 })).toBeCloseTo(1.969, 3)
    expect(factor({ zipfS: 1, placement: "eplb" })).toBeCloseTo(1.176, 3)
    expect(factor({ zipfS: 1, placement: "eplb", numRedundantExperts: 32 })).toBeLessThan(1.001)
  })

  it("a routing's inclusion chances are capped at 1 and sum to top-k", () => {
    const r = routingOf(expertRouting([100, 1, 1, 1], contiguousPlacement(4, 2) as never, 2))
    expect(r.slotProbabilities.flat()).toEqual([1, 1 / 3, 1 / 3, 1 / 3])
    expect(r.epRankShares).toEqual([2 / 3, 1 / 3])
  })

  it("bad input names the field", () => {
    expect(expertRoutingFor(models["glm-5.3"]!, { zipfS: Number.NaN })).toMatchObject({ field: "zipfS" })
    expect(expertRoutingFor(models["glm-5.3"]!, { load: [1, 2] })).toMatchObject({ field: "load" })
    expect(expertRoutingFor(models["glm-5.3"]!, { placement: "eplb", numRedundantExperts: 3 })).toMatchObject(
      {
        field: "ep"
      }
    )
    expect(expertRouting([1, 1], [[0], [5]], 1)).toMatchObject({ field: "placement[1][0]" })
    expect(expertRouting([1, 1], [[0]], 1)).toMatchObject({ field: "placement" })
  })
})
