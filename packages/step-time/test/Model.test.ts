import { Result } from "effect"
import { describe, expect, it } from "vitest"
import {
  accumulateImbalance,
  admitCount,
  aggregate,
  chunkedPrefillTimeline,
  defaultEfficiencies,
  emptyImbalanceTotals,
  extendKvReadTokens,
  gpus,
  imbalanceBuckets,
  kvReadPairs,
  modelFromJson,
  models,
  ranksFromJson,
  runningCapacity,
  stepMetrics,
  stepTime,
  withTp
} from "../src/index.js"

const glm = { model: models["glm-5.3"]!, gpu: gpus["h200"]! }

describe("presets", () => {
  it("glm-5.3: 78 layers, MLA 576 B, 256 experts, top-8, EP8", () => {
    const m = models["glm-5.3"]!
    expect(m.numLayers).toBe(78)
    expect(m.attention.kind).toBe("mla")
    expect(m.attention.kvBytesPerTokenPerLayer).toBe(512 + 64)
    expect(m.mlp).toMatchObject({ kind: "moe", numExperts: 256, topK: 8, ep: 8 })
  })
  it("model and GPU preset names", () => {
    expect(Object.keys(models).sort()).toEqual([
      "bloom-176b",
      "deepseek-v3",
      "glm-5.3",
      "glm-5.3-dense",
      "glm-5.3-dsa",
      "llama2-70b"
    ])
    expect(Object.keys(gpus).sort()).toEqual([
      "a100-80gb",
      "a40",
      "b200",
      "h100-80gb",
      "h100-80gb-pcap",
      "h200"
    ])
  })
  it("llama2-70b weighs about 69e9 parameters (attention + MLP over 80 layers)", () => {
    const m = models["llama2-70b"]!
    const perLayer = m.attention.paramsPerLayer + (m.mlp.kind === "dense" ? m.mlp.paramsPerLayer : 0)
    expect(perLayer * m.numLayers).toBeGreaterThan(68e9)
    expect(perLayer * m.numLayers).toBeLessThan(70e9)
    expect(withTp(m, 4).tp).toBe(4)
  })
  it("defaults are in range", () => {
    expect(defaultEfficiencies.memoryEfficiency).toBe(0.7)
    expect(defaultEfficiencies.fixedOverheadSeconds).toBe(0.003)
  })
})

describe("modelFromJson", () => {
  it("round-trips every preset through JSON", () => {
    for (const m of Object.values(models)) {
      const r = modelFromJson(JSON.parse(JSON.stringify(m)))
      expect(Result.isSuccess(r) && r.success).toEqual(m)
    }
  })
  it("defaults tp to 1 and activationBytes to 2", () => {
    const { tp: _tp, activationBytes: _a, ...rest } = models["llama2-70b"]!
    const r = modelFromJson(rest)
    expect(Result.isSuccess(r) && [r.success.tp, r.success.activationBytes]).toEqual([1, 2])
  })
  it("names the first bad field", () => {
    const bad = modelFromJson({ ...models["llama2-70b"], numLayers: -1 })
    expect(Result.isFailure(bad) && bad.failure).toMatchObject({ _tag: "ModelSpecError", path: "numLayers" })
    const badKv = modelFromJson({
      ...models["glm-5.3"],
      attention: { ...models["glm-5.3"]!.attention, kvBytesPerTokenPerLayer: "576" }
    })
    expect(Result.isFailure(badKv) && badKv.failure.path).toBe("attention.kvBytesPerTokenPerLayer")
    const badTopK = modelFromJson({ ...models["glm-5.3"], mlp: { ...models["glm-5.3"]!.mlp, topK: 300 } })
    expect(Result.isFailure(badTopK) && badTopK.failure.path).toBe("mlp.topK")
    expect(Result.isFailure(modelFromJson("glm"))).toBe(true)
    const badCollective = modelFromJson({ ...models["glm-5.3"], collective: "ring" })
    expect(Result.isFailure(badCollective) && badCollective.failure.path).toBe("collective")
    const a2a = modelFromJson({ ...models["glm-5.3"], collective: "all-to-all" })
    expect(Result.isSuccess(a2a) && a2a.success.collective).toBe("all-to-all")
  })
  it("a JSON model runs through stepTime like a preset", () => {
    const m = Result.getOrThrow(modelFromJson(JSON.parse(JSON.stringify(models["glm-5.3"]))))
    const ranks = [{ decode: [8192], extend: [] }]
    expect(stepTime({ model: m, gpu: gpus["h200"]! }, ranks).stepSeconds).toBe(
      stepTime(glm, ranks).stepSeconds
    )
  })
})

describe("ranksFromJson", () => {
  it("accepts arrays of context lengths and {decode, extend} objects", () => {
    const r = ranksFromJson([[8192, 8192], { extend: [{ prefix: 0, tokens: 512 }] }, []])
    expect(Result.isSuccess(r) && r.success).toEqual([
      { decode: [8192, 8192], extend: [] },
      { decode: [], extend: [{ prefix: 0, tokens: 512 }] },
      { decode: [], extend: [] }
    ])
  })
  it("rejects negative lengths, missing tokens, empty lists, with a path", () => {
    const a = ranksFromJson([[1], { decode: [-3] }])
    expect(Result.isFailure(a) && a.failure.path).toBe("1.decode.0")
    const b = ranksFromJson([[1], { extend: [{ prefix: 1 }] }])
    expect(Result.isFailure(b) && b.failure.path).toBe("1.extend.0.tokens")
    expect(Result.isFailure(ranksFromJson([]))).toBe(true)
    expect(Result.isFailure(ranksFromJson([[1.5]]))).toBe(true)
  })
})

describe("KV reads", () => {
  it("DSA top-k caps each query's reads but not the pair count", () => {
    expect(kvReadPairs({ decode: [8192, 100], extend: [] }, 2048)).toBe(2148)
    const a = aggregate({ decode: [8192, 100], extend: [] }, 2048)
    expect(a.attentionPairs).toBe(8292)
    expect(a.kvReadPairs).toBe(2148)
    // extend after prefix 2000 of 100 tokens with cap 2048: 48 queries uncapped (2001..2048), 52 capped
    const uncapped = 2000 * 48 + (48 * 49) / 2
    expect(kvReadPairs({ decode: [], extend: [{ prefix: 2000, tokens: 100 }] }, 2048)).toBe(
      uncapped + 52 * 2048
    )
  })
  it("an extend reads its KV once per 128-query tile", () => {
    expect(extendKvReadTokens({ prefix: 0, tokens: 256 })).toBe(128 + 256)
    expect(extendKvReadTokens({ prefix: 1000, tokens: 100 })).toBe(1100)
    expect(kvReadPairs({ decode: [7], extend: [{ prefix: 0, tokens: 256 }] })).toBe(7 + 384)
  })
  it("sparse cap in a JSON model lowers the KV bytes of a 200K decode", () => {
    const sparse = { ...models["glm-5.3"]!, attention: { ...models["glm-5.3"]!.attention, sparseTopK: 2048 } }
    const r = stepTime({ model: sparse, gpu: gpus["h200"]! }, [{ decode: [204800], extend: [] }])
    expect(r.ranks[0]!.attentionPairs).toBe(204800)
    expect(r.ranks[0]!.kvBytesRead).toBe(2048 * 576 * 78)
  })
})

describe("metrics", () => {
  it("SGLang names: localTokens, maxTokens, sumTokens, imbalanceTokens, maxOverMean", () => {
    const r = stepTime(glm, [
      { decode: [100, 100], extend: [] },
      { decode: [], extend: [] }
    ])
    const m = stepMetrics(r)
    expect(m[0]).toMatchObject({
      localTokens: 2,
      maxTokens: 2,
      sumTokens: 2,
      imbalanceTokens: 0,
      maxOverMean: 2
    })
    expect(m[1]).toMatchObject({
      localTokens: 0,
      imbalanceTokens: 2,
      idle: true,
      imbalanceAttentionPairs: 200
    })
  })
  it("histogram buckets 1.0 ... 64 and cumulative counts", () => {
    expect(imbalanceBuckets).toEqual([1.0, 1.05, 1.1, 1.25, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64])
    const r = stepTime(glm, [
      { decode: [10], extend: [] },
      { decode: [], extend: [] }
    ])
    const t = accumulateImbalance(accumulateImbalance(emptyImbalanceTotals, r), r)
    expect(t.steps).toBe(2)
    expect(t.idleRankSteps).toBe(2)
    expect(t.tokenImbalanceCounts.slice(0, 5)).toEqual([0, 0, 0, 0, 0]) // ratio 2 > 1.5
    expect(t.tokenImbalanceCounts.slice(5)).toEqual(Array(12).fill(2)) // le=2 ... +Inf
    expect(t.syncWaitSeconds[1]).toBeCloseTo(2 * r.ranks[1]!.syncWaitSeconds, 15)
  })
})

describe("capacity and schedule helpers", () => {
  it("runningCapacity splits max-running-requests over ranks", () => {
    expect(runningCapacity({ maxRunningRequests: 128, dpSize: 8 })).toEqual({ perRank: 16, fleet: 128 })
    expect(runningCapacity({ maxRunningRequests: 100, dpSize: 8 })).toEqual({ perRank: 12, fleet: 96 })
    expect(admitCount({ running: 15, waiting: 3, perRankCap: 16 })).toBe(1)
  })
  it("chunkedPrefillTimeline N=2 docstring example", () => {
    const t = chunkedPrefillTimeline({
      extendChunks: 16,
      prefillDecodeInterval: 2,
      extendStepSeconds: 0.6,
      decodeStepSeconds: 0.03
    })
    expect([t.decodeSteps, t.extendDoneSeconds.toFixed(1), t.medianItlSeconds]).toEqual([30, "10.5", 0.03])
  })
})

describe("README usage block", () => {
  it("prints 229376, 10.31, 196608", () => {
    const ranks = [
      { decode: [8192, 8192, 8192, 204800], extend: [] },
      ...Array.from({ length: 7 }, () => ({ decode: [8192, 8192, 8192, 8192], extend: [] }))
    ]
    const r = stepTime({ model: models["glm-5.3-dense"]!, gpu: gpus["h200"]! }, ranks)
    expect(r.ranks[0]!.attentionPairs).toBe(229376)
    expect((r.ranks[0]!.kvBytesRead / 1e9).toFixed(2)).toBe("10.31")
    expect(r.ranks[1]!.imbalancePairs).toBe(196608)
  })
})
