/**
 * The step rules of the lockstep DP step-time model (see `stepTimeFromAggregates` in
 * `StepTime.ts`): one core read by the full and the lean result, so both stay equal to the last bit.
 */
import { extendQueryTile, type RankAggregate } from "../Batch.js"
import { defaultEfficiencies, type Efficiencies } from "../Efficiencies.js"
import type { ExpertRouting } from "../ExpertRouting.js"
import type { StepTimeConfig, StepTimeResult } from "../StepTimeTypes.js"
import { deepEpModeOf, lowLatencyMoeLayer } from "./deepEp.js"
import { moeLayerPerEpRank } from "./moeHotSpot.js"

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
export const kvReadOf = (r: RankAggregate, topK: number | undefined): number => {
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

/** The scalar figures of a step, shared by the full and the lean result. */
export interface StepCore
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
  /** With `config.experts`: each DP rank's wait for the hottest EP rank's MoE GEMMs, all layers. */
  readonly moeWaitSeconds?: ReadonlyArray<number> | undefined
  /** With `config.experts`: the hottest EP rank's share of the token-expert pairs. */
  readonly hottestEpShare?: number | undefined
  /** With `config.deepEp`: the mode the step ran in. */
  readonly deepEpMode?: "normal" | "low_latency" | undefined
}

/** EP ranks `[from, to]` on the GPUs of DP rank i of `dp` (one EP rank per GPU, in order). */
const epRangeOf = (i: number, dp: number, ep: number): readonly [number, number] => {
  const from = Math.floor((i * ep) / dp)
  return [from, Math.max(from, Math.ceil(((i + 1) * ep) / dp) - 1)]
}

/** Each DP rank's MoE wait over `layers` for the hottest of `perEp` (one layer's time per EP rank). */
const moeWaits = (perEp: ReadonlyArray<number>, hot: number, dp: number, layers: number): Array<number> => {
  const out = new Array<number>(dp)
  for (let i = 0; i < dp; i++) {
    const [from, to] = epRangeOf(i, dp, perEp.length)
    let own = 0
    for (let e = from; e <= to; e++) if (perEp[e]! > own) own = perEp[e]!
    out[i] = layers * (hot - own)
  }
  return out
}

const hottest = (routing: ExpertRouting): number => Math.max(...routing.epRankShares)

/** The step's rules (see {@link stepTimeFromAggregates}); writes rank i's local seconds per layer to `local[i]`. */
export const stepCore = (
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
  const deepEpMode = config.deepEp === undefined ? undefined : deepEpModeOf(config.deepEp, anyExtend)
  const bufferTokens =
    deepEpMode === "low_latency"
      ? Math.max(config.deepEp?.numMaxDispatchTokensPerRank ?? 128, maxTokens / tp)
      : 0
  const g = dp * tp
  const roof = (bytes: number, flops: number) => {
    const m = bytes / bw
    const c = flops / peakW
    return Math.max(m, c)
  }
  let mlp = 0
  const experts = model.mlp.kind === "moe" ? config.experts : undefined
  let moeWaitSeconds: Array<number> | undefined
  if (T > 0) {
    const mlpSpec = model.mlp
    const bpp = model.weightBytesPerParam
    if (mlpSpec.kind === "moe") {
      let moeLayer: number
      if (deepEpMode === "low_latency") {
        // the fixed-shape buffer: every EP rank alike, no wait for a hot one
        moeLayer = lowLatencyMoeLayer(mlpSpec, bufferTokens * dp * tp, bpp, roof)
        if (experts !== undefined) moeWaitSeconds = new Array<number>(dp).fill(0)
      } else if (experts === undefined) {
        const distinct = expectedDistinctLocalExperts(mlpSpec.numExperts, mlpSpec.topK, mlpSpec.ep, T)
        moeLayer = roof(
          (distinct * mlpSpec.expertParams + mlpSpec.sharedExpertParams) * bpp,
          (2 * T * (mlpSpec.topK * mlpSpec.expertParams + mlpSpec.sharedExpertParams)) / mlpSpec.ep
        )
      } else {
        // the hottest EP rank's expert GEMMs set the layer; the others wait for it in the combine
        const perEp = new Array<number>(experts.slotProbabilities.length)
        moeLayer = moeLayerPerEpRank(
          experts,
          T,
          {
            expertParams: mlpSpec.expertParams,
            sharedExpertParams: mlpSpec.sharedExpertParams,
            bytesPerParam: bpp,
            bw,
            peak: peakW
          },
          perEp
        )
        moeWaitSeconds = moeWaits(perEp, moeLayer, dp, L - mlpSpec.denseLayers)
      }
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
    // DeepEP (either mode) is the MoE exchange's all-to-all backend
    const allToAll =
      model.mlp.kind === "moe" && (model.collective === "all-to-all" || config.deepEp !== undefined)
    const topKOf = model.mlp.kind === "moe" ? model.mlp.topK : 1
    const sent = allToAll
      ? ((g - 1) *
          (deepEpMode === "low_latency" ? bufferTokens : maxTokens / tp) *
          topKOf *
          model.hiddenSize *
          model.activationBytes) /
        g
      : ((dp > 1 ? 1 : 2) * (g - 1) * T * model.hiddenSize * model.activationBytes) / g
    // under a skewed routing the hottest EP rank's incoming copies may bound the all-to-all
    const bytes =
      allToAll && experts !== undefined && deepEpMode !== "low_latency"
        ? Math.max(
            sent,
            ((g - 1) * T * topKOf * hottest(experts) * model.hiddenSize * model.activationBytes) / g
          )
        : sent
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
    cudaGraph,
    ...(experts === undefined ? {} : { moeWaitSeconds, hottestEpShare: hottest(experts) }),
    ...(deepEpMode === undefined ? {} : { deepEpMode })
  }
}
