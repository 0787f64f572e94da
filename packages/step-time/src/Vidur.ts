/**
 * Calibration samples from Vidur's profiles (github.com/microsoft/vidur, `data/profiling/`):
 * per-operator `mlp.csv` and `attention.csv`, network `all_reduce.csv` and `send_recv.csv`.
 *
 * @since 0.2.0
 */
import { parse } from "csv-parse/sync"
import { Result } from "effect"
import type { AttentionSample, CalibrationError, CollectiveSample, LayerSample } from "./Calibration.js"
import { type GpuSpec, gpus as gpuPresets } from "./Hardware.js"
import { type ModelSpec, withTp } from "./Model.js"

/**
 * Vidur's GPU names mapped to the {@link gpus} presets: `a100` (A100 80 GB), `h100`, `a40`;
 * network devices `a100_dgx` (8 x A100 SXM, NVSwitch) to `a100-80gb`.
 *
 * @example
 * ```ts
 * import { vidurGpus } from "@loadledger/step-time"
 * vidurGpus["a100"] // => "a100-80gb"
 * ```
 *
 * @category calibration
 * @since 0.2.0
 */
export const vidurGpus: Record<string, string> = {
  a100: "a100-80gb",
  h100: "h100-80gb",
  a40: "a40",
  a100_dgx: "a100-80gb"
}

/**
 * Options of the Vidur readers: `gpu` (a {@link GpuSpec} or preset name), `statistic` (which of
 * Vidur's `min/max/mean/median/std` columns to read; default `median`, what Vidur's own predictor
 * fits), `model` (name to give the rows, e.g. the preset the model is known by; default from the
 * file's dimensions), `decodeTokens` (layer rows of at most this many tokens are labelled
 * `decode`, one token per request; larger ones `prefill`; default 128).
 *
 * @category calibration
 * @since 0.2.0
 */
export interface VidurOptions {
  readonly gpu: GpuSpec | string
  readonly statistic?: "min" | "max" | "mean" | "median" | undefined
  readonly model?: string | undefined
  readonly decodeTokens?: number | undefined
}

type Rec = Record<string, string>
const err = (field: string, message: string, row?: number): CalibrationError => ({
  _tag: "CalibrationError",
  field,
  message,
  ...(row === undefined ? {} : { row })
})

const read = (
  csvText: string,
  required: ReadonlyArray<string>
): Result.Result<{ header: ReadonlyArray<string>; records: ReadonlyArray<Rec> }, CalibrationError> => {
  let records: Array<Rec>
  let header: Array<string> = []
  try {
    records = parse(csvText, {
      // Vidur's network files start with pandas' unnamed index column
      columns: (h: Array<string>) => {
        header = h.map((c, i) => (c === "" ? `_index${i}` : c))
        return header
      },
      skip_empty_lines: true,
      trim: true
    })
  } catch (e) {
    return Result.fail(err("csv", e instanceof Error ? e.message : String(e)))
  }
  for (const c of required) if (!header.includes(c)) return Result.fail(err(c, `missing column ${c}`, 1))
  return Result.succeed({ header, records })
}

const number = (rec: Rec, c: string, row: number): Result.Result<number, CalibrationError> => {
  const v = Number(rec[c])
  return rec[c] === undefined || rec[c] === "" || !Number.isFinite(v) || v < 0
    ? Result.fail(err(c, `${c} must be a non-negative number`, row))
    : Result.succeed(v)
}

const resolveGpu = (g: GpuSpec | string): Result.Result<GpuSpec, CalibrationError> => {
  if (typeof g !== "string") return Result.succeed(g)
  const spec = gpuPresets[vidurGpus[g] ?? g]
  return spec === undefined ? Result.fail(err("gpu", `unknown GPU ${g}`)) : Result.succeed(spec)
}

const boolean = (v: string | undefined) => v === "True" || v === "true" || v === "1"

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

/**
 * Collective samples from a Vidur network profile (`all_reduce.csv` or `send_recv.csv`): one
 * {@link CollectiveSample} per row whose GPUs all sit in one node (`num_workers ==
 * devices_per_node`; set `interNode: true` to keep the others), `bytes` = `size`, `gpus` =
 * `num_workers`, time = `time_stats.<collective>.<statistic>` in ms to seconds.
 *
 * **When to use**: to calibrate `linkEfficiency` and `collectiveLatencySeconds` on measured NCCL
 * collectives. Errors as in {@link vidurMlpSamples}; an unknown `collective` value names that
 * column.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { vidurCollectiveSamples } from "@loadledger/step-time"
 * const csv = ",time_stats.all_reduce.median,rank,num_workers,size,collective,devices_per_node,max_devices_per_node\n" +
 *   "0,0.05,0,8,1048576,all_reduce,8,8\n1,0.05,0,2,2048,all_reduce,1,8\n"
 * const r = vidurCollectiveSamples(csv, { gpu: "a100_dgx" })
 * Result.isSuccess(r) && r.success.map((s) => `${s.kind} ${s.gpus} ${s.bytes}`).join(";") // => "all-reduce 8 1048576"
 * ```
 *
 * @category calibration
 * @since 0.2.0
 */
export const vidurCollectiveSamples = (
  csvText: string,
  options: VidurOptions & { readonly interNode?: boolean | undefined }
): Result.Result<ReadonlyArray<CollectiveSample>, CalibrationError> => {
  const stat = options.statistic ?? "median"
  const gpu = resolveGpu(options.gpu)
  if (Result.isFailure(gpu)) return Result.fail(gpu.failure)
  const t = read(csvText, ["size", "num_workers", "devices_per_node", "collective"])
  if (Result.isFailure(t)) return Result.fail(t.failure)
  const out: Array<CollectiveSample> = []
  for (let i = 0; i < t.success.records.length; i++) {
    const rec = t.success.records[i]!
    const row = i + 2
    const name = rec["collective"]
    const kind = name === "all_reduce" ? "all-reduce" : name === "send_recv" ? "send-recv" : undefined
    if (kind === undefined) return Result.fail(err("collective", `unknown collective ${name}`, row))
    const timeCol = `time_stats.${name}.${stat}`
    if (!t.success.header.includes(timeCol)) return Result.fail(err(timeCol, `missing column ${timeCol}`, 1))
    const v: Record<string, number> = {}
    for (const c of ["size", "num_workers", "devices_per_node", timeCol]) {
      const n = number(rec, c, row)
      if (Result.isFailure(n)) return Result.fail(n.failure)
      v[c] = n.success
    }
    if (options.interNode !== true && v["num_workers"] !== v["devices_per_node"]) continue
    out.push({
      kind,
      gpu: gpu.success,
      gpus: v["num_workers"]!,
      bytes: v["size"]!,
      group: gpu.success.name,
      source: "vidur",
      configuration: `${name} ${v["num_workers"]} gpus ${v["size"]} B`,
      measuredSeconds: v[timeCol]! / 1000
    })
  }
  return Result.succeed(out)
}

const modelNames: Record<string, string> = {
  "meta-llama/Llama-2-70b-hf": "llama2-70b",
  "meta-llama/Llama-2-7b-hf": "llama2-7b",
  "meta-llama/Meta-Llama-3-70B": "llama3-70b",
  "meta-llama/Meta-Llama-3-8B": "llama3-8b",
  "codellama/CodeLlama-34b-Instruct-hf": "codellama-34b",
  "internlm/internlm-20b": "internlm-20b",
  "microsoft/phi-2": "phi-2"
}

/**
 * What a Vidur profile's path says: the file kind, the GPU (compute) or network device, and the
 * model (compute files), from the upstream layout `compute/<gpu>/<org>/<model>/mlp.csv`,
 * `network/<device>/all_reduce.csv` or the flattened `<gpu>_<org>_<model>_mlp.csv`,
 * `<device>_all_reduce.csv`. Known models get short names (`meta-llama/Llama-2-70b-hf` ->
 * `llama2-70b`, the preset name); others keep `org/model`. `undefined` when the name fits no
 * layout.
 *
 * @example
 * ```ts
 * import { vidurFileInfo } from "@loadledger/step-time"
 * vidurFileInfo("data/a100_meta-llama_Llama-2-70b-hf_mlp.csv") // => { kind: "mlp", gpu: "a100", model: "llama2-70b" }
 * vidurFileInfo("network/a100_dgx/all_reduce.csv") // => { kind: "all_reduce", gpu: "a100_dgx", model: undefined }
 * ```
 *
 * @category calibration
 * @since 0.2.0
 */
export const vidurFileInfo = (
  path: string
):
  | {
      readonly kind: "mlp" | "attention" | "all_reduce" | "send_recv"
      readonly gpu: string
      readonly model: string | undefined
    }
  | undefined => {
  const p = path.replaceAll("\\", "/")
  const name = (org: string, model: string) => modelNames[`${org}/${model}`] ?? `${org}/${model}`
  const up = /(?:^|\/)compute\/([^/]+)\/([^/]+)\/([^/]+)\/(mlp|attention)\.csv$/.exec(p)
  if (up !== null) return { kind: up[4] as "mlp" | "attention", gpu: up[1]!, model: name(up[2]!, up[3]!) }
  const net = /(?:^|\/)network\/([^/]+)\/(all_reduce|send_recv)\.csv$/.exec(p)
  if (net !== null) return { kind: net[2] as "all_reduce" | "send_recv", gpu: net[1]!, model: undefined }
  const base = p.slice(p.lastIndexOf("/") + 1)
  const flatNet = /^(.+?_(?:dgx|pairwise_nvlink))_(all_reduce|send_recv)\.csv$/.exec(base)
  if (flatNet !== null)
    return { kind: flatNet[2] as "all_reduce" | "send_recv", gpu: flatNet[1]!, model: undefined }
  const flat = /^([a-z0-9]+)_([^_]+)_(.+)_(mlp|attention)\.csv$/.exec(base)
  if (flat !== null)
    return { kind: flat[4] as "mlp" | "attention", gpu: flat[1]!, model: name(flat[2]!, flat[3]!) }
  return undefined
}
