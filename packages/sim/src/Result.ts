/**
 * What a simulation run returns.
 *
 * @since 0.1.0
 */
import type { SloAttainment } from "./Slo.js"
import type { TraceTokenIds } from "./TokenIdsTypes.js"

/**
 * How the run ended. `Completed`: every request finished or was rejected. `Deadlock`: a lockstep
 * step could not run because some ranks skipped the collective (`busyRanks` had tokens,
 * `skippingRanks` returned early); simulated time stops at `atSeconds`. `NoProgress`: `ranks` hold
 * requests that can no longer run: a rank formed an empty batch while holding requests in
 * `stallSteps` consecutive step attempts, or a vetoed forward (no dummy batches) has no event left
 * to fill its empty ranks; `causes` names each empty rank and why (e.g. its only request needs more
 * KV than is free), `message` says it in one line. `InvalidConfig`: `field` of the config is out of
 * range (`checkConfig`), or `field` is `"policy"` for a policy without `make`; nothing ran. `TimeLimit`:
 * `maxSimulatedSeconds` was reached. `SloMissed` (since 0.5.0, with `sloStopEarly`): the run stopped at
 * `atSeconds` because more requests had missed the SLO than its target allows.
 *
 * @category models
 * @since 0.1.0
 */
export type SimStatus =
  | { readonly _tag: "Completed" }
  | {
      readonly _tag: "Deadlock"
      readonly atSeconds: number
      readonly busyRanks: ReadonlyArray<number>
      readonly skippingRanks: ReadonlyArray<number>
      readonly message: string
    }
  | {
      readonly _tag: "NoProgress"
      readonly atSeconds: number
      readonly ranks: ReadonlyArray<number>
      readonly causes?: ReadonlyArray<{ readonly rank: number; readonly cause: string }> | undefined
      readonly message: string
    }
  | { readonly _tag: "TimeLimit"; readonly atSeconds: number }
  | { readonly _tag: "SloMissed"; readonly atSeconds: number; readonly message: string }
  | { readonly _tag: "InvalidConfig"; readonly field: string; readonly message: string }

/**
 * p50 / p90 / p99 (linear interpolation between order statistics) and the mean, in seconds;
 * `undefined` fields when there were no samples. A run with more than 2^19 samples of a latency
 * (requests for TTFT and E2E, distinct gaps for ITL) reads that latency's percentiles from a
 * DDSketch instead, so its memory does not grow with the trace: `relativeError` (0.005) is then
 * set, and each percentile is within that share of a sample value at its rank (the mean stays the
 * exact mean up to rounding). SLO attainment (`PolicyResult.slo`) is always an exact count.
 *
 * @category models
 * @since 0.1.0
 */
export interface Percentiles {
  readonly count: number
  readonly p50?: number | undefined
  readonly p90?: number | undefined
  readonly p99?: number | undefined
  readonly mean?: number | undefined
  /** Set (since 0.5.0) when the percentiles come from a quantile sketch: their relative error bound. */
  readonly relativeError?: number | undefined
}

/**
 * The token imbalance ratio buckets SGLang exports (upper bounds, `le`); results add a last
 * bucket for ratios above 64.
 *
 * @example
 * ```ts
 * import { IMBALANCE_BUCKETS } from "@loadledger/sim"
 * IMBALANCE_BUCKETS.length // => 16
 * IMBALANCE_BUCKETS // => [1.0, 1.05, 1.1, 1.25, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export const IMBALANCE_BUCKETS: ReadonlyArray<number> = [
  1.0, 1.05, 1.1, 1.25, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64
]

/**
 * What happened to one request (kept when `recordRequests` is set). Times in simulated seconds;
 * absent when the request never got that far. `rejected` names why it never ran.
 *
 * @category models
 * @since 0.1.0
 */
export interface RequestOutcome {
  readonly requestId: string
  readonly rank?: number | undefined
  readonly arrivalSeconds: number
  readonly firstScheduledSeconds?: number | undefined
  readonly firstTokenSeconds?: number | undefined
  readonly finishSeconds?: number | undefined
  readonly outputTokens: number
  readonly cachedTokens: number
  readonly retractions: number
  readonly rejected?: string | undefined
}

/**
 * One lockstep step (kept when `recordSteps` is set): start, duration, and per rank the real
 * tokens run and whether it ran a dummy batch (`dummyTokens` is the forward size a dummy batch
 * runs: 1 token, as vLLM's `execute_dummy_batch`). Since 0.6.0, with `recordSteps: "loads"`, each rank also carries its batch's
 * `numDecodes`, `numRunningReqs`, `numWaitingReqs` (at the step's end), `attentionPairs`,
 * `numUsedTokens` (KV tokens it holds), its running totals `cachedPromptTokens` /
 * `admittedPromptTokens`, and its `syncWaitSeconds` in the step (what `loadReportsOf` turns into `/v1/loads` reports).
 *
 * @category models
 * @since 0.1.0
 */
export interface StepRecord {
  readonly startSeconds: number
  readonly stepSeconds: number
  readonly ranks: ReadonlyArray<{
    readonly rank: number
    readonly tokens: number
    readonly dummyTokens: number
    readonly numDecodes?: number | undefined
    readonly numRunningReqs?: number | undefined
    readonly numWaitingReqs?: number | undefined
    readonly attentionPairs?: number | undefined
    readonly numUsedTokens?: number | undefined
    readonly cachedPromptTokens?: number | undefined
    readonly admittedPromptTokens?: number | undefined
    readonly syncWaitSeconds?: number | undefined
  }>
}

/**
 * One publish of vLLM's DP coordinator to the front ends (kept when `recordPublishes` is set, vLLM
 * engine only): when (`atSeconds`), what kind (`current` = the live table, `step_snapshot` = the
 * table captured at a step boundary, `wave_state` = an immediate `[null, wave, running]` wave
 * notice), the coordinator's wave view, and for load publishes every rank's row (index = rank) with
 * the fields the front ends were handed (`SimConfig.coordinatorRows`): vLLM's `[waiting, running,
 * kv]` as `numWaitingReqs`, `numRunningReqs`, `kvCacheUsage` (absent under `"vllm-counts"`), and the
 * `numTotalTokens` the simulator carries next to them (present only under `"extended"`, the
 * default). `measuredSeconds` is the simulator's own record of when the rank's stats were taken
 * (NaN for a rank that never reported), in every mode; under `"extended"` the front ends' rows carry
 * it as `RankLoad.timestamp` (the publish time for a rank that never reported), otherwise nothing
 * published carries it.
 *
 * @category models
 * @since 0.1.0
 */
export interface PublishRecord {
  readonly atSeconds: number
  readonly kind: "current" | "step_snapshot" | "wave_state"
  readonly wave: number
  readonly running: boolean
  readonly rows?:
    | ReadonlyArray<{
        readonly measuredSeconds: number
        readonly numWaitingReqs: number
        readonly numRunningReqs: number
        readonly kvCacheUsage?: number | undefined
        readonly numTotalTokens?: number | undefined
      }>
    | undefined
}

/**
 * Results of one policy on one trace.
 *
 * - `requests`: `finished`; `unfinished` = total - finished (rejected and stalled included);
 *   `rejected` never ran (too large for the KV pool or the request limit, or the policy could not
 *   place them); `stalled` were held on a rank that could not run them when a `NoProgress` run
 *   stopped (the ranks its status names);
 * - latencies: TTFT (arrival to first token), ITL (gap between consecutive tokens of a request),
 *   E2E (arrival to last token);
 * - `outputTokensPerSecond`: output tokens over the span from the first arrival to the last finish;
 * - `imbalanceHistogram.counts[i]`: steps whose token imbalance ratio is <= `le[i]` and above the
 *   previous bound (the last count is above 64);
 * - `syncWaitShare`: sum of ranks' sync wait over sum of ranks' step time;
 * - `forwardStallSeconds`: simulated time lockstep forwards were vetoed (no dummy batches: some
 *   ranks had a batch while others had none); 0 with dummy batches;
 * - `idleRankStepShare`: rank-steps that ran an idle/dummy batch over all rank-steps;
 * - `prefixCacheHitRate`: prompt tokens served from the prefix cache over prompt tokens admitted;
 * - `tokens`: prefill tokens computed, prompt tokens served from cache, decode tokens, output
 *   tokens produced by prefill steps (a request's first token, and the next token after each
 *   re-prefill that follows a retraction), output tokens delivered (= decode + outputFromPrefill).
 * - `loadSamples`: running + waiting requests per rank at evenly spaced times.
 * - `firstArrivalSeconds` / `lastArrivalSeconds` / `lastScheduledSeconds` (since 0.3.0): the
 *   trace's first and last arrival (0 for an empty trace) and the latest time a request was first
 *   scheduled (absent when none was); they say whether the run kept up (`keptUp`).
 * - `tokensPerRank` (since 0.2.0): the `tokens` counts split by rank (index = rank).
 * - `tokenIds` (since 0.5.0): where the token ids the policy routed on came from (`traceTokenIds`:
 *   the trace's, or synthesised from its block hashes or request ids; absent in results written
 *   before it was added).
 * - `latencyCdf.itlSeconds` (since 0.2.0): the ITL quantiles at `latencyCdf.quantiles`, as for
 *   TTFT and E2E (absent in results written before it was added). Each curve is empty (`[]`) when
 *   nothing was measured (no request finished; no request produced a second token), never zeros.
 * - `latencyCdf.quantiles` (since 0.6.0 also p99.1..p99.9): every percentile 0..1 in steps of
 *   0.01, then 0.991..0.999, then 1, so a tail view has measured points between p99 and the maximum.
 *
 * @category models
 * @since 0.1.0
 */
export interface PolicyResult {
  readonly policy: string
  readonly status: SimStatus
  readonly requests: {
    readonly total: number
    readonly finished: number
    readonly unfinished: number
    readonly rejected: number
    readonly stalled: number
  }
  readonly ttftSeconds: Percentiles
  readonly itlSeconds: Percentiles
  readonly e2eSeconds: Percentiles
  readonly outputTokensPerSecond: number
  readonly imbalanceHistogram: { readonly le: ReadonlyArray<number>; readonly counts: ReadonlyArray<number> }
  readonly syncWaitShare: number
  readonly forwardStallSeconds: number
  readonly idleRankStepShare: number
  readonly prefixCacheHitRate: number
  readonly retractions: number
  readonly requestsPerRank: ReadonlyArray<number>
  readonly steps: number
  readonly simulatedSeconds: number
  readonly firstArrivalSeconds: number
  readonly lastArrivalSeconds: number
  readonly lastScheduledSeconds?: number | undefined
  readonly tokens: {
    readonly prefillComputed: number
    readonly prefillCached: number
    readonly decode: number
    readonly outputFromPrefill: number
    readonly output: number
  }
  readonly latencyCdf: {
    readonly quantiles: ReadonlyArray<number>
    readonly ttftSeconds: ReadonlyArray<number>
    readonly e2eSeconds: ReadonlyArray<number>
    readonly itlSeconds?: ReadonlyArray<number> | undefined
  }
  readonly loadSamples: {
    readonly seconds: ReadonlyArray<number>
    readonly perRank: ReadonlyArray<ReadonlyArray<number>>
  }
  readonly tokensPerRank?:
    | {
        readonly prefillComputed: ReadonlyArray<number>
        readonly prefillCached: ReadonlyArray<number>
        readonly decode: ReadonlyArray<number>
      }
    | undefined
  /** Where the policy's `RouteRequest.tokenIds` came from (since 0.5.0). */
  readonly tokenIds?: TraceTokenIds | undefined
  /** Attainment of `SimConfig.slo` (since 0.5.0; absent without an SLO). */
  readonly slo?: SloAttainment | undefined
  readonly outcomes?: ReadonlyArray<RequestOutcome> | undefined
  readonly stepLog?: ReadonlyArray<StepRecord> | undefined
  readonly publishLog?: ReadonlyArray<PublishRecord> | undefined
}
