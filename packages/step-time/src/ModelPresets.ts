/**
 * Model presets (`models`): glm-5.3 (dense and DSA), deepseek-v3, llama2-70b and bloom-176b as
 * {@link ModelSpec}s, each from its published config.
 *
 * @since 0.1.0
 */
import type { ModelSpec } from "./Model.js"

// `duplicates` pairs the presets below by shape: they are data (each model's own config.json
// numbers), not logic, so they stay one literal each.

// GLM-5 dimensions (huggingface/transformers, src/transformers/models/glm_moe_dsa/modular_glm_moe_dsa.py,
// GlmMoeDsaConfig defaults): hidden 6144, 78 layers, 64 heads, q_lora 2048, kv_lora 512, rope 64,
// nope 192, v 256, 256 experts top-8, moe_intermediate 2048, 1 shared expert, 3 dense layers with
// intermediate 12288, vocab 154880, DSA indexer 32 heads x 128, index_topk 2048.
const glmAttentionParams =
  6144 * 2048 + // q_a_proj
  2048 * 64 * (192 + 64) + // q_b_proj
  6144 * (512 + 64) + // kv_a_proj_with_mqa
  512 * 64 * (192 + 256) + // kv_b_proj
  64 * 256 * 6144 + // o_proj
  2048 * 32 * 128 + // indexer wq_b
  6144 * 128 + // indexer wk
  6144 * 32 // indexer weights_proj

// DeepSeek-V3 (deepseek-ai/DeepSeek-V3 config.json): hidden 7168, 61 layers, 128 heads, q_lora 1536,
// kv_lora 512, rope 64, nope 128, v 128, 256 experts top-8, moe_intermediate 2048, 1 shared,
// first_k_dense_replace 3, intermediate 18432, vocab 129280, FP8 weights.
const dsv3AttentionParams =
  7168 * 1536 + 1536 * 128 * (128 + 64) + 7168 * (512 + 64) + 512 * 128 * (128 + 128) + 128 * 128 * 7168

/**
 * Model presets: `glm-5.3` (= `glm-5.3-dsa`), `glm-5.3-dense`, `deepseek-v3`, `llama2-70b`,
 * `bloom-176b`.
 *
 * Sources:
 * - `glm-5.3-dense`: the GLM-5 architecture (huggingface/transformers
 *   `src/transformers/models/glm_moe_dsa/modular_glm_moe_dsa.py`, `GlmMoeDsaConfig` defaults,
 *   checkpoint zai-org/GLM-5): 78 layers, hidden 6144, MLA with a 576-byte FP8 latent cache
 *   (512 + 64), 256 routed experts top-8 of 3 x 6144 x 2048 parameters, one shared expert, 3 dense
 *   layers, FP8 weights, deployed as DP8 attention + EP8 (issue 5). Attention arithmetic:
 *   `arithmetic: "dense"` (dense MLA over every pair, the seed's worked example: issue 5's ~30 ms
 *   step at 32 x 8K), no DSA cap.
 * - `glm-5.3` (alias `glm-5.3-dsa`): the same model with DeepSeek sparse attention, as GLM-5 runs it
 *   (`arithmetic: "dsa"`, `index_topk` 2048, lightning indexer 32 heads x 128 in FP8, 132-byte
 *   FP8 index keys per token per layer): each query attends at most 2,048 keys, the indexer
 *   scores all earlier tokens.
 * - `deepseek-v3`: deepseek-ai/DeepSeek-V3 `config.json` (61 layers, hidden 7168, 128 heads, MLA,
 *   256 experts top-8, 3 dense layers, FP8), DP8 + EP8 like glm-5.3.
 * - `llama2-70b`: meta-llama/Llama-2-70b-hf `config.json` (80 layers, hidden 8192, 64 heads, 8 KV
 *   heads, intermediate 28672, vocab 32000), BF16, TP from the deployment (profiles use 2/4/8).
 * - `bloom-176b`: bigscience/bloom `config.json` (`n_layer` 70, `hidden_size` 14336, `n_head` 112,
 *   MHA with ALiBi, so no position weights; fused QKV 3h x h plus the h x h dense; MLP
 *   `dense_h_to_4h` / `dense_4h_to_h` with GELU, two matrices; `vocab_size` 250880, tied
 *   embedding; biases and norms not counted), BF16, TP8 (the splitwise profiles' degree).
 *
 * @example
 * ```ts
 * import { models } from "@loadledger/step-time"
 * const glm = models["glm-5.3"]!
 * glm.numLayers // => 78
 * glm.mlp.kind === "moe" && glm.mlp.numExperts // => 256
 * glm.attention.arithmetic // => "dsa"
 * models["glm-5.3-dense"]!.attention.arithmetic // => "dense"
 * ```
 *
 * @category presets
 * @since 0.1.0
 */
export const models: Record<string, ModelSpec> = {
  "glm-5.3-dense": {
    name: "glm-5.3-dense",
    numLayers: 78,
    hiddenSize: 6144,
    vocabSize: 154880,
    weightBytesPerParam: 1,
    activationBytes: 2,
    tp: 1,
    attention: {
      kind: "mla",
      numHeads: 64,
      kvBytesPerTokenPerLayer: 576,
      paramsPerLayer: glmAttentionParams,
      flopsPerPair: 2 * 64 * (256 + 256),
      arithmetic: "dense"
    },
    mlp: {
      kind: "moe",
      numExperts: 256,
      topK: 8,
      expertParams: 3 * 6144 * 2048,
      sharedExpertParams: 3 * 6144 * 2048,
      ep: 8,
      denseLayers: 3,
      denseParamsPerLayer: 3 * 6144 * 12288
    }
  },
  "deepseek-v3": {
    name: "deepseek-v3",
    numLayers: 61,
    hiddenSize: 7168,
    vocabSize: 129280,
    weightBytesPerParam: 1,
    activationBytes: 2,
    tp: 1,
    attention: {
      kind: "mla",
      numHeads: 128,
      kvBytesPerTokenPerLayer: 576,
      paramsPerLayer: dsv3AttentionParams,
      flopsPerPair: 2 * 128 * (192 + 128)
    },
    mlp: {
      kind: "moe",
      numExperts: 256,
      topK: 8,
      expertParams: 3 * 7168 * 2048,
      sharedExpertParams: 3 * 7168 * 2048,
      ep: 8,
      denseLayers: 3,
      denseParamsPerLayer: 3 * 7168 * 18432
    }
  },
  "llama2-70b": {
    name: "llama2-70b",
    numLayers: 80,
    hiddenSize: 8192,
    vocabSize: 32000,
    weightBytesPerParam: 2,
    activationBytes: 2,
    tp: 1,
    attention: {
      kind: "gqa",
      numHeads: 64,
      kvHeads: 8,
      kvBytesPerTokenPerLayer: 2 * 8 * 128 * 2,
      paramsPerLayer: 8192 * 8192 * 2 + 8192 * 1024 * 2,
      flopsPerPair: 2 * 64 * (128 + 128)
    },
    mlp: { kind: "dense", paramsPerLayer: 3 * 8192 * 28672 }
  },
  "bloom-176b": {
    name: "bloom-176b",
    numLayers: 70,
    hiddenSize: 14336,
    vocabSize: 250880,
    weightBytesPerParam: 2,
    activationBytes: 2,
    tp: 8,
    attention: {
      kind: "mha",
      numHeads: 112,
      kvHeads: 112,
      kvBytesPerTokenPerLayer: 2 * 14336 * 2,
      paramsPerLayer: 4 * 14336 * 14336,
      flopsPerPair: 2 * 112 * (128 + 128)
    },
    mlp: { kind: "dense", paramsPerLayer: 2 * 14336 * 4 * 14336 }
  }
}

models["glm-5.3"] = {
  ...models["glm-5.3-dense"]!,
  name: "glm-5.3",
  attention: {
    ...models["glm-5.3-dense"]!.attention,
    sparseTopK: 2048,
    arithmetic: "dsa",
    indexer: { heads: 32, headDim: 128, bytesPerElement: 1, keyBytesPerTokenPerLayer: 132 }
  }
}
models["glm-5.3-dsa"] = { ...models["glm-5.3"]!, name: "glm-5.3-dsa" }
