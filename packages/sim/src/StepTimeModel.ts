/**
 * The simulator's link to @loadledger/step-time: a `StepModel` from a model + GPU preset, and a KV
 * pool size derived from the same presets.
 *
 * @since 0.1.0
 */
import type { GpuSpec, ModelSpec, StepCostFromAggregates, StepTimeConfig } from "@loadledger/step-time"
import { stepCostFromAggregates } from "@loadledger/step-time"
import type { StepCost, StepModel } from "./StepModel.js"

/** A step's cost from the lean step-time result; `ranks` is built only when read. */
class ModelStepCost implements StepCost {
  readonly stepSeconds: number
  readonly tokenImbalanceRatio: number
  readonly syncWaitSeconds: ReadonlyArray<number>
  constructor(c: StepCostFromAggregates) {
    this.stepSeconds = c.stepSeconds
    this.tokenImbalanceRatio = c.tokenImbalanceRatio
    this.syncWaitSeconds = c.syncWaitSeconds
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
 * KV pool per rank in tokens: `hbmBytes x memFraction` minus the weights one GPU holds (attention
 * and dense layers, its `numExperts / ep` routed experts and the shared expert per MoE layer, the
 * embedding and LM head), over the cache bytes per token: `kvBytesPerTokenPerLayer x numLayers`,
 * plus with DeepSeek sparse attention (`arithmetic: "dsa"`) the lightning indexer's cached index
 * key (`indexer.keyBytesPerTokenPerLayer`, 132 B for GLM-5: 128 FP8 values and a 4-byte scale)
 * per layer.
 * `memFraction` defaults to 0.88, a typical SGLang `--mem-fraction-static` (an assumption, not read from a
 * release). Never below 0.
 *
 * @example
 * ```ts
 * import { kvPoolTokensFor } from "@loadledger/sim"
 * import { gpus, models } from "@loadledger/step-time"
 * const tokens = kvPoolTokensFor(models["glm-5.3-dense"]!, gpus["h200"]!)
 * tokens > 100_000 // => true
 * // HBM for 1,000 more tokens of KV (576 bytes per token per layer, 78 layers; memFraction 0.88)
 * const extraBytes = (576 * 78 * 1000) / 0.88
 * const bigger = kvPoolTokensFor(models["glm-5.3-dense"]!, { ...gpus["h200"]!, hbmBytes: gpus["h200"]!.hbmBytes + extraBytes })
 * Math.abs(bigger - tokens - 1000) <= 1 // => true
 * ```
 *
 * @category step time
 * @since 0.1.0
 */
export const kvPoolTokensFor = (model: ModelSpec, gpu: GpuSpec, memFraction = 0.88): number => {
  const att = model.numLayers * (model.attention.paramsPerLayer / model.tp)
  const mlp =
    model.mlp.kind === "dense"
      ? model.numLayers * (model.mlp.paramsPerLayer / model.tp)
      : model.mlp.denseLayers * model.mlp.denseParamsPerLayer +
        (model.numLayers - model.mlp.denseLayers) *
          ((model.mlp.numExperts / model.mlp.ep) * model.mlp.expertParams + model.mlp.sharedExpertParams)
  const weightBytes = (att + mlp) * model.weightBytesPerParam + 2 * model.vocabSize * model.hiddenSize * 2
  const a = model.attention
  const indexKeyBytes = a.arithmetic === "dsa" ? (a.indexer?.keyBytesPerTokenPerLayer ?? 0) : 0
  const kvBytesPerToken = (a.kvBytesPerTokenPerLayer + indexKeyBytes) * model.numLayers
  return Math.max(0, Math.floor((gpu.hbmBytes * memFraction - weightBytes) / kvBytesPerToken))
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
