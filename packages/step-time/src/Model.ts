/**
 * Model presets and JSON model specs: the per-layer physical quantities the step-time model
 * needs (weight bytes, KV bytes per token, FLOPs per attention pair, experts).
 *
 * @since 0.1.0
 */
import { Result, Schema, SchemaIssue, SchemaParser } from "effect"

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

const Positive = Schema.Finite.check(Schema.isGreaterThan(0))
const PositiveInt = Schema.Int.check(Schema.isGreaterThan(0))
const NonNegativeInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

const AttentionSchema = Schema.Struct({
  kind: Schema.Literals(["mla", "gqa", "mha"]),
  numHeads: PositiveInt,
  kvHeads: Schema.optional(PositiveInt),
  kvBytesPerTokenPerLayer: Positive,
  paramsPerLayer: Positive,
  flopsPerPair: Positive,
  sparseTopK: Schema.optional(PositiveInt),
  arithmetic: Schema.optional(Schema.Literals(["dense", "dsa"])),
  indexer: Schema.optional(
    Schema.Struct({
      heads: PositiveInt,
      headDim: PositiveInt,
      bytesPerElement: Positive,
      keyBytesPerTokenPerLayer: Positive
    })
  )
})

const MlpSchema = Schema.Union([
  Schema.Struct({ kind: Schema.Literal("dense"), paramsPerLayer: Positive }),
  Schema.Struct({
    kind: Schema.Literal("moe"),
    numExperts: PositiveInt,
    topK: PositiveInt,
    expertParams: Positive,
    sharedExpertParams: Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0)),
    ep: PositiveInt,
    denseLayers: NonNegativeInt,
    denseParamsPerLayer: Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))
  })
])

/**
 * The JSON shape of a {@link ModelSpec} (effect Schema). Field names and units as in
 * {@link ModelSpec}; `tp` defaults to 1, `activationBytes` to 2.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { ModelSpecJson, models } from "@loadledger/step-time"
 * Schema.is(ModelSpecJson)(models["llama2-70b"]) // => true
 * ```
 *
 * @category schemas
 * @since 0.1.0
 */
export const ModelSpecJson = Schema.Struct({
  name: Schema.String,
  numLayers: PositiveInt,
  hiddenSize: PositiveInt,
  vocabSize: PositiveInt,
  weightBytesPerParam: Positive,
  activationBytes: Schema.optional(Positive),
  tp: Schema.optional(PositiveInt),
  collective: Schema.optional(Schema.Literals(["gather", "all-to-all"])),
  attention: AttentionSchema,
  mlp: MlpSchema
})

/**
 * Why a JSON model spec was rejected: `path` is the JSON path of the first bad field.
 *
 * @category errors
 * @since 0.1.0
 */
export interface ModelSpecError {
  readonly _tag: "ModelSpecError"
  readonly path: string
  readonly message: string
}

const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * Decode a model spec from parsed JSON.
 *
 * **When to use**: to run the step-time model (or `loadledger step-time --model FILE`) on a model
 * that has no preset. Fails with a {@link ModelSpecError} naming the first bad field; never throws.
 * Extra checks beyond the schema: `mlp.topK <= mlp.numExperts`, `numExperts` divisible by `ep`.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { modelFromJson, models } from "@loadledger/step-time"
 * const r = modelFromJson(JSON.parse(JSON.stringify(models["llama2-70b"])))
 * Result.isSuccess(r) // => true
 * const bad = modelFromJson({ ...models["llama2-70b"], numLayers: -1 })
 * Result.isFailure(bad) && bad.failure.path // => "numLayers"
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const modelFromJson = (u: unknown): Result.Result<ModelSpec, ModelSpecError> => {
  const r = SchemaParser.decodeUnknownResult(ModelSpecJson)(u)
  if (Result.isFailure(r)) {
    const first = formatIssue(r.failure).issues[0]
    const path = (first?.path ?? [])
      .map((p) => (typeof p === "object" && p !== null && "key" in p ? String(p.key) : String(p)))
      .join(".")
    return Result.fail({ _tag: "ModelSpecError", path, message: first?.message ?? "invalid model spec" })
  }
  const v = r.success
  if (v.attention.arithmetic === "dsa") {
    if (v.attention.sparseTopK === undefined)
      return Result.fail({
        _tag: "ModelSpecError",
        path: "attention.sparseTopK",
        message: 'arithmetic "dsa" needs sparseTopK'
      })
    if (v.attention.indexer === undefined)
      return Result.fail({
        _tag: "ModelSpecError",
        path: "attention.indexer",
        message: 'arithmetic "dsa" needs indexer'
      })
  }
  if (v.mlp.kind === "moe") {
    if (v.mlp.topK > v.mlp.numExperts)
      return Result.fail({ _tag: "ModelSpecError", path: "mlp.topK", message: "topK exceeds numExperts" })
    if (v.mlp.numExperts % v.mlp.ep !== 0)
      return Result.fail({
        _tag: "ModelSpecError",
        path: "mlp.ep",
        message: "numExperts is not divisible by ep"
      })
  }
  return Result.succeed({ ...v, activationBytes: v.activationBytes ?? 2, tp: v.tp ?? 1 })
}

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
