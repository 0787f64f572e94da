/**
 * The simulator's link to @loadledger/step-time: a `StepModel` from a model + GPU preset, and a KV
 * pool size derived from the same presets.
 *
 * @since 0.1.0
 */
import type { GpuSpec, ModelSpec, StepCostFromAggregates, StepTimeConfig } from "@loadledger/step-time/core"
import { kvBytesPerTokenPerGpu, stepCostFromAggregates, weightBytesPerGpu } from "@loadledger/step-time/core"
import type { StepCost, StepModel } from "./StepModel.js"

/** A step's cost from the lean step-time result; `ranks` is built only when read. */
class ModelStepCost implements StepCost {
  readonly stepSeconds: number
  readonly tokenImbalanceRatio: number
  readonly syncWaitSeconds: ReadonlyArray<number>
  readonly commSeconds: number
  constructor(c: StepCostFromAggregates) {
    this.stepSeconds = c.stepSeconds
    this.tokenImbalanceRatio = c.tokenImbalanceRatio
    this.syncWaitSeconds = c.syncWaitSeconds
    this.commSeconds = c.commSeconds
  }
  get ranks(): ReadonlyArray<{ readonly syncWaitSeconds: number }> {
    return this.syncWaitSeconds.map((syncWaitSeconds) => ({ syncWaitSeconds }))
  }
}

/**
 * A `StepModel` that charges each step with the rules of `stepTimeFromAggregates` (per-rank local
 * attention, MoE from the global token count, per-layer collectives, sync wait for the slowest
 * rank), through its lean form `stepCostFromAggregates` (the same figures, without the per-rank
 * breakdown the simulator does not read: on the built packages it cut a step's allocations from
 * about 2.4 KB to about 0.5 KB and made the Azure-conversation cells of the default sweep behind
 * one SGLang controller about 15% faster in CPU time). The cost's `ranks` is built when read.
 *
 * **When to use**: always, unless a test needs a hand-made cost.
 *
 * Attention arithmetic comes from the model: the `glm-5.3` preset (the simulator's and CLI's
 * default; alias `glm-5.3-dsa`) uses `arithmetic: "dsa"` (DeepSeek sparse attention, as GLM-5
 * runs: at most 2,048 keys per query plus the FP8 lightning indexer); `glm-5.3-dense` keeps
 * `"dense"` (dense MLA FLOPs over every pair, the seed's worked example, reproduced below). Pass the model's `attention.sparseTopK` as
 * `SimConfig.sparseTopK` so the ranks count the capped pairs.
 *
 * @example
 * ```ts
 * import { stepModelFor } from "@loadledger/sim"
 * import { gpus, models } from "@loadledger/step-time"
 * models["glm-5.3-dense"]!.attention.arithmetic // => "dense"
 * const m = stepModelFor({ model: models["glm-5.3-dense"]!, gpu: gpus["h200"]! })
 * const w = { attentionPairs: 32768, tokens: 4, numDecodes: 4, extendTokens: 0, numRequests: 4, numExtends: 0 }
 * const cost = m(Array(8).fill(w))
 * // issue 5: a batch of 32 requests with 8K contexts on glm-5.3 / h200 takes about 30 ms
 * cost.stepSeconds > 0.03 * 0.85 && cost.stepSeconds < 0.03 * 1.15 // => true
 * cost.ranks.length // => 8
 * ```
 *
 * @category step time
 * @since 0.1.0
 */
export const stepModelFor =
  (config: StepTimeConfig): StepModel =>
  (ranks) =>
    new ModelStepCost(stepCostFromAggregates(config, ranks))

/**
 * KV pool per rank in tokens: what one GPU may use (`hbmBytes x memFraction`) less the weights it
 * holds, over the KV bytes it stores per token:
 * `floor((hbmBytes x memFraction - weightBytesPerGpu(model)) / kvBytesPerTokenPerGpu(model))`,
 * never below 0. A DP rank runs on a tensor-parallel group of `model.tp` GPUs, and every GPU of it
 * holds the same number of tokens (its share of each token's KV), so this per-GPU count is the
 * rank's pool.
 *
 * The tensor-parallel rule (both functions are in @loadledger/step-time; sources, read on main in
 * 2025-2026, no code copied: vllm-project/vllm `vllm/config/model.py` `ModelConfig.get_num_kv_heads`
 * and the layers' `get_kv_cache_spec`, a `FullAttentionSpec` of that many heads per GPU or an
 * `MLAAttentionSpec` of one head of `kv_lora_rank + qk_rope_head_dim` (`vllm/v1/kv_cache_interface.py`);
 * sgl-project/sglang `python/sglang/srt/configs/model_config.py` `ModelConfig.get_num_kv_heads`):
 * - weights: each GPU holds 1/TP of the attention projections, dense MLPs, shared experts and the
 *   vocab-parallel embedding and LM head; routed experts are spread over `max(ep, tp)` GPUs.
 * - KV: MHA / GQA heads are split over the TP ranks, `max(1, floor(kvHeads / tp))` per GPU (with
 *   more ranks than KV heads the heads are replicated: one per GPU); an MLA latent cache
 *   (DeepSeek, GLM-5) and a DSA indexer key are not split: every rank holds them whole.
 *
 * `memFraction` defaults to 0.88, a typical SGLang `--mem-fraction-static` (an assumption, not read
 * from a release).
 *
 * @example
 * ```ts
 * import { kvPoolTokensFor } from "@loadledger/sim"
 * import { gpus, models, withTp } from "@loadledger/step-time"
 * const tokens = kvPoolTokensFor(models["glm-5.3-dense"]!, gpus["h200"]!)
 * tokens > 100_000 // => true
 * // HBM for 1,000 more tokens of KV (576 bytes per token per layer, 78 layers; memFraction 0.88)
 * const extraBytes = (576 * 78 * 1000) / 0.88
 * const bigger = kvPoolTokensFor(models["glm-5.3-dense"]!, { ...gpus["h200"]!, hbmBytes: gpus["h200"]!.hbmBytes + extraBytes })
 * Math.abs(bigger - tokens - 1000) <= 1 // => true
 * // bloom-176b's preset runs at TP 8: each GPU holds 14 of its 112 KV heads
 * kvPoolTokensFor(models["bloom-176b"]!, gpus["a100-80gb"]!) // => 50_706
 * // llama2-70b's 138 GB of BF16 weights leave no room on one a100-80gb; at TP 8 one KV head per GPU
 * kvPoolTokensFor(models["llama2-70b"]!, gpus["a100-80gb"]!) // => 0
 * kvPoolTokensFor(withTp(models["llama2-70b"]!, 8), gpus["a100-80gb"]!) // => 1_297_758
 * // MLA at TP 1 (the compare default, glm-5.3 on h200): the whole latent and index key per token
 * kvPoolTokensFor(models["glm-5.3"]!, gpus["h200"]!) // => 227_501
 * ```
 *
 * @category step time
 * @since 0.1.0
 */
export const kvPoolTokensFor = (model: ModelSpec, gpu: GpuSpec, memFraction = 0.88): number =>
  Math.max(
    0,
    Math.floor((gpu.hbmBytes * memFraction - weightBytesPerGpu(model)) / kvBytesPerTokenPerGpu(model))
  )

/**
 * Why a model leaves no KV pool on a GPU (`kvPoolTokensFor` is 0): the weights one GPU holds
 * (`weightBytesPerGpu`), the bytes it may use (`usableBytes`: `hbmBytes x memFraction`), and the
 * smallest tensor-parallel size that would leave room (`fitsAt`), absent when none would.
 *
 * @category step time
 * @since 0.4.0
 */
export interface NoKvPool {
  readonly _tag: "NoKvPool"
  readonly field: "kvPoolTokens"
  readonly message: string
  readonly weightBytesPerGpu: number
  readonly usableBytes: number
  readonly fitsAt?: { readonly tp: number; readonly kvPoolTokens: number } | undefined
}

/** The tensor-parallel sizes `checkKvPool` tries: one node's NVLink domain, where the step time prices TP. */
const TP_SIZES = [1, 2, 4, 8] as const

/** A TP size the engines accept: it divides the attention heads, and divides or is a multiple of the KV heads. */
const acceptsTp = (model: ModelSpec, tp: number): boolean => {
  const a = model.attention
  if (a.numHeads % tp !== 0) return false
  if (a.kind === "mla") return true
  const kvHeads = a.kvHeads ?? a.numHeads
  return kvHeads % tp === 0 || tp % kvHeads === 0
}

const gb = (bytes: number): string => (bytes / 1e9).toFixed(1)

/**
 * `undefined` when `model` at its tensor-parallel size (`model.tp`) leaves a KV pool on `gpu`
 * (`kvPoolTokensFor` > 0), else a {@link NoKvPool} saying why: how much of the GPU the weights
 * take, and the smallest larger TP size (2, 4 or 8, one the engines accept for the model's heads)
 * with room for a pool and the pool it gives. TP does not shrink an MoE layer's routed experts
 * below its `ep` share, so an MoE model may fit at no TP size.
 *
 * **When to use**: before simulating a model preset on a GPU preset, to tell the user what would
 * fit instead of simulating a pool of 0 tokens (every request rejected).
 *
 * @example
 * ```ts
 * import { checkKvPool } from "@loadledger/sim"
 * import { gpus, models } from "@loadledger/step-time"
 * checkKvPool(models["glm-5.3"]!, gpus["h200"]!) // => undefined
 * const e = checkKvPool(models["llama2-70b"]!, gpus["a100-80gb"]!)
 * e?.fitsAt // => { tp: 2, kvPoolTokens: 8695 }
 * e?.message
 * // => "llama2-70b does not fit on one a100-80gb at tensor parallel 1: its weights take 138.0 GB per GPU of the 70.4 GB it may use (88% of 80.0 GB), no room for a KV pool; at tensor parallel 2 each GPU would hold 8,695 tokens"
 * checkKvPool(models["glm-5.3"]!, gpus["a100-80gb"]!)?.fitsAt // => undefined
 * ```
 *
 * @category step time
 * @since 0.4.0
 */
export const checkKvPool = (model: ModelSpec, gpu: GpuSpec, memFraction = 0.88): NoKvPool | undefined => {
  if (kvPoolTokensFor(model, gpu, memFraction) > 0) return undefined
  const weights = weightBytesPerGpu(model)
  const usableBytes = gpu.hbmBytes * memFraction
  let fitsAt: NoKvPool["fitsAt"]
  for (const tp of TP_SIZES) {
    if (tp <= model.tp || !acceptsTp(model, tp)) continue
    const kvPoolTokens = kvPoolTokensFor({ ...model, tp }, gpu, memFraction)
    if (kvPoolTokens > 0) {
      fitsAt = { tp, kvPoolTokens }
      break
    }
  }
  const instead =
    fitsAt === undefined
      ? `no tensor-parallel size up to ${TP_SIZES.at(-1)} leaves room`
      : `at tensor parallel ${fitsAt.tp} each GPU would hold ${fitsAt.kvPoolTokens.toLocaleString("en-US")} tokens`
  return {
    _tag: "NoKvPool",
    field: "kvPoolTokens",
    message: `${model.name} does not fit on one ${gpu.name} at tensor parallel ${model.tp}: its weights take ${gb(weights)} GB per GPU of the ${gb(usableBytes)} GB it may use (${Math.round(memFraction * 100)}% of ${gb(gpu.hbmBytes)} GB), no room for a KV pool; ${instead}`,
    weightBytesPerGpu: weights,
    usableBytes,
    fitsAt
  }
}

/**
 * The model-derived fields of a `SimConfig` for a model on a GPU, from one place: `stepModel`
 * (`stepModelFor`), `kvPoolTokens` (`kvPoolTokensFor`, with `memFraction`) and `sparseTopK` (the
 * model's sparse-attention cap, `model.attention.sparseTopK`, absent for dense attention). Set
 * by hand, `sparseTopK` is easy to leave out, and the run then silently prices a sparse model's
 * decode as dense attention (GLM-5.3 on H200, Mooncake conversation at 0.1x, first 500 requests:
 * `vllm-kv-pressure` TTFT p99 13.26 s instead of 12.90 s). Spread it into a config:
 * `{ dpSize: 8, ...modelSimConfig(model, gpu) }`.
 *
 * @example
 * ```ts
 * import { modelSimConfig } from "@loadledger/sim"
 * import { gpus, models } from "@loadledger/step-time"
 * const m = modelSimConfig(models["glm-5.3"]!, gpus["h200"]!)
 * m.sparseTopK // => 2048
 * m.kvPoolTokens > 100_000 // => true
 * modelSimConfig(models["glm-5.3-dense"]!, gpus["h200"]!).sparseTopK // => undefined
 * ```
 *
 * @category step time
 * @since 0.4.0
 */
export const modelSimConfig = (
  model: ModelSpec,
  gpu: GpuSpec,
  memFraction = 0.88
): {
  readonly stepModel: StepModel
  readonly kvPoolTokens: number
  readonly sparseTopK: number | undefined
} => ({
  stepModel: stepModelFor({ model, gpu }),
  kvPoolTokens: kvPoolTokensFor(model, gpu, memFraction),
  sparseTopK: model.attention.sparseTopK
})
