/**
 * The step-time model's input and result types ({@link stepTime}, {@link stepTimeFromAggregates}):
 * a leaf module below `StepTime.ts` and its core (`internal/stepCore.ts`); `StepTime.ts`
 * re-exports every one.
 *
 * @since 0.7.0
 */
import type { Efficiencies } from "./Efficiencies.js"
import type { ExpertRouting } from "./ExpertRouting.js"
import type { GpuSpec } from "./Hardware.js"
import type { ModelSpec } from "./Model.js"

/**
 * What {@link stepTime} runs on: a model, a GPU, and optional overrides of
 * {@link defaultEfficiencies} (for example the output of {@link fit}).
 *
 * `experts` (since 0.7.0; MoE models only): a skewed expert routing ({@link expertRouting}, e.g.
 * from {@link expertRoutingFor}). Absent, every EP rank gets an equal share of the token-expert
 * pairs (the model's default). Present, each EP rank's MoE layer is a roofline over the experts it
 * touches and the pairs it computes, the hottest sets the step, and each DP rank waits for it
 * (its `syncWaitSeconds` includes `moeWaitSeconds`: EP rank r on the GPUs of DP rank
 * `floor(r x dp / ep)`); under `collective: "all-to-all"` the hottest EP rank's incoming copies
 * may bound the dispatch and combine.
 *
 * @category models
 * @since 0.1.0
 */
export interface StepTimeConfig {
  readonly model: ModelSpec
  readonly gpu: GpuSpec
  readonly params?: Partial<Efficiencies> | undefined
  readonly experts?: ExpertRouting | undefined
  readonly deepEp?: DeepEpConfig | undefined
}

/**
 * DeepEP's mode for the MoE dispatch / combine (since 0.7.0; MoE models only), SGLang's
 * `--deepep-mode` (sgl-project/sglang `python/sglang/srt/layers/moe/token_dispatcher/deepep.py`
 * @ 454e84da: `normal`, `low_latency`, `auto` = low-latency for decode batches, normal for
 * prefill). `normal`: the model's own MoE rules (the hottest EP rank sets the layer under
 * `experts`). `low_latency`: DeepEP's fixed-shape layout (deepseek-ai/DeepEP `deep_ep/buffer.py`
 * @ dcfd9548, `low_latency_dispatch`: every rank sends into a buffer of
 * `numMaxDispatchTokensPerRank` tokens per source rank, whatever it holds) modelled as every EP
 * rank computing and exchanging the pairs of a full buffer at the balanced share,
 * `dp x tp x max(numMaxDispatchTokensPerRank, tokens per GPU) x topK / ep`, reading all its
 * local experts: the step no longer moves with the routing skew and no rank waits for a hot EP
 * rank (`moeWaitSeconds` 0), paid for with the buffer's compute when the batch is smaller.
 * `numMaxDispatchTokensPerRank` (default 128, SGLang's
 * `SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK`): tokens per GPU.
 *
 * @category models
 * @since 0.7.0
 */
export interface DeepEpConfig {
  readonly mode: "normal" | "low_latency" | "auto"
  readonly numMaxDispatchTokensPerRank?: number | undefined
}

/**
 * One rank's share of a step. Per step (summed over layers) unless the name says `PerLayer`.
 *
 * - `attentionPairs`, `imbalancePairs` (max over ranks - own): per layer, pairs.
 * - `kvBytesRead`: KV-cache bytes read over all layers (`kvReadPairs x bytes/token/layer x layers`).
 * - `tokens`: queries this step; `imbalanceTokens`: max - own.
 * - `localSeconds`: this rank's local attention time over all layers.
 * - `syncWaitSeconds`: time spent waiting at the per-layer collectives for the slowest rank
 *   (sum over layers of max local - own local; with `StepTimeConfig.experts`, plus `moeWaitSeconds`).
 * - `moeWaitSeconds` (with `StepTimeConfig.experts` only): time its GPUs wait for the hottest EP
 *   rank's expert GEMMs, over all MoE layers (0 on the rank holding the hottest experts).
 * - `idle`: the rank had no request and ran a 0-token idle batch.
 *
 * @category models
 * @since 0.1.0
 */
export interface RankStepTime {
  readonly dpRank: number
  readonly attentionPairs: number
  readonly kvReadPairs: number
  readonly kvBytesRead: number
  readonly tokens: number
  readonly numRequests: number
  readonly localSeconds: number
  readonly localSecondsPerLayer: number
  readonly syncWaitSeconds: number
  readonly imbalancePairs: number
  readonly imbalancePairsPerStep: number
  readonly imbalanceTokens: number
  readonly idle: boolean
  readonly moeWaitSeconds?: number | undefined
}

/**
 * The modelled step, in seconds.
 *
 * `stepSeconds = layers x (max local + collectives) + MLP + LM head + fixed + per-request
 * (+ eager)`.
 * `moeSeconds`: MLP over all layers (MoE and leading dense layers), from the global token count
 * `moeTokens` (idle ranks add 0 tokens). `commSeconds`: collectives over all layers.
 * `tokenImbalanceRatio` / `pairsImbalanceRatio`: max over mean (1.0 balanced, the number of
 * ranks when one rank has all the work; 1.0 when no rank has work). `cudaGraph` is false when the
 * step ran eagerly. `hottestEpShare` (with `StepTimeConfig.experts` only): the hottest EP rank's
 * share of the token-expert pairs (1 / ep when balanced). `deepEpMode` (with `StepTimeConfig.deepEp`
 * only): the mode the step ran in (`auto` resolved: `low_latency` for a decode-only step).
 *
 * @example
 * ```ts
 * import { gpus, models, stepTime } from "@loadledger/step-time"
 * const r = stepTime({ model: models["glm-5.3"]!, gpu: gpus["h200"]! }, [{ decode: [100], extend: [] }, { decode: [], extend: [] }])
 * r.tokenImbalanceRatio // => 2
 * r.idleRanks // => 1
 * r.cudaGraph // => true
 * r.moeTokens // => 1
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface StepTimeResult {
  readonly stepSeconds: number
  readonly moeSeconds: number
  readonly commSeconds: number
  readonly attentionSeconds: number
  readonly lmHeadSeconds: number
  readonly overheadSeconds: number
  readonly moeTokens: number
  readonly tokenImbalanceRatio: number
  readonly pairsImbalanceRatio: number
  readonly cudaGraph: boolean
  readonly idleRanks: number
  readonly hottestEpShare?: number | undefined
  readonly deepEpMode?: "normal" | "low_latency" | undefined
  readonly ranks: ReadonlyArray<RankStepTime>
}
