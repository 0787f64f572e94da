/**
 * The lockstep DP step-time model: per-rank local attention, MoE/dense MLP from the global token
 * count, per-layer collectives, sync wait.
 *
 * The step rules are in `internal/stepCore.ts`, read through two results here (the full
 * `stepTimeFromAggregates` and the simulator's lean `stepCostFromAggregates`) that share that one
 * core to stay equal to the last bit; the types are in `StepTimeTypes.ts` (re-exported here).
 *
 * @since 0.1.0
 */
import { aggregate, type RankAggregate, type RankBatch } from "./Batch.js"
import { kvReadOf, stepCore } from "./internal/stepCore.js"
import type { RankStepTime, StepTimeConfig, StepTimeResult } from "./StepTimeTypes.js"

export * from "./StepTimeTypes.js"

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
  const moeWait = s.moeWaitSeconds
  for (let i = 0; i < dp; i++) {
    const r = ranks[i]!
    const kvPairs = kvReadOf(r, topK)
    const li = local[i]!
    const attentionWait = L * (maxLocal - li)
    out[i] = {
      dpRank: i,
      attentionPairs: r.attentionPairs,
      kvReadPairs: kvPairs,
      kvBytesRead: kvPairs * kvStepFactor,
      tokens: r.tokens,
      numRequests: r.numDecodes + (r.numExtends ?? (r.extendTokens > 0 ? 1 : 0)),
      localSeconds: L * li,
      localSecondsPerLayer: li,
      syncWaitSeconds: moeWait === undefined ? attentionWait : attentionWait + moeWait[i]!,
      ...(moeWait === undefined ? {} : { moeWaitSeconds: moeWait[i]! }),
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
    ...(s.hottestEpShare === undefined ? {} : { hottestEpShare: s.hottestEpShare }),
    ...(s.deepEpMode === undefined ? {} : { deepEpMode: s.deepEpMode }),
    ranks: out
  }
}

/**
 * What a simulator charges a step with: the three figures of {@link stepTimeFromAggregates} it
 * reads, computed by the same code (equal to the last bit). `syncWaitSeconds[i]` is rank i's sync
 * wait over all layers (`ranks[i].syncWaitSeconds` of the full result); `commSeconds` the
 * collectives' share of the step (what a slow link lengthens).
 *
 * @category step time
 * @since 0.3.0
 */
export interface StepCostFromAggregates {
  readonly stepSeconds: number
  readonly tokenImbalanceRatio: number
  readonly syncWaitSeconds: ReadonlyArray<number>
  /** The collectives over all layers (`commSeconds` of the full result; since 0.7.0). */
  readonly commSeconds: number
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
 * lean.commSeconds === full.commSeconds // => true
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
  const moeWait = s.moeWaitSeconds
  if (moeWait === undefined) for (let i = 0; i < dp; i++) wait[i] = L * (maxLocal - wait[i]!)
  else for (let i = 0; i < dp; i++) wait[i] = L * (maxLocal - wait[i]!) + moeWait[i]!
  return {
    stepSeconds: s.stepSeconds,
    tokenImbalanceRatio: s.sumTokens > 0 ? (s.maxTokens * dp) / s.sumTokens : 1,
    syncWaitSeconds: wait,
    commSeconds: s.commSeconds
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
