import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { gpus, modelFromHfConfig, models, stepTime } from "../src/index.js"

// GlmMoeDsaConfig defaults (huggingface/transformers, models/glm_moe_dsa) plus first_k_dense_replace 3
const glm5 = {
  hidden_size: 6144,
  num_hidden_layers: 78,
  num_attention_heads: 64,
  num_key_value_heads: 64,
  vocab_size: 154880,
  intermediate_size: 12288,
  moe_intermediate_size: 2048,
  n_routed_experts: 256,
  n_shared_experts: 1,
  num_experts_per_tok: 8,
  first_k_dense_replace: 3,
  kv_lora_rank: 512,
  q_lora_rank: 2048,
  qk_rope_head_dim: 64,
  qk_nope_head_dim: 192,
  v_head_dim: 256,
  index_topk: 2048,
  index_n_heads: 32,
  index_head_dim: 128,
  hidden_act: "silu"
}
// deepseek-ai/DeepSeek-V3 config.json (the fields used)
const dsv3 = {
  hidden_size: 7168,
  num_hidden_layers: 61,
  num_attention_heads: 128,
  num_key_value_heads: 128,
  vocab_size: 129280,
  intermediate_size: 18432,
  moe_intermediate_size: 2048,
  n_routed_experts: 256,
  n_shared_experts: 1,
  num_experts_per_tok: 8,
  first_k_dense_replace: 3,
  kv_lora_rank: 512,
  q_lora_rank: 1536,
  qk_rope_head_dim: 64,
  qk_nope_head_dim: 128,
  v_head_dim: 128,
  hidden_act: "silu"
}
// meta-llama/Llama-2-70b-hf config.json (the fields used)
const llama = {
  hidden_size: 8192,
  num_hidden_layers: 80,
  num_attention_heads: 64,
  num_key_value_heads: 8,
  intermediate_size: 28672,
  vocab_size: 32000,
  hidden_act: "silu"
}

// FP8 weights and KV cache, as GLM-5 and DeepSeek-V3 are deployed
const fp8 = { weightBytesPerParam: 1, kvCacheBytesPerElement: 1 }

describe("modelFromHfConfig reproduces the presets from config.json dimensions", () => {
  it("GLM-5 config -> glm-5.3-dense preset (FP8 weights and KV cache: MLA 576 B), and with sparseAttention glm-5.3", () => {
    const r = Result.getOrThrow(modelFromHfConfig(glm5, { name: "glm-5.3-dense", ...fp8 }))
    expect(r).toEqual(models["glm-5.3-dense"])
    const dsa = Result.getOrThrow(modelFromHfConfig(glm5, { name: "glm-5.3", sparseAttention: true, ...fp8 }))
    expect(dsa).toEqual(models["glm-5.3"])
  })
  it("DeepSeek-V3 config -> deepseek-v3 preset", () => {
    const r = Result.getOrThrow(modelFromHfConfig(dsv3, { name: "deepseek-v3", ...fp8 }))
    expect(r).toEqual(models["deepseek-v3"])
  })
  it("Llama-2-70b config -> llama2-70b preset (BF16, KV 4096 B per token per layer)", () => {
    const r = Result.getOrThrow(modelFromHfConfig(llama, { name: "llama2-70b", weightBytesPerParam: 2 }))
    expect(r).toEqual(models["llama2-70b"])
  })
  it("sparseAttention applies the DSA index_topk cap", () => {
    const r = Result.getOrThrow(modelFromHfConfig(glm5, { name: "g", ...fp8, sparseAttention: true }))
    expect(r.attention.sparseTopK).toBe(2048)
    // the DSA compute model too: the glm-5.3-dsa preset, from the config's index fields
    expect({ ...r, name: "glm-5.3-dsa" }).toEqual(models["glm-5.3-dsa"])
    const s = stepTime({ model: r, gpu: gpus["h200"]! }, [{ decode: [204800], extend: [] }])
    expect(s.ranks[0]!.kvBytesRead).toBe(2048 * 576 * 78)
  })
  it("missing or bad fields are named", () => {
    const { qk_rope_head_dim: _drop, ...noRope } = glm5
    const a = modelFromHfConfig(noRope, { name: "g", weightBytesPerParam: 1 })
    expect(Result.isFailure(a) && a.failure.path).toBe("qk_rope_head_dim")
    const b = modelFromHfConfig({ ...llama, hidden_size: "8192" }, { name: "l", weightBytesPerParam: 2 })
    expect(Result.isFailure(b) && b.failure.path).toBe("hidden_size")
    const { num_experts_per_tok: _k, ...noTopK } = dsv3
    const c = modelFromHfConfig(noTopK, { name: "d", weightBytesPerParam: 1 })
    expect(Result.isFailure(c) && c.failure.path).toBe("num_experts_per_tok")
    const d = modelFromHfConfig(dsv3, { name: "d", weightBytesPerParam: 1, ep: 7 })
    expect(Result.isFailure(d) && d.failure.path).toBe("ep")
  })
})
