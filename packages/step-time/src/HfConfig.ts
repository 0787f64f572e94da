/**
 * Model specs from Hugging Face `config.json` files (Llama/Mistral/Qwen-style GQA, DeepSeek/GLM
 * MLA with mixture of experts).
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaParser from "effect/SchemaParser"
import type { ModelSpec } from "./Model.js"
import type { ModelSpecError } from "./ModelJson.js"

const Pos = Schema.Int.check(Schema.isGreaterThan(0))
const NonNeg = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

const HfConfig = Schema.Struct({
  hidden_size: Pos,
  num_hidden_layers: Pos,
  num_attention_heads: Pos,
  vocab_size: Pos,
  intermediate_size: Schema.optional(Pos),
  num_key_value_heads: Schema.optional(Pos),
  head_dim: Schema.optional(Pos),
  hidden_act: Schema.optional(Schema.String),
  // MLA
  kv_lora_rank: Schema.optional(Pos),
  q_lora_rank: Schema.optional(Schema.NullOr(Pos)),
  qk_rope_head_dim: Schema.optional(Pos),
  qk_nope_head_dim: Schema.optional(Pos),
  v_head_dim: Schema.optional(Pos),
  // DSA indexer
  index_topk: Schema.optional(Pos),
  index_n_heads: Schema.optional(Pos),
  index_head_dim: Schema.optional(Pos),
  // MoE
  n_routed_experts: Schema.optional(Schema.NullOr(Pos)),
  num_experts: Schema.optional(Pos),
  num_local_experts: Schema.optional(Pos),
  num_experts_per_tok: Schema.optional(Pos),
  moe_intermediate_size: Schema.optional(Pos),
  n_shared_experts: Schema.optional(Schema.NullOr(NonNeg)),
  shared_expert_intermediate_size: Schema.optional(NonNeg),
  first_k_dense_replace: Schema.optional(NonNeg)
})

const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()
const fail = (path: string, message: string): Result.Result<never, ModelSpecError> =>
  Result.fail({ _tag: "ModelSpecError", path, message })

/**
 * Build a {@link ModelSpec} from a Hugging Face `config.json` (parsed).
 *
 * **When to use**: to model a checkpoint that has no preset without computing parameter counts by
 * hand. Counts projection weights from the config's dimensions: GQA (`num_key_value_heads`,
 * `head_dim`) or MLA (`kv_lora_rank`, `q_lora_rank`, `qk_rope_head_dim`, `qk_nope_head_dim`,
 * `v_head_dim`, plus the DSA indexer when `index_topk` is present); SwiGLU MLPs (3 matrices; 2
 * for GELU); MoE from `n_routed_experts` / `num_experts` / `num_local_experts`,
 * `num_experts_per_tok`, `moe_intermediate_size`, shared experts and `first_k_dense_replace`.
 * Deployment facts the config does not hold come from `options`: `weightBytesPerParam` (1 FP8,
 * 2 BF16), `kvCacheBytesPerElement` (default 2; 1 for an FP8 KV cache, which gives MLA's 576 B),
 * `tp` (default 1), `ep` (default 8 for MoE), `sparseAttention` (default false: a config with
 * a DSA indexer gets `arithmetic: "dense"`; true: `arithmetic: "dsa"` with the `index_topk` cap on
 * attended keys and the FP8 lightning indexer from `index_n_heads` / `index_head_dim`, whose
 * cost {@link stepTime} charges). Fails with the first missing or bad field; never throws.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { modelFromHfConfig } from "@loadledger/step-time"
 * const llama = { hidden_size: 8192, num_hidden_layers: 80, num_attention_heads: 64, num_key_value_heads: 8,
 *   intermediate_size: 28672, vocab_size: 32000, hidden_act: "silu" }
 * const r = modelFromHfConfig(llama, { name: "llama2-70b", weightBytesPerParam: 2 })
 * Result.isSuccess(r) && r.success.attention.kvBytesPerTokenPerLayer // => 4096
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const modelFromHfConfig = (
  u: unknown,
  options: {
    readonly name: string
    readonly weightBytesPerParam: number
    readonly kvCacheBytesPerElement?: number | undefined
    readonly tp?: number | undefined
    readonly ep?: number | undefined
    readonly sparseAttention?: boolean | undefined
  }
): Result.Result<ModelSpec, ModelSpecError> => {
  const r = SchemaParser.decodeUnknownResult(HfConfig)(u)
  if (Result.isFailure(r)) {
    const first = formatIssue(r.failure).issues[0]
    const path = (first?.path ?? [])
      .map((p) => (typeof p === "object" && p !== null && "key" in p ? String(p.key) : String(p)))
      .join(".")
    return fail(path, first?.message ?? "invalid config")
  }
  const c = r.success
  const h = c.hidden_size
  const heads = c.num_attention_heads
  const kvElem = options.kvCacheBytesPerElement ?? 2
  let attention: ModelSpec["attention"]
  if (c.kv_lora_rank !== undefined) {
    const rope = c.qk_rope_head_dim
    const nope = c.qk_nope_head_dim
    const v = c.v_head_dim
    if (rope === undefined) return fail("qk_rope_head_dim", "MLA needs qk_rope_head_dim")
    if (nope === undefined) return fail("qk_nope_head_dim", "MLA needs qk_nope_head_dim")
    if (v === undefined) return fail("v_head_dim", "MLA needs v_head_dim")
    const qk = nope + rope
    const qLora = c.q_lora_rank ?? undefined
    const q = qLora === undefined ? h * heads * qk : h * qLora + qLora * heads * qk
    const indexer =
      c.index_topk !== undefined && c.index_n_heads !== undefined && c.index_head_dim !== undefined
        ? (qLora ?? h) * c.index_n_heads * c.index_head_dim + h * c.index_head_dim + h * c.index_n_heads
        : 0
    attention = {
      kind: "mla",
      numHeads: heads,
      kvBytesPerTokenPerLayer: (c.kv_lora_rank + rope) * kvElem,
      paramsPerLayer:
        q + h * (c.kv_lora_rank + rope) + c.kv_lora_rank * heads * (nope + v) + heads * v * h + indexer,
      flopsPerPair: 2 * heads * (qk + v),
      ...(c.index_topk === undefined || c.index_n_heads === undefined || c.index_head_dim === undefined
        ? {}
        : options.sparseAttention === true
          ? {
              sparseTopK: c.index_topk,
              arithmetic: "dsa" as const,
              // FP8 index keys: headDim bytes + one 4-byte scale per token (DeepSeek-V3.2 indexer)
              indexer: {
                heads: c.index_n_heads,
                headDim: c.index_head_dim,
                bytesPerElement: 1,
                keyBytesPerTokenPerLayer: c.index_head_dim + 4
              }
            }
          : { arithmetic: "dense" as const })
    }
  } else {
    const kvHeads = c.num_key_value_heads ?? heads
    const hd = c.head_dim ?? h / heads
    attention = {
      kind: kvHeads === heads ? "mha" : "gqa",
      numHeads: heads,
      kvHeads,
      kvBytesPerTokenPerLayer: 2 * kvHeads * hd * kvElem,
      paramsPerLayer: 2 * h * heads * hd + 2 * h * kvHeads * hd,
      flopsPerPair: 2 * heads * 2 * hd
    }
  }
  const mats = c.hidden_act?.startsWith("gelu") ? 2 : 3
  const experts = c.n_routed_experts ?? c.num_experts ?? c.num_local_experts
  let mlp: ModelSpec["mlp"]
  if (experts !== undefined && experts !== null) {
    if (c.num_experts_per_tok === undefined)
      return fail("num_experts_per_tok", "MoE needs num_experts_per_tok")
    if (c.moe_intermediate_size === undefined && c.intermediate_size === undefined)
      return fail("moe_intermediate_size", "MoE needs moe_intermediate_size")
    const inter = c.moe_intermediate_size ?? c.intermediate_size!
    const shared =
      c.shared_expert_intermediate_size !== undefined
        ? mats * h * c.shared_expert_intermediate_size
        : (c.n_shared_experts ?? 0) * mats * h * inter
    const ep = options.ep ?? Math.min(8, experts)
    if (experts % ep !== 0) return fail("ep", "the expert count is not divisible by ep")
    mlp = {
      kind: "moe",
      numExperts: experts,
      topK: c.num_experts_per_tok,
      expertParams: mats * h * inter,
      sharedExpertParams: shared,
      ep,
      denseLayers: c.first_k_dense_replace ?? 0,
      denseParamsPerLayer: mats * h * (c.intermediate_size ?? inter)
    }
  } else {
    if (c.intermediate_size === undefined)
      return fail("intermediate_size", "a dense model needs intermediate_size")
    mlp = { kind: "dense", paramsPerLayer: mats * h * c.intermediate_size }
  }
  return Result.succeed({
    name: options.name,
    numLayers: c.num_hidden_layers,
    hiddenSize: h,
    vocabSize: c.vocab_size,
    weightBytesPerParam: options.weightBytesPerParam,
    activationBytes: 2,
    tp: options.tp ?? 1,
    attention,
    mlp
  })
}
