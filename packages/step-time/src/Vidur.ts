/**
 * Calibration samples from Vidur's compute profiles (github.com/microsoft/vidur,
 * `data/profiling/compute/`): per-operator `mlp.csv` and `attention.csv`.
 *
 * @since 0.2.0
 */
import * as Result from "effect/Result"
import type { AttentionSample, CalibrationError, LayerSample } from "./Calibration.js"
import { boolean, err, number, read, resolveGpu } from "./internal/vidurCsv.js"
import { type ModelSpec, withTp } from "./Model.js"
import type { VidurOptions } from "./VidurFiles.js"

/**
 * A dense transformer as Vidur's columns describe it (full, unsharded model): GQA/MHA attention
 * with `head_dim = n_embd / n_head`, a gated (3-matrix) or plain (2-matrix) MLP, FP16 weights.
 *
 * @example
 * ```ts
 * import { vidurModel } from "@loadledger/step-time"
 * const m = vidurModel({ name: "llama2-70b", nHead: 64, nKvHead: 8, nEmbd: 8192, nExpandedEmbd: 28672, gatedMlp: true, vocabSize: 32768, numLayers: 80 })
 * m.attention.kvBytesPerTokenPerLayer // => 4096
 * m.mlp.kind === "dense" && m.mlp.paramsPerLayer // => 704643072
 * ```
 *
 * @category calibration
 * @since 0.2.0
 */
export const vidurModel = (c: {
  readonly name: string
  readonly nHead: number
  readonly nKvHead: number
  readonly nEmbd: number
  readonly nExpandedEmbd: number
  readonly gatedMlp: boolean
  readonly vocabSize?: number | undefined
  readonly numLayers?: number | undefined
}): ModelSpec => {
  const hd = c.nEmbd / c.nHead
  return {
    name: c.name,
    numLayers: c.numLayers ?? 1,
    hiddenSize: c.nEmbd,
    vocabSize: c.vocabSize ?? 32000,
    weightBytesPerParam: 2,
    activationBytes: 2,
    tp: 1,
    attention: {
      kind: c.nKvHead === c.nHead ? "mha" : "gqa",
      numHeads: c.nHead,
      kvHeads: c.nKvHead,
      kvBytesPerTokenPerLayer: 2 * c.nKvHead * hd * 2,
      paramsPerLayer: c.nEmbd * (c.nHead + 2 * c.nKvHead) * hd + c.nHead * hd * c.nEmbd,
      flopsPerPair: 2 * c.nHead * 2 * hd
    },
    mlp: { kind: "dense", paramsPerLayer: (c.gatedMlp ? 3 : 2) * c.nEmbd * c.nExpandedEmbd }
  }
}

const mlpOps = ["attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj"]
const mlpOptionalOps = ["input_layernorm", "attn_rope", "post_attention_layernorm", "mlp_act", "add"]
const mlpConfig = [
  "n_head",
  "n_kv_head",
  "n_embd",
  "n_expanded_embd",
  "use_gated_mlp",
  "num_tokens",
  "num_tensor_parallel_workers"
]

/**
 * Layer samples from a Vidur `mlp.csv`: one {@link LayerSample} per row, measured time = the sum
 * of the row's timed ops (`input_layernorm`, `attn_pre_proj`, `attn_rope`, `attn_post_proj`,
 * `post_attention_layernorm`, `mlp_up_proj`, `mlp_act`, `mlp_down_proj`, `add`; `emb` is not part
 * of a layer) at `statistic`, milliseconds to seconds. The model comes from the row's
 * `n_head, n_kv_head, n_embd, n_expanded_embd, use_gated_mlp, vocab_size` ({@link vidurModel}) at
 * TP `num_tensor_parallel_workers`; `tokens` and `batchSize` are `num_tokens`.
 *
 * **When to use**: to calibrate efficiencies on per-operator GPU profiles of many models and GPUs
 * (Vidur, MLSys 2024; MIT). Columns are found by name: extra columns are ignored, optional ops
 * absent in a file (phi-2 has no `post_attention_layernorm`) are skipped, a missing required
 * column (`time_stats.<op>.<statistic>` of the four GEMMs, or a configuration column) fails with
 * a {@link CalibrationError} naming it; a bad value names its column and row. Never throws.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { vidurMlpSamples } from "@loadledger/step-time"
 * const ops = ["attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj"]
 * const csv = ops.map((o) => `time_stats.${o}.median`).join(",") + ",n_head,n_kv_head,n_embd,n_expanded_embd,vocab_size,use_gated_mlp,num_tokens,num_tensor_parallel_workers,extra\n" +
 *   "0.1,0.1,0.5,0.3,64,8,8192,28672,32768,True,1,4,x\n"
 * const r = vidurMlpSamples(csv, { gpu: "a100", model: "llama2-70b" })
 * Result.isSuccess(r) && r.success[0]!.measuredSeconds // => 0.001
 * Result.isSuccess(r) && r.success[0]!.model.tp // => 4
 * const bad = vidurMlpSamples("num_tokens\n1\n", { gpu: "a100" })
 * Result.isFailure(bad) && bad.failure.field // => "time_stats.attn_pre_proj.median"
 * ```
 *
 * @category calibration
 * @since 0.2.0
 */
export const vidurMlpSamples = (
  csvText: string,
  options: VidurOptions
): Result.Result<ReadonlyArray<LayerSample>, CalibrationError> => {
  const stat = options.statistic ?? "median"
  const col = (op: string) => `time_stats.${op}.${stat}`
  const gpu = resolveGpu(options.gpu)
  if (Result.isFailure(gpu)) return Result.fail(gpu.failure)
  const t = read(csvText, [...mlpOps.map(col), ...mlpConfig])
  if (Result.isFailure(t)) return Result.fail(t.failure)
  const ops = [...mlpOps, ...mlpOptionalOps.filter((o) => t.success.header.includes(col(o)))]
  const out: Array<LayerSample> = []
  const models = new Map<string, ModelSpec>()
  const decodeTokens = options.decodeTokens ?? 128
  for (let i = 0; i < t.success.records.length; i++) {
    const rec = t.success.records[i]!
    const row = i + 2
    const v: Record<string, number> = {}
    for (const c of [...mlpConfig.filter((c) => c !== "use_gated_mlp"), ...ops.map(col)]) {
      const n = number(rec, c, row)
      if (Result.isFailure(n)) return Result.fail(n.failure)
      v[c] = n.success
    }
    const vocab = rec["vocab_size"] === undefined ? undefined : Number(rec["vocab_size"])
    const key = mlpConfig
      .slice(0, 5)
      .map((c) => rec[c])
      .join(",")
    let base = models.get(key)
    if (base === undefined) {
      base = vidurModel({
        name:
          options.model ??
          `vidur-${rec["n_embd"]}x${rec["n_head"]}h${rec["n_kv_head"]}kv-${rec["n_expanded_embd"]}`,
        nHead: v["n_head"]!,
        nKvHead: v["n_kv_head"]!,
        nEmbd: v["n_embd"]!,
        nExpandedEmbd: v["n_expanded_embd"]!,
        gatedMlp: boolean(rec["use_gated_mlp"]),
        vocabSize: vocab !== undefined && Number.isFinite(vocab) ? vocab : undefined
      })
      models.set(key, base)
    }
    const tp = v["num_tensor_parallel_workers"]!
    const tokens = v["num_tokens"]!
    if (!(tp >= 1) || !(tokens >= 1))
      return Result.fail(
        err(tp >= 1 ? "num_tokens" : "num_tensor_parallel_workers", "must be at least 1", row)
      )
    const ms = ops.reduce((s, o) => s + v[col(o)]!, 0)
    out.push({
      kind: "layer",
      model: withTp(base, tp),
      gpu: gpu.success,
      tokens,
      batchSize: tokens,
      phase: tokens <= decodeTokens ? "decode" : "prefill",
      group: gpu.success.name,
      source: "vidur",
      configuration: `${base.name} ${gpu.success.name} tp${tp} tokens ${tokens}`,
      measuredSeconds: ms / 1000
    })
  }
  return Result.succeed(out)
}

const attnConfig = [
  "n_embd",
  "n_q_head",
  "n_kv_head",
  "num_tensor_parallel_workers",
  "batch_size",
  "prefill_chunk_size",
  "kv_cache_size",
  "is_prefill"
]

/**
 * Attention-kernel samples from a Vidur `attention.csv` (published format: `time_stats.{
 * attn_input_reshape, attn_decode, attn_output_reshape, attn_prefill}.*` and optionally
 * `attn_kv_cache_save.*`, then `n_embd, n_q_head, n_kv_head, block_size,
 * num_tensor_parallel_workers, max_model_len, batch_size, prefill_chunk_size, kv_cache_size,
 * is_prefill, attention_backend`). A prefill row is one extend of `prefill_chunk_size` tokens
 * after `kv_cache_size` cached ones; a decode row `batch_size` decodes of `kv_cache_size`
 * context. Measured time = `attn_prefill` or `attn_decode` plus `attn_kv_cache_save` when present
 * (what Vidur adds to a layer), ms to seconds.
 *
 * **When to use**: with Vidur's attention profiles (not shipped in the shared training set),
 * beside {@link vidurMlpSamples}. Errors as in {@link vidurMlpSamples}.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { vidurAttentionSamples } from "@loadledger/step-time"
 * const csv = "time_stats.attn_prefill.median,time_stats.attn_decode.median,n_embd,n_q_head,n_kv_head,block_size,num_tensor_parallel_workers,max_model_len,batch_size,prefill_chunk_size,kv_cache_size,is_prefill,attention_backend\n" +
 *   "0,0.05,4096,32,32,16,1,4096,8,0,1024,False,AttentionBackend.FLASH_ATTENTION\n"
 * const r = vidurAttentionSamples(csv, { gpu: "a100", model: "llama2-7b" })
 * Result.isSuccess(r) && r.success[0]!.ranks[0]!.decode.length // => 8
 * ```
 *
 * @category calibration
 * @since 0.2.0
 */
export const vidurAttentionSamples = (
  csvText: string,
  options: VidurOptions
): Result.Result<ReadonlyArray<AttentionSample>, CalibrationError> => {
  const stat = options.statistic ?? "median"
  const col = (op: string) => `time_stats.${op}.${stat}`
  const gpu = resolveGpu(options.gpu)
  if (Result.isFailure(gpu)) return Result.fail(gpu.failure)
  const t = read(csvText, [col("attn_prefill"), col("attn_decode"), ...attnConfig])
  if (Result.isFailure(t)) return Result.fail(t.failure)
  const save = t.success.header.includes(col("attn_kv_cache_save")) ? [col("attn_kv_cache_save")] : []
  const out: Array<AttentionSample> = []
  for (let i = 0; i < t.success.records.length; i++) {
    const rec = t.success.records[i]!
    const row = i + 2
    const v: Record<string, number> = {}
    for (const c of [
      ...attnConfig.filter((c) => c !== "is_prefill"),
      col("attn_prefill"),
      col("attn_decode"),
      ...save
    ]) {
      const n = number(rec, c, row)
      if (Result.isFailure(n)) return Result.fail(n.failure)
      v[c] = n.success
    }
    const prefill = boolean(rec["is_prefill"])
    const base = vidurModel({
      name: options.model ?? `vidur-${rec["n_embd"]}x${rec["n_q_head"]}h${rec["n_kv_head"]}kv`,
      nHead: v["n_q_head"]!,
      nKvHead: v["n_kv_head"]!,
      nEmbd: v["n_embd"]!,
      nExpandedEmbd: 0,
      gatedMlp: true
    })
    const kv = v["kv_cache_size"]!
    const batch = v["batch_size"]!
    const chunk = v["prefill_chunk_size"]!
    const ms = v[col(prefill ? "attn_prefill" : "attn_decode")]! + (save.length > 0 ? v[save[0]!]! : 0)
    out.push({
      kind: "attention",
      model: withTp(base, v["num_tensor_parallel_workers"]!),
      gpu: gpu.success,
      ranks: [
        prefill
          ? { decode: [], extend: [{ prefix: kv, tokens: chunk }] }
          : { decode: new Array<number>(batch).fill(kv), extend: [] }
      ],
      batchSize: prefill ? 1 : batch,
      phase: prefill ? "prefill" : "decode",
      group: gpu.success.name,
      source: "vidur",
      configuration: `${base.name} ${gpu.success.name} attention ${prefill ? `chunk ${chunk}` : `batch ${batch}`} kv ${kv}`,
      measuredSeconds: ms / 1000
    })
  }
  return Result.succeed(out)
}
