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
