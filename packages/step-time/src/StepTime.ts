/**
 * The lockstep DP step-time model: per-rank local attention, MoE/dense MLP from the global token
 * count, per-layer collectives, sync wait.
 *
 * Over 300 lines: one concept (the step rules, in `stepCore`), read through two results (the full
 * `stepTimeFromAggregates` and the simulator's lean `stepCostFromAggregates`) that must share
 * that one core to stay equal to the last bit; most of the length is the rules' docstrings.
 *
 * @since 0.1.0
 */
import { aggregate, extendQueryTile, type RankAggregate, type RankBatch } from "./Batch.js"
import { defaultEfficiencies, type Efficiencies } from "./Efficiencies.js"
import type { GpuSpec } from "./Hardware.js"
import type { ModelSpec } from "./Model.js"

/**
 * What {@link stepTime} runs on: a model, a GPU, and optional overrides of
 * {@link defaultEfficiencies} (for example the output of {@link fit}).
 *
 * @category models
 * @since 0.1.0
 */
export interface StepTimeConfig {
  readonly model: ModelSpec
  readonly gpu: GpuSpec
  readonly params?: Partial<Efficiencies> | undefined
}

/**
 * One rank's share of a step. Per step (summed over layers) unless the name says `PerLayer`.
 *
 * - `attentionPairs`, `imbalancePairs` (max over ranks - own): per layer, pairs.
 * - `kvBytesRead`: KV-cache bytes read over all layers (`kvReadPairs x bytes/token/layer x layers`).
 * - `tokens`: queries this step; `imbalanceTokens`: max - own.
 * - `localSeconds`: this rank's local attention time over all layers.
 * - `syncWaitSeconds`: time spent waiting at the per-layer collectives for the slowest rank
 *   (sum over layers of max local - own local).
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
 * step ran eagerly.
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
  readonly ranks: ReadonlyArray<RankStepTime>
}

// KV tokens a dense attention reads (per layer): exact when the caller passed them; else exact
// for decodes, and for extends tile-wise under the assumption of `numExtends` equal chunks (each
// query tile of `extendQueryTile` reads the prefix and the chunk up to its end once). On a rank
// with both decodes and extends the pairs cannot be split, so the prefix pairs count once per
// query (an upper bound).
const denseKvReadOf = (r: RankAggregate, exactDense: boolean): number => {
  if (r.denseKvReadPairs !== undefined) return r.denseKvReadPairs
  if (exactDense && r.kvReadPairs !== undefined) return r.kvReadPairs
  if (r.extendTokens <= 0) return r.attentionPairs
  const n = Math.max(r.numExtends ?? 1, 1)
  const e = r.extendTokens / n
  const causal = (n * e * (e + 1)) / 2
  if (r.numDecodes > 0) return Math.max(0, r.attentionPairs - causal * (1 - 1 / extendQueryTile))
  const tiles = Math.ceil(e / extendQueryTile)
  const prefixPairs = Math.max(0, r.attentionPairs - causal)
  return (tiles * prefixPairs) / e + n * ((extendQueryTile * tiles * (tiles - 1)) / 2 + e)
}
// KV tokens read when the caller did not say: the dense estimate, capped at topK per query
const kvReadOf = (r: RankAggregate, topK: number | undefined): number => {
  if (r.kvReadPairs !== undefined) return r.kvReadPairs
  const dense = denseKvReadOf(r, topK === undefined)
  return topK === undefined ? dense : Math.min(dense, r.tokens * topK)
}

// merged parameters per (immutable) params object: the hot path must not re-spread them per call
const merged = new WeakMap<Partial<Efficiencies>, Efficiencies>()
const resolveParams = (params: Partial<Efficiencies> | undefined): Efficiencies => {
  if (params === undefined) return defaultEfficiencies
  let p = merged.get(params)
  if (p === undefined) {
    p = { ...defaultEfficiencies, ...params }
    merged.set(params, p)
  }
  return p
}

const expectedDistinctLocalExperts = (numExperts: number, topK: number, ep: number, tokens: number) =>
  (numExperts / ep) * (1 - (1 - topK / numExperts) ** tokens)

/**
 * The step time from per-rank aggregates: the hot path for simulators (O(ranks), no per-layer
 * loop; layers are identical, so one layer is computed and multiplied).
 *
 * **When to use**: when you keep per-rank running sums (`attentionPairs`, `tokens`, ...) rather
 * than request lists; otherwise call {@link stepTime}.
 *
 * Rules (issue 5): a rank's local time per layer is a roofline
 * `max(bytes / (HBM x memoryEfficiency), FLOPs / (peak x computeEfficiency))` over its attention
 * weights and KV reads, plus per-request and per-layer overheads; the MLP reads the weights of the
 * expected distinct experts touched by the global token count (top-k of E over EP ranks) or the
 * dense weights; each layer has two collectives (gather + reduce-scatter under DP attention, two
 * all-reduces under plain TP, or with `model.collective: "all-to-all"` the MoE dispatch and
 * combine, whose volume is the busiest rank's tokens x top-k) costing
 * `(g - 1) x latency + bytes / link`; the step waits for the
 * slowest rank at every layer; a step pays `fixedOverheadSeconds` and `perRequestOverheadSeconds`
 * per request of the rank with the most requests (each DP rank's scheduler works in parallel). With `attention.arithmetic: "dsa"` (DeepSeek sparse attention)
 * the attention FLOPs count at most `sparseTopK` keys per query (the capped pairs: the rank's
 * `kvReadPairs`, or `min(attentionPairs, tokens x sparseTopK)` when absent) and the lightning
 * indexer adds `attentionPairs x heads x (2 x headDim + 2)` FLOPs at its precision's peak and
 * reads the index keys of every attended token once per query tile, as dense attention reads
 * KV; with `"dense"` (default) the FLOPs count every pair. A rank with no work runs a 0-token idle batch. If any rank is idle
 * in a step that contains an extend, every rank runs eagerly (no CUDA graph) and pays
 * `eagerOverheadSecondsPerLayer` (SGLang's DP-attention idle ranks run a dummy extend that
 * cannot replay a graph: sgl-project/sglang PR 33871).
 *
 * Inputs are trusted (non-negative counts); decode untrusted input with {@link ranksFromJson}.
 *
 * **Gotchas**: because of the eager rule, giving the only idle rank of an extend step some work
 * can lower the step time (the step gets its CUDA graph back). Pass `kvReadPairs` for ranks with
 * extends (see {@link aggregate}); without it the KV reads of extends are estimated.
 *
 * @example
 * ```ts
 * import { gpus, models, stepTimeFromAggregates } from "@loadledger/step-time"
 * const rank = { attentionPairs: 32768, tokens: 4, numDecodes: 4, extendTokens: 0 }
 * const r = stepTimeFromAggregates({ model: models["glm-5.3-dense"]!, gpu: gpus["h200"]! }, Array(8).fill(rank))
 * r.stepSeconds > 0.025 && r.stepSeconds < 0.035 // => true
 * ```
 *
 * @category step time
 * @since 0.1.0
 */
export const stepTimeFromAggregates = (
  config: StepTimeConfig,
  ranks: ReadonlyArray<RankAggregate>
): StepTimeResult => {
  const local = new Array<number>(ranks.length)
  const s = stepCore(config, ranks, local)
  const { model } = config
  const att = model.attention
  const L = model.numLayers
  const dp = ranks.length
  const topK = att.sparseTopK
  const { maxLocal, maxTokens, maxPairs, sumTokens, sumPairs } = s
  const out = new Array<RankStepTime>(dp)
  const kvStepFactor = att.kvBytesPerTokenPerLayer * L
  for (let i = 0; i < dp; i++) {
    const r = ranks[i]!
    const kvPairs = kvReadOf(r, topK)
    const li = local[i]!
    out[i] = {
      dpRank: i,
      attentionPairs: r.attentionPairs,
      kvReadPairs: kvPairs,
      kvBytesRead: kvPairs * kvStepFactor,
      tokens: r.tokens,
      numRequests: r.numDecodes + (r.numExtends ?? (r.extendTokens > 0 ? 1 : 0)),
      localSeconds: L * li,
      localSecondsPerLayer: li,
      syncWaitSeconds: L * (maxLocal - li),
      imbalancePairs: maxPairs - r.attentionPairs,
      imbalancePairsPerStep: L * (maxPairs - r.attentionPairs),
      imbalanceTokens: maxTokens - r.tokens,
      idle: r.tokens <= 0
    }
  }
  return {
    stepSeconds: s.stepSeconds,
    moeSeconds: s.moeSeconds,
    commSeconds: s.commSeconds,
    attentionSeconds: s.attentionSeconds,
    lmHeadSeconds: s.lmHeadSeconds,
    overheadSeconds: s.overheadSeconds,
    moeTokens: sumTokens,
    tokenImbalanceRatio: sumTokens > 0 ? (maxTokens * dp) / sumTokens : 1,
    pairsImbalanceRatio: sumPairs > 0 ? (maxPairs * dp) / sumPairs : 1,
    cudaGraph: s.cudaGraph,
    idleRanks: s.idleRanks,
    ranks: out
  }
}

/**
 * What a simulator charges a step with: the three figures of {@link stepTimeFromAggregates} it
 * reads, computed by the same code (equal to the last bit). `syncWaitSeconds[i]` is rank i's sync
 * wait over all layers (`ranks[i].syncWaitSeconds` of the full result).
 *
 * @category step time
 * @since 0.3.0
 */
export interface StepCostFromAggregates {
  readonly stepSeconds: number
  readonly tokenImbalanceRatio: number
  readonly syncWaitSeconds: ReadonlyArray<number>
}

/**
 * The step time, token imbalance and each rank's sync wait, without the rest of
 * {@link stepTimeFromAggregates}'s result: the simulator's hot path (one small object and one
 * array per step instead of a result with an object per rank). The same rules and the same
 * arithmetic, so every figure equals the full result's to the last bit.
 *
 * **When to use**: to charge many steps (a simulator's loop) when only the duration, the
 * imbalance and the sync waits are read; otherwise {@link stepTimeFromAggregates}.
 *
 * @example
 * ```ts
 * import { gpus, models, stepCostFromAggregates, stepTimeFromAggregates } from "@loadledger/step-time"
 * const config = { model: models["glm-5.3"]!, gpu: gpus["h200"]! }
 * const ranks = [
 *   { attentionPairs: 65536, tokens: 8, numDecodes: 8, extendTokens: 0 },
 *   { attentionPairs: 8192, tokens: 1, numDecodes: 1, extendTokens: 0 }
 * ]
 * const lean = stepCostFromAggregates(config, ranks)
 * const full = stepTimeFromAggregates(config, ranks)
 * lean.stepSeconds === full.stepSeconds // => true
 * lean.tokenImbalanceRatio // => 1.7777777777777777
 * lean.syncWaitSeconds[0] // => 0
 * lean.syncWaitSeconds[1] === full.ranks[1]!.syncWaitSeconds // => true
 * ```
 *
 * @category step time
 * @since 0.3.0
 */
export const stepCostFromAggregates = (
  config: StepTimeConfig,
  ranks: ReadonlyArray<RankAggregate>
): StepCostFromAggregates => {
  const dp = ranks.length
  const wait = new Array<number>(dp)
  const s = stepCore(config, ranks, wait)
  const L = config.model.numLayers
  const maxLocal = s.maxLocal
  for (let i = 0; i < dp; i++) wait[i] = L * (maxLocal - wait[i]!)
  return {
    stepSeconds: s.stepSeconds,
    tokenImbalanceRatio: s.sumTokens > 0 ? (s.maxTokens * dp) / s.sumTokens : 1,
    syncWaitSeconds: wait
  }
}

/** The scalar figures of a step, shared by the full and the lean result. */
interface StepCore
  extends Pick<
    StepTimeResult,
    "stepSeconds" | "moeSeconds" | "commSeconds" | "attentionSeconds" | "lmHeadSeconds" | "overheadSeconds"
  > {
  readonly maxLocal: number
  readonly sumTokens: number
  readonly maxTokens: number
  readonly sumPairs: number
  readonly maxPairs: number
  readonly idleRanks: number
  readonly cudaGraph: boolean
}

/** The step's rules (see {@link stepTimeFromAggregates}); writes rank i's local seconds per layer to `local[i]`. */
const stepCore = (
  config: StepTimeConfig,
  ranks: ReadonlyArray<RankAggregate>,
  local: Array<number>
): StepCore => {
  const { model, gpu } = config
  const p = resolveParams(config.params)
  const att = model.attention
  const L = model.numLayers
  const tp = model.tp
  const dp = ranks.length
  const bw = gpu.hbmBandwidthBytesPerSecond * p.memoryEfficiency
  const peak16 = gpu.peakFlopsPerSecond * p.computeEfficiency
  const peakW =
    (model.weightBytesPerParam <= 1
      ? (gpu.peakFp8FlopsPerSecond ?? 2 * gpu.peakFlopsPerSecond)
      : gpu.peakFlopsPerSecond) * p.computeEfficiency
  const kvShards = att.kind === "mla" ? 1 : Math.min(tp, att.kvHeads ?? att.numHeads)
  const attnWeightBytes = (att.paramsPerLayer * model.weightBytesPerParam) / tp
  const topK = att.sparseTopK
  const dsa = att.arithmetic === "dsa" && topK !== undefined ? att.indexer : undefined
  const peakIndexer =
    dsa === undefined
      ? peak16
      : (dsa.bytesPerElement <= 1
          ? (gpu.peakFp8FlopsPerSecond ?? 2 * gpu.peakFlopsPerSecond)
          : gpu.peakFlopsPerSecond) * p.computeEfficiency
  const indexerFlopsPerPair = dsa === undefined ? 0 : dsa.heads * (2 * dsa.headDim + 2)
  const lmHeadBytes = (model.vocabSize * model.hiddenSize * model.activationBytes) / tp

  // pass 1: local times, totals
  let maxLocal = 0
  let sumTokens = 0
  let maxTokens = 0
  let sumPairs = 0
  let maxPairs = 0
  let idleRanks = 0
  let maxRequests = 0
  let anyExtend = false
  let lmHead = 0
  for (let i = 0; i < dp; i++) {
    const r = ranks[i]!
    const numReq = r.numDecodes + (r.numExtends ?? (r.extendTokens > 0 ? 1 : 0))
    if (numReq > maxRequests) maxRequests = numReq
    let t = p.perLayerOverheadSeconds
    if (r.tokens <= 0) idleRanks++
    else {
      const kvPairs = kvReadOf(r, topK)
      let memBytes = attnWeightBytes + (kvPairs * att.kvBytesPerTokenPerLayer) / kvShards
      let comp = (2 * r.tokens * att.paramsPerLayer) / tp / peakW
      if (dsa === undefined) comp += (r.attentionPairs * att.flopsPerPair) / tp / peak16
      else {
        // capped pairs attend, the indexer scores every pair and reads every index key
        comp +=
          (kvPairs * att.flopsPerPair) / tp / peak16 +
          (r.attentionPairs * indexerFlopsPerPair) / tp / peakIndexer
        memBytes += (denseKvReadOf(r, false) * dsa.keyBytesPerTokenPerLayer) / kvShards
      }
      t += Math.max(memBytes / bw, comp) + numReq * p.perRequestSecondsPerLayer
      const lmMem = lmHeadBytes / bw
      const lmComp = (2 * numReq * model.vocabSize * model.hiddenSize) / tp / peak16
      const lm = Math.max(lmMem, lmComp)
      if (lm > lmHead) lmHead = lm
    }
    if (r.extendTokens > 0) anyExtend = true
    local[i] = t
    if (t > maxLocal) maxLocal = t
    sumTokens += r.tokens
    if (r.tokens > maxTokens) maxTokens = r.tokens
    sumPairs += r.attentionPairs
    if (r.attentionPairs > maxPairs) maxPairs = r.attentionPairs
  }

  // MLP from the global token count
  const T = sumTokens
  const g = dp * tp
  const roof = (bytes: number, flops: number) => {
    const m = bytes / bw
    const c = flops / peakW
    return Math.max(m, c)
  }
  let mlp = 0
  if (T > 0) {
    const mlpSpec = model.mlp
    const bpp = model.weightBytesPerParam
    if (mlpSpec.kind === "moe") {
      const distinct = expectedDistinctLocalExperts(mlpSpec.numExperts, mlpSpec.topK, mlpSpec.ep, T)
      const moeLayer = roof(
        (distinct * mlpSpec.expertParams + mlpSpec.sharedExpertParams) * bpp,
        (2 * T * (mlpSpec.topK * mlpSpec.expertParams + mlpSpec.sharedExpertParams)) / mlpSpec.ep
      )
      const denseLayer =
        mlpSpec.denseLayers > 0
          ? roof((mlpSpec.denseParamsPerLayer * bpp) / g, (2 * T * mlpSpec.denseParamsPerLayer) / g)
          : 0
      mlp = (L - mlpSpec.denseLayers) * moeLayer + mlpSpec.denseLayers * denseLayer
    } else {
      mlp = L * roof((mlpSpec.paramsPerLayer * bpp) / g, (2 * T * mlpSpec.paramsPerLayer) / g)
    }
  }

  // collectives: gather + reduce-scatter (DP attention), two all-reduces (TP only), or the MoE
  // dispatch + combine all-to-all, where the busiest rank's top-k token copies set the volume
  let commPerLayer = 0
  if (g > 1) {
    const allToAll = model.collective === "all-to-all" && model.mlp.kind === "moe"
    const bytes = allToAll
      ? ((g - 1) *
          (maxTokens / tp) *
          (model.mlp.kind === "moe" ? model.mlp.topK : 1) *
          model.hiddenSize *
          model.activationBytes) /
        g
      : ((dp > 1 ? 1 : 2) * (g - 1) * T * model.hiddenSize * model.activationBytes) / g
    commPerLayer =
      2 *
      ((g - 1) * p.collectiveLatencySeconds + bytes / (gpu.linkBandwidthBytesPerSecond * p.linkEfficiency))
  }

  const cudaGraph = !(anyExtend && idleRanks > 0)
  const overhead =
    p.fixedOverheadSeconds +
    maxRequests * p.perRequestOverheadSeconds +
    (cudaGraph ? 0 : L * p.eagerOverheadSecondsPerLayer)
  const attentionSeconds = L * maxLocal
  const commSeconds = L * commPerLayer
  const stepSeconds = attentionSeconds + commSeconds + mlp + lmHead + overhead

  return {
    stepSeconds,
    moeSeconds: mlp,
    commSeconds,
    attentionSeconds,
    lmHeadSeconds: lmHead,
    overheadSeconds: overhead,
    maxLocal,
    sumTokens,
    maxTokens,
    sumPairs,
    maxPairs,
    idleRanks,
    cudaGraph
  }
}

/**
 * The step time of one lockstep step from each rank's batch.
 *
 * **When to use**: to see what skew costs: rank i's `syncWaitSeconds` is the time its GPU sits at
 * the collectives waiting for the slowest rank. See {@link stepTimeFromAggregates} for the rules.
 *
 * @example
 * ```ts
 * import { gpus, models, stepTime } from "@loadledger/step-time"
 * const ranks = [
 *   { decode: [8192, 8192, 8192, 204800], extend: [] },
 *   ...Array.from({ length: 7 }, () => ({ decode: [8192, 8192, 8192, 8192], extend: [] }))
 * ]
 * const r = stepTime({ model: models["glm-5.3-dense"]!, gpu: gpus["h200"]! }, ranks)
 * r.ranks[0]!.attentionPairs // => 229376
 * r.ranks[1]!.imbalancePairs // => 196608
 * ```
 *
 * @category step time
 * @since 0.1.0
 */
export const stepTime = (config: StepTimeConfig, ranks: ReadonlyArray<RankBatch>): StepTimeResult =>
  stepTimeFromAggregates(
    config,
    ranks.map((b) => aggregate(b, config.model.attention.sparseTopK))
  )

/**
 * The lockstep rule on its own: given each rank's local time per layer, every rank waits for
 * the slowest at every layer. Returns the per-layer max and each rank's sync wait over
 * `numLayers` layers.
 *
 * @example
 * ```ts
 * import { lockstepSyncWait } from "@loadledger/step-time"
 * const r = lockstepSyncWait([0.006, 0.001, 0.001], 78)
 * // up to float rounding
 * r.syncWaitSeconds[1] // => 0.39
 * ```
 *
 * @category step time
 * @since 0.1.0
 */
export const lockstepSyncWait = (
  localSecondsPerLayer: ReadonlyArray<number>,
  numLayers: number
): {
  readonly maxLocalSecondsPerLayer: number
  readonly syncWaitSecondsPerLayer: ReadonlyArray<number>
  readonly syncWaitSeconds: ReadonlyArray<number>
} => {
  const max = localSecondsPerLayer.reduce((m, x) => Math.max(m, x), 0)
  const perLayer = localSecondsPerLayer.map((x) => max - x)
  return {
    maxLocalSecondsPerLayer: max,
    syncWaitSecondsPerLayer: perLayer,
    syncWaitSeconds: perLayer.map((w) => w * numLayers)
  }
}
