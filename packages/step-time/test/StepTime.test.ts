import { fc, test } from "@fast-check/vitest"
import { describe, expect, it } from "vitest"
import {
  attentionPairs,
  extendPairs,
  lockstepSyncWait,
  models,
  type RankBatch,
  stepTime,
  stepTimeFromAggregates
} from "../src/index.js"
import { arbPresetConfig, arbRanks, glm } from "./arbitraries.js"

const fourBy8k: RankBatch = { decode: [8192, 8192, 8192, 8192], extend: [] }
const idle: RankBatch = { decode: [], extend: [] }
// issue 5, "Must reproduce exactly": rank 0 holds three 8K decodes and one 200K, the others four 8K
const skewed: ReadonlyArray<RankBatch> = [
  { decode: [8192, 8192, 8192, 204800], extend: [] },
  ...Array.from({ length: 7 }, () => fourBy8k)
]

describe("issue 5: exact numbers", () => {
  const r = stepTime(glm, skewed)

  it("attention pairs 229,376 on rank 0 and 32,768 elsewhere (7.0:1)", () => {
    expect(r.ranks[0]!.attentionPairs).toBe(229_376)
    for (const k of r.ranks.slice(1)) expect(k.attentionPairs).toBe(32_768)
    expect(r.ranks[0]!.attentionPairs / r.ranks[1]!.attentionPairs).toBe(7)
  })

  it("KV read per step 229,376 x 576 x 78 = 10.31 GB versus 1.47 GB", () => {
    expect(r.ranks[0]!.kvBytesRead).toBe(229_376 * 576 * 78)
    expect((r.ranks[0]!.kvBytesRead / 1e9).toFixed(2)).toBe("10.31")
    expect((r.ranks[1]!.kvBytesRead / 1e9).toFixed(2)).toBe("1.47")
  })

  it("imbalance pairs 196,608 per other rank per layer, 15.3 million over 78 layers", () => {
    expect(r.ranks[0]!.imbalancePairs).toBe(0)
    for (const k of r.ranks.slice(1)) {
      expect(k.imbalancePairs).toBe(196_608)
      expect(k.imbalancePairsPerStep).toBe(196_608 * 78)
      expect((k.imbalancePairsPerStep / 1e6).toFixed(1)).toBe("15.3")
    }
  })

  it("6 ms on one rank and 1 ms on seven: each of the seven waits 5 ms per layer, 390 ms per step", () => {
    const w = lockstepSyncWait([0.006, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001], 78)
    expect(w.maxLocalSecondsPerLayer).toBe(0.006)
    expect(w.syncWaitSecondsPerLayer[0]).toBe(0)
    expect(w.syncWaitSeconds[0]).toBe(0)
    for (let i = 1; i < 8; i++) {
      expect(w.syncWaitSecondsPerLayer[i]).toBeCloseTo(0.005, 12)
      expect(w.syncWaitSeconds[i]).toBeCloseTo(0.39, 12)
    }
  })

  it("the step model's sync wait is the same rule: layers x (max local - own local)", () => {
    const max = Math.max(...r.ranks.map((k) => k.localSecondsPerLayer))
    expect(r.ranks[0]!.localSecondsPerLayer).toBe(max)
    for (const k of r.ranks) expect(k.syncWaitSeconds).toBeCloseTo(78 * (max - k.localSecondsPerLayer), 15)
    expect(r.ranks[1]!.syncWaitSeconds).toBeGreaterThan(0)
  })

  it("pair imbalance ratio is max over mean: 229,376 / 57,344 = 4.0", () => {
    expect(r.pairsImbalanceRatio).toBe(4)
    expect(r.tokenImbalanceRatio).toBe(1)
  })
})

describe("pair arithmetic", () => {
  it("decode L -> L; extend e after prefix p -> p*e + e*(e+1)/2", () => {
    expect(attentionPairs({ decode: [5, 7], extend: [] })).toBe(12)
    expect(extendPairs({ prefix: 10, tokens: 3 })).toBe(10 * 3 + 6)
    expect(extendPairs({ prefix: 0, tokens: 8192 })).toBe(33_558_528)
    expect(attentionPairs({ decode: [100], extend: [{ prefix: 0, tokens: 4 }] })).toBe(110)
  })
})

describe("glm-5.3 + h200 at batch 32 (4 x 8K per rank, 8 ranks)", () => {
  const r = stepTime(
    glm,
    Array.from({ length: 8 }, () => fourBy8k)
  )
  it("step within 15% of the published 30 ms", () => {
    expect(Math.abs(r.stepSeconds - 0.03) / 0.03).toBeLessThanOrEqual(0.15)
  })
  it("MoE within 15% of the published 19 ms", () => {
    expect(Math.abs(r.moeSeconds - 0.019) / 0.019).toBeLessThanOrEqual(0.15)
  })
  it("balanced: no sync wait, ratios 1.0, CUDA graph", () => {
    expect(r.tokenImbalanceRatio).toBe(1)
    expect(r.pairsImbalanceRatio).toBe(1)
    expect(r.cudaGraph).toBe(true)
    for (const k of r.ranks) expect(k.syncWaitSeconds).toBe(0)
  })
})

describe("idle ranks and CUDA graphs", () => {
  it("an idle rank in a step with an extend makes every rank eager and pays the eager overhead", () => {
    const withIdle = stepTime(glm, [{ decode: [100], extend: [{ prefix: 0, tokens: 512 }] }, idle])
    const noIdle = stepTime(glm, [
      { decode: [100], extend: [{ prefix: 0, tokens: 512 }] },
      { decode: [1], extend: [] }
    ])
    expect(withIdle.cudaGraph).toBe(false)
    expect(withIdle.ranks[1]!.idle).toBe(true)
    expect(withIdle.idleRanks).toBe(1)
    expect(noIdle.cudaGraph).toBe(true)
    expect(withIdle.overheadSeconds - noIdle.overheadSeconds).toBeCloseTo(78 * 30e-6, 12)
  })

  it("an idle rank in a decode-only step keeps the CUDA graph", () => {
    const r = stepTime(glm, [fourBy8k, idle])
    expect(r.cudaGraph).toBe(true)
    expect(r.idleRanks).toBe(1)
    expect(r.tokenImbalanceRatio).toBe(2) // one of two ranks has all the work
  })

  it("one rank with all the work: imbalance ratio equals the number of ranks", () => {
    const r = stepTime(glm, [fourBy8k, idle, idle, idle, idle, idle, idle, idle])
    expect(r.tokenImbalanceRatio).toBe(8)
    expect(r.pairsImbalanceRatio).toBe(8)
  })

  it("a rank mixing a prefill chunk with decodes holds all ranks for the chunk", () => {
    const decodeOnly = stepTime(
      glm,
      Array.from({ length: 4 }, () => fourBy8k)
    )
    const mixed = stepTime(glm, [
      { decode: [8192, 8192, 8192, 8192], extend: [{ prefix: 0, tokens: 8192 }] },
      fourBy8k,
      fourBy8k,
      fourBy8k
    ])
    expect(mixed.stepSeconds).toBeGreaterThan(5 * decodeOnly.stepSeconds)
    for (const k of mixed.ranks.slice(1))
      expect(k.syncWaitSeconds).toBeGreaterThan(0.5 * mixed.attentionSeconds)
  })
})

const arbConfig = arbPresetConfig({ dsa: false })

describe("properties", () => {
  test.prop([arbConfig, arbRanks, fc.nat({ max: 7 }), fc.integer({ min: 1, max: 100_000 })])(
    "more context on a rank never lowers its local time or the step time",
    (config, ranks, which, extra) => {
      const i = which % ranks.length
      const before = stepTime(config, ranks)
      const b = ranks[i]!
      // "more context": a longer context for an existing decode, or a longer prefix for an extend
      if (b.decode.length === 0 && b.extend.length === 0) return
      const grown = ranks.map((x, j) =>
        j !== i
          ? x
          : b.decode.length > 0
            ? { ...b, decode: [b.decode[0]! + extra, ...b.decode.slice(1)] }
            : {
                ...b,
                extend: [{ ...b.extend[0]!, prefix: b.extend[0]!.prefix + extra }, ...b.extend.slice(1)]
              }
      )
      const after = stepTime(config, grown)
      expect(after.ranks[i]!.localSeconds).toBeGreaterThanOrEqual(before.ranks[i]!.localSeconds)
      expect(after.stepSeconds).toBeGreaterThanOrEqual(before.stepSeconds * (1 - 1e-12))
    }
  )

  test.prop([arbConfig, arbRanks, fc.nat(), fc.nat()])(
    "moving work between ranks never changes the MoE term",
    (config, ranks, from, to) => {
      const a = from % ranks.length
      const b = to % ranks.length
      const before = stepTime(config, ranks)
      const src = ranks[a]!
      if (src.decode.length === 0 && src.extend.length === 0) return
      const moved =
        src.decode.length > 0
          ? { decode: [src.decode[0]!], extend: [] }
          : { decode: [], extend: [src.extend[0]!] }
      const left =
        src.decode.length > 0
          ? { ...src, decode: src.decode.slice(1) }
          : { ...src, extend: src.extend.slice(1) }
      const next = ranks.map((x, j) => (j === a ? left : x))
      const target = next[b]!
      const moved2 = next.map((x, j) =>
        j === b
          ? { decode: [...target.decode, ...moved.decode], extend: [...target.extend, ...moved.extend] }
          : x
      )
      const after = stepTime(config, moved2)
      expect(after.moeTokens).toBe(before.moeTokens)
      expect(after.moeSeconds).toBe(before.moeSeconds)
    }
  )

  test.prop([arbConfig, arbRanks])(
    "sync wait is non-negative and zero on the slowest rank",
    (config, ranks) => {
      const r = stepTime(config, ranks)
      const min = Math.min(...r.ranks.map((k) => k.syncWaitSeconds))
      expect(min).toBe(0)
      for (const k of r.ranks) expect(k.syncWaitSeconds).toBeGreaterThanOrEqual(0)
    }
  )
})

describe("stepTimeFromAggregates", () => {
  it("matches stepTime when given the same counts", () => {
    const a = stepTime(glm, skewed)
    const b = stepTimeFromAggregates(
      glm,
      skewed.map((x) => ({
        attentionPairs: attentionPairs(x),
        tokens: x.decode.length,
        numDecodes: x.decode.length,
        extendTokens: 0
      }))
    )
    expect(b.stepSeconds).toBe(a.stepSeconds)
    expect(b.ranks.map((k) => k.kvBytesRead)).toEqual(a.ranks.map((k) => k.kvBytesRead))
  })

  it("docstring example: 8 ranks x 4 x 8K on glm-5.3 + h200 lands between 25 and 35 ms", () => {
    const rank = { attentionPairs: 32768, tokens: 4, numDecodes: 4, extendTokens: 0 }
    const r = stepTimeFromAggregates(glm, Array(8).fill(rank))
    expect(r.stepSeconds > 0.025 && r.stepSeconds < 0.035).toBe(true)
  })
})

describe("aggregates without kvReadPairs", () => {
  it("an 8K extend after no prefix: estimated KV reads within 2% of the exact tile count", () => {
    const batch = { decode: [], extend: [{ prefix: 0, tokens: 8192 }] }
    const exact = stepTime(glm, [batch])
    const est = stepTimeFromAggregates(glm, [
      {
        attentionPairs: attentionPairs(batch),
        tokens: 8192,
        numDecodes: 0,
        extendTokens: 8192,
        numExtends: 1
      }
    ])
    expect(exact.ranks[0]!.kvReadPairs).toBe(128 * ((63 * 64) / 2) + 8192)
    expect(Math.abs(est.ranks[0]!.kvReadPairs / exact.ranks[0]!.kvReadPairs - 1)).toBeLessThan(0.02)
    expect(Math.abs(est.stepSeconds / exact.stepSeconds - 1)).toBeLessThan(0.01)
  })
})

describe("all-to-all collectives (expert-parallel dispatch + combine)", () => {
  const a2a = { ...glm, model: { ...models["glm-5.3-dense"]!, collective: "all-to-all" as const } }
  const even = Array.from({ length: 8 }, () => ({ decode: Array(64).fill(4096), extend: [] }))
  const skew = [{ decode: Array(512).fill(4096), extend: [] }, ...Array.from({ length: 7 }, () => idle)]

  it("volume follows the busiest rank: skew costs more link time, the MoE term does not move", () => {
    const e = stepTime(a2a, even)
    const s = stepTime(a2a, skew)
    expect(s.moeSeconds).toBe(e.moeSeconds)
    expect(s.commSeconds).toBeGreaterThan(e.commSeconds)
    // bytes: (g - 1)/g x maxTokens x topK x hidden x 2 B, twice per layer, at 70% of 450 GB/s
    const bytes = (7 / 8) * 64 * 8 * 6144 * 2
    const perLayer = 2 * (7 * 2e-6 + bytes / (450e9 * 0.7))
    expect(e.commSeconds).toBeCloseTo(78 * perLayer, 12)
  })

  it("gather (default) volume follows the global token count instead", () => {
    expect(stepTime(glm, skew).commSeconds).toBeCloseTo(stepTime(glm, even).commSeconds, 15)
  })
})
