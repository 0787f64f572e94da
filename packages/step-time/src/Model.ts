/**
 * A model as the step-time model sees it: {@link ModelSpec}, the per-layer physical quantities
 * (weight bytes, KV bytes per token, FLOPs per attention pair, experts) of its attention and MLP
 * blocks, and {@link withTp}. Presets are in `ModelPresets.ts`, the JSON decoder in `ModelJson.ts`.
 *
 * @since 0.1.0
 */

/**
 * Attention block of one layer.
 *
 * - `kvBytesPerTokenPerLayer`: KV-cache bytes read per attended token per layer, whole model
 *   (MLA: 576 = 512 latent + 64 RoPE at 1 byte; GQA bf16: 2 x kvHeads x headDim x 2).
 * - `paramsPerLayer`: projection weights (q/k/v/o, MLA low-rank, DSA indexer).
 * - `flopsPerPair`: FLOPs for one (query, key) pair, all heads (2 x heads x (qkDim + vDim)).
 * - `kvHeads`: KV heads a tensor-parallel group can split (GQA/MHA); absent for MLA, whose
 *   latent cache is replicated on every TP rank.
 * - `sparseTopK`: DSA-style cap, each query reads at most this many KV tokens (`attentionPairs`
 *   stay the dense count).
 * - `arithmetic`: which attention arithmetic the compute term uses. `"dense"` (the default when
 *   absent; the seed's worked example): FLOPs over every (query, key) pair, `sparseTopK` caps KV
 *   bytes only. `"dsa"` (DeepSeek sparse attention, needs `sparseTopK` and `indexer`): FLOPs
 *   over at most `sparseTopK` keys per query, plus the lightning indexer scoring every earlier
 *   token (see {@link IndexerSpec}).
 * - `indexer`: the DSA lightning indexer's shape and precision.
 *
 * @category models
 * @since 0.1.0
 */
export interface AttentionSpec {
  readonly kind: "mla" | "gqa" | "mha"
  readonly numHeads: number
  readonly kvHeads?: number | undefined
  readonly kvBytesPerTokenPerLayer: number
  readonly paramsPerLayer: number
  readonly flopsPerPair: number
  readonly sparseTopK?: number | undefined
  readonly arithmetic?: "dense" | "dsa" | undefined
  readonly indexer?: IndexerSpec | undefined
}

/**
 * The DSA lightning indexer of one layer: `heads` index heads of `headDim` each score every
 * earlier token for every query (per pair `heads x (2 x headDim + 2)` FLOPs: a dot product per
 * head, then the weighted ReLU sum), at `bytesPerElement` precision (1 = FP8: the FLOPs run at
 * the GPU's FP8 peak); the index keys it reads take `keyBytesPerTokenPerLayer` per cached token
 * (FP8: `headDim` bytes plus a 4-byte scale).
 *
 * Source: DeepSeek-V3.2-Exp (deepseek-ai/DeepSeek-V3.2-Exp `config.json`: `index_n_heads` 64,
 * `index_head_dim` 128, `index_topk` 2048, FP8 indexer) and GLM-5 (huggingface/transformers
 * `GlmMoeDsaConfig`: `index_n_heads` 32, `index_head_dim` 128, `index_topk` 2048).
 *
 * @example
 * ```ts
 * import { models } from "@loadledger/step-time"
 * models["glm-5.3-dsa"]!.attention.indexer // => { heads: 32, headDim: 128, bytesPerElement: 1, keyBytesPerTokenPerLayer: 132 }
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export interface IndexerSpec {
  readonly heads: number
  readonly headDim: number
  readonly bytesPerElement: number
  readonly keyBytesPerTokenPerLayer: number
}

/**
 * MLP block: dense (`paramsPerLayer`) or mixture of experts. For MoE, `expertParams` is one
 * routed expert (3 x hidden x moeIntermediate for SwiGLU), `ep` the expert-parallel group size,
 * `denseLayers` the leading dense layers (each `denseParamsPerLayer`).
 *
 * @category models
 * @since 0.1.0
 */
export type MlpSpec =
  | { readonly kind: "dense"; readonly paramsPerLayer: number }
  | {
      readonly kind: "moe"
      readonly numExperts: number
      readonly topK: number
      readonly expertParams: number
      readonly sharedExpertParams: number
      readonly ep: number
      readonly denseLayers: number
      readonly denseParamsPerLayer: number
    }

/**
 * A model as the step-time roofline sees it: per-layer quantities times `numLayers`.
 *
 * **When to use**: take a preset from {@link models}, or decode your own with
 * {@link modelFromJson}. `weightBytesPerParam` is 1 for FP8 checkpoints, 2 for BF16;
 * `activationBytes` is the element size of gathered hidden states (2); `tp` is the tensor-parallel
 * size inside one DP rank (1 with DP attention).
 *
 * @example
 * ```ts
 * import { models } from "@loadledger/step-time"
 * models["glm-5.3"]!.attention.kvBytesPerTokenPerLayer // => 576
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface ModelSpec {
  readonly name: string
  readonly numLayers: number
  readonly hiddenSize: number
  readonly vocabSize: number
  readonly weightBytesPerParam: number
  readonly activationBytes: number
  readonly tp: number
  /**
   * Per-layer collectives around the MLP: `"gather"` (default: dp_gather + dp_reduce_scatter of
   * the hidden states) or `"all-to-all"` (expert-parallel dispatch + combine, e.g. DeepEP).
   */
  readonly collective?: "gather" | "all-to-all" | undefined
  readonly attention: AttentionSpec
  readonly mlp: MlpSpec
}

/**
 * A copy of `model` with another tensor-parallel size per DP rank.
 *
 * **When to use**: profiles measured at several TP sizes (splitwise: 2, 4, 8) share one preset.
 *
 * @example
 * ```ts
 * import { models, withTp } from "@loadledger/step-time"
 * withTp(models["llama2-70b"]!, 4).tp // => 4
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const withTp = (model: ModelSpec, tp: number): ModelSpec => ({ ...model, tp })

/**
 * KV heads one GPU of the model's tensor-parallel group (`model.tp`) stores per layer.
 *
 * **When to use**: to size a GPU's share of the KV cache ({@link kvBytesPerTokenPerGpu}); the
 * rule is the engines' own, so a KV pool sized with it matches what vLLM and SGLang allocate.
 *
 * The rule (vllm-project/vllm `vllm/config/model.py`, `ModelConfig.get_num_kv_heads`, and
 * sgl-project/sglang `python/sglang/srt/configs/model_config.py`, `ModelConfig.get_num_kv_heads`,
 * both read 2025-2026 main; implemented here from their description, no code copied):
 * - MHA / GQA (`kind` `"mha"` / `"gqa"`): the KV heads (`attention.kvHeads`, else `numHeads`)
 *   are split over the TP ranks, `max(1, floor(kvHeads / tp))` each: when TP exceeds the KV head
 *   count the heads are replicated, and every GPU still holds one. (The engines accept only TP
 *   sizes that divide the KV head count or are a multiple of it; for those this is
 *   `kvHeads / min(tp, kvHeads)`, the split `stepTime` charges KV reads with.)
 * - MLA (`kind` `"mla"`: DeepSeek, GLM-5): the cache is one compressed latent (plus its RoPE
 *   key) per token per layer, which every TP rank holds whole: 1, whatever `tp` (vLLM answers 1
 *   for MLA models, "when using MLA during decode it becomes MQA"; SGLang's MLA pool stores the
 *   full `kv_lora_rank + qk_rope_head_dim` per token on each rank).
 *
 * @example
 * ```ts
 * import { kvHeadsPerGpu, models, withTp } from "@loadledger/step-time"
 * kvHeadsPerGpu(models["bloom-176b"]!) // => 14
 * kvHeadsPerGpu(withTp(models["llama2-70b"]!, 4)) // => 2
 * // 8 KV heads over 16 ranks: replicated, one per GPU
 * kvHeadsPerGpu(withTp(models["llama2-70b"]!, 16)) // => 1
 * kvHeadsPerGpu(withTp(models["deepseek-v3"]!, 8)) // => 1
 * ```
 *
 * @category models
 * @since 0.4.0
 */
export const kvHeadsPerGpu = (model: ModelSpec): number => {
  const a = model.attention
  return a.kind === "mla" ? 1 : Math.max(1, Math.floor((a.kvHeads ?? a.numHeads) / model.tp))
}

/**
 * KV-cache bytes one GPU of the model's tensor-parallel group stores per token, all layers: the
 * attention cache's share (`attention.kvBytesPerTokenPerLayer` x {@link kvHeadsPerGpu} / the
 * model's KV heads; MLA: the whole latent) plus, with DeepSeek sparse attention
 * (`arithmetic: "dsa"`), the lightning indexer's key (`indexer.keyBytesPerTokenPerLayer`, one
 * head per token, held whole by every rank like the MLA latent), times `numLayers`.
 *
 * **When to use**: to turn a GPU's free memory into KV tokens (`kvPoolTokensFor` in
 * @loadledger/sim). Same sources as {@link kvHeadsPerGpu}.
 *
 * @example
 * ```ts
 * import { kvBytesPerTokenPerGpu, models, withTp } from "@loadledger/step-time"
 * // llama2-70b: 2 (K and V) x 8 KV heads x 128 x 2 bytes x 80 layers at TP 1; one head per GPU at TP 8
 * kvBytesPerTokenPerGpu(models["llama2-70b"]!) // => 327_680
 * kvBytesPerTokenPerGpu(withTp(models["llama2-70b"]!, 8)) // => 40_960
 * // glm-5.3: (576 latent + 132 index key) x 78 layers on every rank
 * kvBytesPerTokenPerGpu(withTp(models["glm-5.3"]!, 8)) // => 55_224
 * ```
 *
 * @category models
 * @since 0.4.0
 */
export const kvBytesPerTokenPerGpu = (model: ModelSpec): number => {
  const a = model.attention
  const heads = a.kind === "mla" ? 1 : (a.kvHeads ?? a.numHeads)
  const attention = (a.kvBytesPerTokenPerLayer * kvHeadsPerGpu(model)) / heads
  const indexKey = a.arithmetic === "dsa" ? (a.indexer?.keyBytesPerTokenPerLayer ?? 0) : 0
  return (attention + indexKey) * model.numLayers
}

/**
 * Weight bytes one GPU of the model's tensor-parallel group holds: the attention projections and
 * dense MLPs over `tp` (column / row parallel: each rank holds its heads' and its slice of the
 * intermediate size), an MoE layer's shared expert over `tp`, its routed experts over
 * `max(mlp.ep, tp)` (an MoE layer is spread over at least the TP group: expert parallel across it,
 * or each expert sharded like a dense MLP; SGLang's MoE EP x MoE TP = TP), and the input
 * embedding and LM head (`vocabSize x hiddenSize` each, in BF16 whatever the checkpoint's
 * precision) over `tp`: both are vocab-parallel in vLLM and SGLang (`VocabParallelEmbedding`,
 * `ParallelLMHead`). Norms and biases are not counted, and a tied embedding is counted twice.
 *
 * **When to use**: to size what is left of a GPU for the KV cache (`kvPoolTokensFor` in
 * @loadledger/sim), or to tell why a model does not fit on a GPU.
 *
 * @example
 * ```ts
 * import { models, weightBytesPerGpu, withTp } from "@loadledger/step-time"
 * const llama = models["llama2-70b"]!
 * // 80 layers x (2 x 8192^2 + 2 x 8192 x 1024 + 3 x 8192 x 28672) x 2 bytes + 2 x 32000 x 8192 x 2 bytes
 * weightBytesPerGpu(llama) // => 137_950_658_560
 * weightBytesPerGpu(withTp(llama, 8)) // => 137_950_658_560 / 8
 * ```
 *
 * @category models
 * @since 0.4.0
 */
export const weightBytesPerGpu = (model: ModelSpec): number => {
  const tp = model.tp
  const m = model.mlp
  const attention = model.numLayers * (model.attention.paramsPerLayer / tp)
  const mlp =
    m.kind === "dense"
      ? model.numLayers * (m.paramsPerLayer / tp)
      : m.denseLayers * (m.denseParamsPerLayer / tp) +
        (model.numLayers - m.denseLayers) *
          ((m.numExperts / Math.max(m.ep, tp)) * m.expertParams + m.sharedExpertParams / tp)
  // input embedding + LM head, BF16, vocab-parallel
  const embeddingBytes = (2 * model.vocabSize * model.hiddenSize * 2) / tp
  return (attention + mlp) * model.weightBytesPerParam + embeddingBytes
}
