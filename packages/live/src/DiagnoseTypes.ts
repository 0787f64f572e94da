/**
 * The shapes of the diagnosis (`Diagnose.ts`): the rows it reads, its thresholds, a rank's verdict
 * and the group's. A leaf module: `Diagnose.ts`, the CLI's `diagnose` and the live router's
 * diagnosis metrics import it.
 *
 * @since 0.7.0
 */

/**
 * One rank's row of one report (SGLang `/v1/loads`, or a polled `RankLoad`). Required:
 * `numRunningReqs`, `numUsedTokens` (KV tokens held), `utilization` (0..1: the share of the
 * interval in its own forward work). Unknown when absent (never read as 0): `numWaitingReqs`,
 * `cacheHitRate` (0..1), `prefillTokens` (tokens prefilled since the previous report).
 *
 * @category diagnose
 * @since 0.6.0
 */
export interface DiagnoseRow {
  readonly dpRank: number
  readonly numRunningReqs: number
  readonly numWaitingReqs?: number | undefined
  readonly numUsedTokens: number
  readonly utilization: number
  readonly cacheHitRate?: number | undefined
  readonly prefillTokens?: number | undefined
}

/**
 * The thresholds of the verdict: `hardware` when the median residual exceeds `hardwareResidual`;
 * `load` when a skew's median exceeds `loadSkew` (requests, tokens per request) or the cache hit
 * rate is `cacheGap` below the group's; structural when the mean wait share exceeds `structuralWait`
 * with no rank flagged; an expert hot spot when the ranks' residuals, the largest left out, spread
 * over more than `expertSpread` and over 0.4 of the slowest rank's residual, and no rank's load is
 * skewed.
 *
 * @category diagnose
 * @since 0.6.0
 */
export interface DiagnoseThresholds {
  readonly hardwareResidual: number
  readonly loadSkew: number
  readonly cacheGap: number
  readonly structuralWait: number
  readonly expertSpread: number
}

/**
 * What a `hardware` verdict may be: a slow GPU (throttled clocks, degraded HBM), a CPU-starved
 * scheduler, or a slow link (a degraded NVLink / NIC in the collectives). The published reports
 * (SGLang `/v1/loads` and `/metrics`, vLLM `/metrics`) carry no per-rank collective time, so the
 * three are not told apart: each lengthens the rank's own time at equal load.
 *
 * @category diagnose
 * @since 0.7.0
 */
export type HardwareCause = "gpu" | "cpu" | "link"

/**
 * A rank's verdict and its evidence (medians over the reports where every rank was busy):
 * `utilizationRatio` (its forward time over the group's mean), `residual` (what load does not
 * explain), `runningSkew` (running requests over the group's, less 1), `requestSkew` (requests held,
 * running + waiting, over the group's, less 1; `undefined` when `numWaitingReqs` was not published),
 * `lengthSkew` (KV tokens per running request over the group's, less 1), `cacheHitRateGap` (the
 * group's mean hit rate less its own; `undefined` when `cacheHitRate` was not published). A
 * `hardware` verdict lists its possible `causes` (all three: see `HardwareCause`).
 *
 * @category diagnose
 * @since 0.6.0
 */
export interface RankVerdict {
  readonly dpRank: number
  readonly kind: "hardware" | "load" | "expert" | "ok"
  readonly skew?: "count" | "length" | "cache" | undefined
  readonly causes?: ReadonlyArray<HardwareCause> | undefined
  readonly evidence: {
    readonly utilizationRatio: number
    readonly residual: number
    readonly runningSkew: number
    readonly requestSkew?: number | undefined
    readonly lengthSkew: number
    readonly cacheHitRateGap?: number | undefined
  }
}

/**
 * The whole diagnosis: per rank, and for the group (`syncWaitShare`: mean share of the busy time a
 * rank waits for the slowest; `requestImbalance`: median max over mean running requests; `reports`:
 * how many reports had every rank busy; `fit`: the load coefficients, `prefill` `undefined` when no
 * report published prefilled tokens; `minResidual`: the lowest rank's median residual;
 * `expertSpread`: the second-highest rank's less the lowest). `expertHotSpotLikely`: some rank is
 * persistently faster than the typical rank at equal load (see `Diagnose.ts`); `structuralLikely`
 * is then true too.
 *
 * @category diagnose
 * @since 0.6.0
 */
export interface Diagnosis {
  readonly ranks: ReadonlyArray<RankVerdict>
  readonly group: {
    readonly structuralLikely: boolean
    readonly expertHotSpotLikely: boolean
    readonly evidence: {
      readonly syncWaitShare: number
      readonly requestImbalance: number
      readonly reports: number
      readonly fit: {
        readonly requests: number
        readonly tokens: number
        readonly prefill?: number | undefined
      }
      readonly minResidual: number
      readonly expertSpread: number
    }
  }
}
