// The KV pool per rank under tensor parallelism (fresh-user defect: bloom-176b's TP-8 pool on an
// 80 GB GPU was 3,202 tokens, its whole-model KV per token and unsplit embedding charged to each
// GPU). Every expected pool is worked out here from the presets' own fields, then pinned exactly.
import { gpus, type ModelSpec, models, withTp } from "@loadledger/step-time"
import { describe, expect, it } from "vitest"
import { checkKvPool, kvPoolTokensFor, modelSimConfig } from "../src/index.js"

const usable = (gpu: string) => gpus[gpu]!.hbmBytes * 0.88
/** The input embedding and LM head: vocab x hidden each, BF16. */
const embeddingBytes = (m: ModelSpec) => 2 * m.vocabSize * m.hiddenSize * 2
/** A dense model's attention + MLP weight bytes, whole model. */
const denseWeightBytes = (m: ModelSpec) => {
  if (m.mlp.kind !== "dense") throw new Error(`${m.name} is not dense`)
  return m.numLayers * (m.attention.paramsPerLayer + m.mlp.paramsPerLayer) * m.weightBytesPerParam
}
/**
 * An MoE model's weight bytes per GPU at TP `t`: attention, dense layers and shared experts over
 * `t`, routed experts over max(ep, t) (= ep 8 for the presets up to TP 8), the BF16 embedding and
 * LM head over `t`.
 */
const moeWeightBytes = (m: ModelSpec, t: number) => {
  if (m.mlp.kind !== "moe") throw new Error(`${m.name} is not MoE`)
  const mlp = m.mlp
  return (
    (m.numLayers * (m.attention.paramsPerLayer / t) +
      mlp.denseLayers * (mlp.denseParamsPerLayer / t) +
      (m.numLayers - mlp.denseLayers) *
        ((mlp.numExperts / Math.max(mlp.ep, t)) * mlp.expertParams + mlp.sharedExpertParams / t)) *
      m.weightBytesPerParam +
    embeddingBytes(m) / t
  )
}
/** The whole model's KV bytes per token (every KV head of every layer). */
const wholeKvBytes = (m: ModelSpec) => m.attention.kvBytesPerTokenPerLayer * m.numLayers

describe("kvPoolTokensFor under tensor parallelism", () => {
  it("bloom-176b (preset TP 8) on a100-80gb: each GPU holds 1/8 of the weights, embedding and LM head, and 14 of 112 KV heads", () => {
    const bloom = models["bloom-176b"]!
    expect(bloom.tp).toBe(8)
    expect(bloom.attention).toMatchObject({ kind: "mha", numHeads: 112, kvHeads: 112 })
    // 70 layers x (4 + 8) x 14336^2 parameters x 2 bytes / 8 + 2 x 250880 x 14336 x 2 bytes / 8
    const weightsPerGpu = (denseWeightBytes(bloom) + embeddingBytes(bloom)) / 8
    expect(weightsPerGpu).toBe(44_957_696_000)
    // 2 (K, V) x 14336 x 2 bytes x 70 layers, 14 of the 112 heads on each GPU
    const kvPerGpu = (wholeKvBytes(bloom) * (112 / 8)) / 112
    expect(kvPerGpu).toBe(501_760)
    const expected = Math.floor((usable("a100-80gb") - weightsPerGpu) / kvPerGpu)
    expect(expected).toBe(50_706)
    expect(kvPoolTokensFor(bloom, gpus["a100-80gb"]!)).toBe(expected)
    // the same 80 GB on h100-80gb; the defect's figure was 3,202 on both
    expect(kvPoolTokensFor(bloom, gpus["h100-80gb"]!)).toBe(50_706)
  })

  it("llama2-70b at TP 8 on b200 (where TP 1 also fits): the KV per GPU is 1/8 of TP 1's, and 7/8 of the weights move out", () => {
    const tp1 = models["llama2-70b"]!
    const tp8 = withTp(tp1, 8)
    const gpu = gpus["b200"]!
    const weights1 = denseWeightBytes(tp1) + embeddingBytes(tp1)
    const kv1 = wholeKvBytes(tp1) // 2 x 8 KV heads x 128 x 2 bytes x 80 layers
    expect(kv1).toBe(327_680)
    const pool1 = Math.floor((usable("b200") - weights1) / kv1)
    // 8 KV heads over 8 GPUs: one each, 1/8 of a token's KV
    const pool8 = Math.floor((usable("b200") - weights1 / 8) / (kv1 / 8))
    expect([pool1, pool8]).toEqual([62_406, 3_446_195])
    expect(kvPoolTokensFor(tp1, gpu)).toBe(pool1)
    expect(kvPoolTokensFor(tp8, gpu)).toBe(pool8)
    // with the same free memory the TP-8 pool is exactly 8x: the free memory itself grows from
    // ~20 GB to ~141 GB, so the whole ratio is ~55x
    const free8 = usable("b200") - weights1 / 8
    expect(pool8).toBe(Math.floor((8 * free8) / kv1))
    expect(pool8 / pool1).toBeCloseTo(55.22, 2)
    // on a100-80gb TP 1 does not fit; TP 8's pool is ~8x the 159,419 the whole-model KV gave
    expect(kvPoolTokensFor(tp1, gpus["a100-80gb"]!)).toBe(0)
    const a100 = Math.floor((usable("a100-80gb") - weights1 / 8) / (kv1 / 8))
    expect(a100).toBe(1_297_758)
    expect(kvPoolTokensFor(tp8, gpus["a100-80gb"]!)).toBe(a100)
  })

  it("fewer KV heads than TP ranks: the heads are replicated, one per GPU, so the KV per GPU stops shrinking", () => {
    const llama = models["llama2-70b"]!
    const gpu = gpus["a100-80gb"]!
    const weights1 = denseWeightBytes(llama) + embeddingBytes(llama)
    const oneHead = wholeKvBytes(llama) / 8 // 8 KV heads
    // TP 16 > 8 KV heads: still one head (40,960 bytes per token) per GPU; only the weights halve again
    const pool16 = Math.floor((usable("a100-80gb") - weights1 / 16) / oneHead)
    expect(pool16).toBe(1_508_254)
    expect(kvPoolTokensFor(withTp(llama, 16), gpu)).toBe(pool16)
    // a multi-query model (one KV head) keeps its whole KV on every rank at any TP
    const mqa: ModelSpec = {
      ...llama,
      name: "llama2-70b-mqa",
      attention: { ...llama.attention, kvHeads: 1, kvBytesPerTokenPerLayer: 2 * 1 * 128 * 2 }
    }
    const mqaTp8 = withTp(mqa, 8)
    const mqaWeights8 = (denseWeightBytes(mqa) + embeddingBytes(mqa)) / 8
    const expected = Math.floor((usable("a100-80gb") - mqaWeights8) / wholeKvBytes(mqa))
    expect(expected).toBe(1_297_758)
    expect(kvPoolTokensFor(mqaTp8, gpu)).toBe(expected)
    // one head per GPU either way (and the same weights): the pool of llama2-70b's 8 heads at TP 8
    expect(expected).toBe(kvPoolTokensFor(withTp(llama, 8), gpu))
  })

  it("MLA (deepseek-v3, glm-5.3): every TP rank holds the whole latent (and DSA index key), so TP changes the pool only through the weights share", () => {
    const gpu = gpus["h200"]!
    const ds = models["deepseek-v3"]!
    const kv = wholeKvBytes(ds) // 576 bytes (512 latent + 64 RoPE, FP8) x 61 layers, not split
    expect(kv).toBe(35_136)
    const pool1 = Math.floor((usable("h200") - moeWeightBytes(ds, 1)) / kv)
    const pool8 = Math.floor((usable("h200") - moeWeightBytes(ds, 8)) / kv)
    expect([pool1, pool8]).toEqual([668_199, 1_137_962])
    expect(kvPoolTokensFor(ds, gpu)).toBe(pool1)
    expect(kvPoolTokensFor(withTp(ds, 8), gpu)).toBe(pool8)
    // the pool grows by the weight bytes freed over the same (unsplit) KV per token
    expect(Math.abs(pool8 - pool1 - (moeWeightBytes(ds, 1) - moeWeightBytes(ds, 8)) / kv)).toBeLessThan(1)
    // glm-5.3 (DSA): the 132-byte index key per layer is held whole too: (576 + 132) x 78 at any TP
    const glm = models["glm-5.3"]!
    const glmKv = (576 + 132) * glm.numLayers
    const glm1 = Math.floor((usable("h200") - moeWeightBytes(glm, 1)) / glmKv)
    const glm8 = Math.floor((usable("h200") - moeWeightBytes(glm, 8)) / glmKv)
    expect([glm1, glm8]).toEqual([227_501, 558_961])
    expect(kvPoolTokensFor(glm, gpu)).toBe(glm1)
    expect(kvPoolTokensFor(withTp(glm, 8), gpu)).toBe(glm8)
  })

  it("glm-5.3 on h200, the compare default (TP 1): 227,501 tokens per rank, as before, through modelSimConfig at DP 8", () => {
    const glm = models["glm-5.3"]!
    expect(glm.tp).toBe(1)
    const config = { dpSize: 8, ...modelSimConfig(glm, gpus["h200"]!) }
    expect(config.kvPoolTokens).toBe(227_501)
    expect(modelSimConfig(models["glm-5.3-dense"]!, gpus["h200"]!).kvPoolTokens).toBe(279_637)
  })
})

describe("checkKvPool", () => {
  it("names the weights share and the smallest TP size with room; undefined when the model fits", () => {
    expect(checkKvPool(models["bloom-176b"]!, gpus["a100-80gb"]!)).toBeUndefined()
    const llama = checkKvPool(models["llama2-70b"]!, gpus["a100-80gb"]!)
    expect(llama).toMatchObject({
      _tag: "NoKvPool",
      field: "kvPoolTokens",
      weightBytesPerGpu: 137_950_658_560,
      usableBytes: 70.4e9,
      fitsAt: { tp: 2, kvPoolTokens: kvPoolTokensFor(withTp(models["llama2-70b"]!, 2), gpus["a100-80gb"]!) }
    })
    expect(llama?.fitsAt?.kvPoolTokens).toBe(8_695)
    // on h200 (124 GB usable) TP 2 leaves 336,332 tokens
    expect(checkKvPool(models["llama2-70b"]!, gpus["h200"]!)?.fitsAt).toEqual({
      tp: 2,
      kvPoolTokens: 336_332
    })
  })

  it("an MoE model whose routed experts alone overflow the GPU fits at no TP size (TP does not shrink them below the EP share)", () => {
    const e = checkKvPool(models["glm-5.3"]!, gpus["a100-80gb"]!)
    expect(e?.fitsAt).toBeUndefined()
    expect(e?.message).toBe(
      "glm-5.3 does not fit on one a100-80gb at tensor parallel 1: its weights take 111.5 GB per GPU of the 70.4 GB it may use (88% of 80.0 GB), no room for a KV pool; no tensor-parallel size up to 8 leaves room"
    )
  })
})
