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
  kvBytesPerTokenPerGpu,
  kvHeadsPerGpu,
  kvReadPairs,
  type ModelSpec,
  modelFromJson,
  models,
  ranksFromJson,
  runningCapacity,
  stepMetrics,
  stepTime,
  weightBytesPerGpu,
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
      "gb200",
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

// What one GPU of a tensor-parallel group holds (vLLM / SGLang `get_num_kv_heads`): the pool in
// @loadledger/sim is sized from these.
describe("per-GPU shares under tensor parallelism", () => {
  it("kvHeadsPerGpu: MHA/GQA heads split over TP, replicated (one per GPU) past the KV head count; MLA always 1", () => {
    const at = (name: string, tps: ReadonlyArray<number>) =>
      tps.map((tp) => kvHeadsPerGpu(withTp(models[name]!, tp)))
    expect(at("bloom-176b", [1, 2, 4, 8, 16])).toEqual([112, 56, 28, 14, 7])
    expect(at("llama2-70b", [1, 2, 4, 8, 16, 64])).toEqual([8, 4, 2, 1, 1, 1])
    expect(at("deepseek-v3", [1, 8, 16])).toEqual([1, 1, 1])
    expect(at("glm-5.3", [1, 8])).toEqual([1, 1])
  })

  it("kvBytesPerTokenPerGpu: the attention cache's per-GPU share; without kvHeads an MHA model has numHeads KV heads", () => {
    const bloom = models["bloom-176b"]!
    // 2 x 14336 x 2 bytes per layer over 112 heads, 14 heads per GPU at the preset TP 8, 70 layers
    expect(kvBytesPerTokenPerGpu(bloom)).toBe(((2 * 14336 * 2 * 14) / 112) * 70)
    const { kvHeads: _k, ...noKvHeads } = bloom.attention
    expect(kvBytesPerTokenPerGpu({ ...bloom, attention: noKvHeads })).toBe(501_760)
    // TP 16 over 8 KV heads: one head, as at TP 8
    const llama = models["llama2-70b"]!
    expect(kvBytesPerTokenPerGpu(withTp(llama, 16))).toBe(kvBytesPerTokenPerGpu(withTp(llama, 8)))
    expect(kvBytesPerTokenPerGpu(withTp(llama, 8))).toBe(2 * 128 * 2 * 80)
    // MLA and the DSA index key: whole on every rank
    expect(kvBytesPerTokenPerGpu(withTp(models["glm-5.3-dense"]!, 8))).toBe(576 * 78)
    expect(kvBytesPerTokenPerGpu(withTp(models["glm-5.3"]!, 8))).toBe((576 + 132) * 78)
  })

  it("weightBytesPerGpu: 1/TP of attention, dense MLP and the vocab-parallel embedding + LM head; routed experts over max(ep, tp)", () => {
    const bloom = models["bloom-176b"]!
    const whole = 70 * 12 * 14336 * 14336 * 2 + 2 * 250880 * 14336 * 2
    expect(weightBytesPerGpu(bloom)).toBe(whole / 8)
    expect(weightBytesPerGpu(withTp(bloom, 1))).toBe(whole)
    const glm = models["glm-5.3"]!
    if (glm.mlp.kind !== "moe") throw new Error("glm-5.3 is MoE")
    // TP 1 with EP 8 (the DP-attention deployment): 32 of 256 routed experts per GPU, the rest whole
    const glmTp1 =
      (78 * glm.attention.paramsPerLayer +
        3 * glm.mlp.denseParamsPerLayer +
        75 * (32 * glm.mlp.expertParams + glm.mlp.sharedExpertParams)) *
        1 +
      2 * 154880 * 6144 * 2
    expect(weightBytesPerGpu(glm)).toBe(glmTp1)
    // experts sharded over a TP group larger than EP (ep 1, tp 8: SGLang's MoE TP): 1/8 of each
    const moeTp: ModelSpec = { ...glm, tp: 8, mlp: { ...glm.mlp, ep: 1 } }
    const ep8: ModelSpec = { ...glm, tp: 8 }
    expect(weightBytesPerGpu(moeTp)).toBe(weightBytesPerGpu(ep8))
    // at TP 8 with EP 8 the routed experts stay 32 per GPU; everything else is split 8 ways
    const routed = 75 * 32 * glm.mlp.expertParams
    expect(weightBytesPerGpu(ep8) / (routed + (glmTp1 - routed) / 8)).toBeCloseTo(1, 12)
  })
})
