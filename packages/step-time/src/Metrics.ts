/**
 * Imbalance metrics of a step with the names operators know from SGLang's DP-attention
 * dashboards, and their histogram.
 *
 * @since 0.1.0
 */
import type { StepTimeResult } from "./StepTime.js"

/**
 * Histogram bucket upper bounds (`le`) for max-over-mean imbalance ratios: 1.0 is perfectly
 * balanced, 8 is one busy rank out of 8, 64 one out of 64.
 *
 * @example
 * ```ts
 * import { imbalanceBuckets } from "@loadledger/step-time"
 * imbalanceBuckets.length // => 16
 * imbalanceBuckets[0] // => 1
 * imbalanceBuckets.at(-1) // => 64
 * ```
 *
 * @category metrics
 * @since 0.1.0
 */
export const imbalanceBuckets: ReadonlyArray<number> = [
  1.0, 1.05, 1.1, 1.25, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64
]

/**
 * One rank's imbalance metrics for a step. `maxTokens`/`sumTokens` are over all ranks,
 * `imbalanceTokens = maxTokens - localTokens`, `maxOverMean` is the step's token imbalance
 * ratio; the `AttentionPairs` fields are the same for per-layer attention pairs.
 *
 * @category metrics
 * @since 0.1.0
 */
export interface RankMetrics {
  readonly dpRank: number
  readonly localTokens: number
  readonly maxTokens: number
  readonly sumTokens: number
  readonly imbalanceTokens: number
  readonly maxOverMean: number
  readonly localAttentionPairs: number
  readonly maxAttentionPairs: number
  readonly sumAttentionPairs: number
  readonly imbalanceAttentionPairs: number
  readonly attentionPairsMaxOverMean: number
  readonly syncWaitSeconds: number
  readonly idle: boolean
}

/**
 * Per-rank metrics of one modelled step.
 *
 * **When to use**: to export or log what a step's skew looks like per rank, under the names an
 * SGLang operator reads (`localTokens`, `maxTokens`, `sumTokens`, `imbalanceTokens`,
 * `maxOverMean`).
 *
 * @example
 * ```ts
 * import { gpus, models, stepMetrics, stepTime } from "@loadledger/step-time"
 * const r = stepTime({ model: models["glm-5.3"]!, gpu: gpus["h200"]! }, [
 *   { decode: [100, 100], extend: [] },
 *   { decode: [], extend: [] }
 * ])
 * stepMetrics(r)[1]!.imbalanceTokens // => 2
 * stepMetrics(r)[0]!.maxOverMean // => 2
 * ```
 *
 * @category metrics
 * @since 0.1.0
 */
export const stepMetrics = (step: StepTimeResult): ReadonlyArray<RankMetrics> => {
  let maxTokens = 0
  let sumTokens = 0
  let maxPairs = 0
  let sumPairs = 0
  for (const r of step.ranks) {
    sumTokens += r.tokens
    sumPairs += r.attentionPairs
    if (r.tokens > maxTokens) maxTokens = r.tokens
    if (r.attentionPairs > maxPairs) maxPairs = r.attentionPairs
  }
  return step.ranks.map((r) => ({
    dpRank: r.dpRank,
    localTokens: r.tokens,
    maxTokens,
    sumTokens,
    imbalanceTokens: maxTokens - r.tokens,
    maxOverMean: step.tokenImbalanceRatio,
    localAttentionPairs: r.attentionPairs,
    maxAttentionPairs: maxPairs,
    sumAttentionPairs: sumPairs,
    imbalanceAttentionPairs: maxPairs - r.attentionPairs,
    attentionPairsMaxOverMean: step.pairsImbalanceRatio,
    syncWaitSeconds: r.syncWaitSeconds,
    idle: r.idle
  }))
}

/**
 * Running totals over many steps: cumulative histograms (Prometheus `le` semantics, last entry
 * `+Inf`) of the token and pair imbalance ratios, idle-rank steps, and sync wait per rank.
 *
 * @category metrics
 * @since 0.1.0
 */
export interface ImbalanceTotals {
  readonly steps: number
  readonly idleRankSteps: number
  readonly tokenImbalanceCounts: ReadonlyArray<number>
  readonly pairsImbalanceCounts: ReadonlyArray<number>
  readonly syncWaitSeconds: ReadonlyArray<number>
}

/**
 * Empty {@link ImbalanceTotals} (one count per bucket plus `+Inf`).
 *
 * @example
 * ```ts
 * import { emptyImbalanceTotals } from "@loadledger/step-time"
 * emptyImbalanceTotals.tokenImbalanceCounts.length // => 17
 * ```
 *
 * @category metrics
 * @since 0.1.0
 */
export const emptyImbalanceTotals: ImbalanceTotals = {
  steps: 0,
  idleRankSteps: 0,
  tokenImbalanceCounts: new Array(imbalanceBuckets.length + 1).fill(0),
  pairsImbalanceCounts: new Array(imbalanceBuckets.length + 1).fill(0),
  syncWaitSeconds: []
}

const observe = (counts: ReadonlyArray<number>, ratio: number): ReadonlyArray<number> =>
  counts.map((c, i) => (i >= imbalanceBuckets.length || ratio <= imbalanceBuckets[i]! ? c + 1 : c))

/**
 * Add one step to the running totals (pure: returns new totals).
 *
 * @example
 * ```ts
 * import { accumulateImbalance, emptyImbalanceTotals, gpus, models, stepTime } from "@loadledger/step-time"
 * const r = stepTime({ model: models["glm-5.3"]!, gpu: gpus["h200"]! }, [{ decode: [10], extend: [] }, { decode: [], extend: [] }])
 * const t = accumulateImbalance(emptyImbalanceTotals, r)
 * // ratio 2 falls in le=2
 * t.idleRankSteps // => 1
 * t.tokenImbalanceCounts[5] // => 1
 * ```
 *
 * @category metrics
 * @since 0.1.0
 */
export const accumulateImbalance = (totals: ImbalanceTotals, step: StepTimeResult): ImbalanceTotals => ({
  steps: totals.steps + 1,
  idleRankSteps: totals.idleRankSteps + step.idleRanks,
  tokenImbalanceCounts: observe(totals.tokenImbalanceCounts, step.tokenImbalanceRatio),
  pairsImbalanceCounts: observe(totals.pairsImbalanceCounts, step.pairsImbalanceRatio),
  syncWaitSeconds: step.ranks.map((r, i) => (totals.syncWaitSeconds[i] ?? 0) + r.syncWaitSeconds)
})
