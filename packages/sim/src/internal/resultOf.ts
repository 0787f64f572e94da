/**
 * From a `simulate` call to its run and back: the config a run uses, and the `PolicyResult` a run's
 * record gives (shared by `simulate` and `simulateAsync`).
 */
import type { SimConfig } from "../Config.js"
import { resolveConfig } from "../Config.js"
import { type EngineName, findEngine } from "../engines/index.js"
import type { PolicyResult, RequestOutcome } from "../Result.js"
import { IMBALANCE_BUCKETS } from "../Result.js"
import type { SimPolicy } from "../SimPolicy.js"
import type { RawRun } from "./loop.js"
import { POOLED_CHUNK_TOKENS, type PooledConfig } from "./pooled.js"

/**
 * The quantiles of `latencyCdf`: every percentile 0..100, then p99.1..p99.9, so a tail view
 * (p90-p99.9) has measured points between p99 and the maximum instead of a straight line.
 */
const CDF_QUANTILES: ReadonlyArray<number> = [
  ...Array.from({ length: 100 }, (_, i) => i / 100),
  ...Array.from({ length: 9 }, (_, i) => (991 + i) / 1000),
  1
]

/** The config a run uses: `config` resolved, on the policy's engine when it names none. */
export const configOf = (config: SimConfig, policy: SimPolicy) => {
  // a config that is not an object resolves to one without a dpSize: an InvalidConfig naming it
  const given: SimConfig = typeof config === "object" && config !== null ? config : ({} as SimConfig)
  const own = given.engine === undefined ? findEngine(policy?.engine) : undefined
  const resolved = resolveConfig(own === undefined ? given : { ...given, engine: own.name as EngineName })
  // the balance bound's pooled rank (`balanceBoundConfig`) caps each request's chunk
  const pooled = (given as PooledConfig)[POOLED_CHUNK_TOKENS]
  return pooled === undefined ? resolved : { ...resolved, pooledChunkTokens: pooled }
}

/** What a run's record says, as a `PolicyResult`. */
export const resultOf = (run: RawRun, policy: SimPolicy): PolicyResult => {
  const ran = run.rows ?? []
  const total = run.count
  const { finished, rejected, stalled } = run
  const lastFinish = run.lastFinishSeconds
  const lastScheduled = run.lastScheduledSeconds
  const st = run.status
  const firstArrival = run.firstArrivalSeconds
  const sum = (f: (r: (typeof run.ranks)[number]) => number) => run.ranks.reduce((a, r) => a + f(r), 0)
  const output = sum((r) => r.outputTokens)
  const admitted = sum((r) => r.admittedPromptTokens)
  const itlQuantile = run.itl.quantiles()
  const qs = CDF_QUANTILES
  const kept = run.kept
  const outcomes: Array<RequestOutcome> | undefined = kept
    ? ran.map((t, i) => {
        const r = kept[i]
        // a request that never arrived (a time limit) has no record: nothing happened to it
        return r === undefined
          ? {
              requestId: t.requestId,
              rank: undefined,
              arrivalSeconds: t.arrivalSeconds,
              firstScheduledSeconds: undefined,
              firstTokenSeconds: undefined,
              finishSeconds: undefined,
              outputTokens: 0,
              cachedTokens: 0,
              retractions: 0,
              rejected: undefined
            }
          : {
              requestId: r.t.requestId,
              rank: r.rank >= 0 ? r.rank : undefined,
              arrivalSeconds: r.t.arrivalSeconds,
              firstScheduledSeconds: Number.isNaN(r.firstScheduledSeconds)
                ? undefined
                : r.firstScheduledSeconds,
              firstTokenSeconds: Number.isNaN(r.firstTokenSeconds) ? undefined : r.firstTokenSeconds,
              finishSeconds: Number.isNaN(r.finishSeconds) ? undefined : r.finishSeconds,
              outputTokens: r.generated,
              cachedTokens: r.cachedTokens,
              retractions: r.retractions,
              rejected: r.rejected
            }
      })
    : undefined
  return {
    policy: String(policy?.name),
    status: run.status,
    requests: { total, finished, unfinished: total - finished, rejected, stalled },
    ttftSeconds: run.ttft.percentiles,
    itlSeconds: run.itl.percentiles(),
    e2eSeconds: run.e2e.percentiles,
    outputTokensPerSecond: lastFinish > firstArrival ? output / (lastFinish - firstArrival) : 0,
    imbalanceHistogram: { le: IMBALANCE_BUCKETS, counts: run.imbalanceCounts },
    syncWaitShare: run.rankSeconds > 0 ? run.syncWaitSeconds / run.rankSeconds : 0,
    forwardStallSeconds: run.forwardStallSeconds,
    idleRankStepShare: run.rankSteps > 0 ? run.idleRankSteps / run.rankSteps : 0,
    prefixCacheHitRate: admitted > 0 ? sum((r) => r.cachedPromptTokens) / admitted : 0,
    retractions: sum((r) => r.retractions),
    requestsPerRank: run.ranks.map((r) => r.routed),
    steps: run.steps,
    simulatedSeconds: run.endSeconds,
    firstArrivalSeconds: firstArrival,
    lastArrivalSeconds: run.lastArrivalSeconds,
    lastScheduledSeconds: Number.isNaN(lastScheduled) ? undefined : lastScheduled,
    tokens: {
      prefillComputed: sum((r) => r.prefillComputed),
      prefillCached: sum((r) => r.cachedPromptTokens),
      decode: sum((r) => r.decodeTokens),
      outputFromPrefill: sum((r) => r.prefillEmitted),
      output
    },
    latencyCdf: {
      quantiles: qs,
      // no finished request, no latency: an empty curve, never a curve of zeros
      ttftSeconds: cdfOf(qs, run.ttft.quantile),
      e2eSeconds: cdfOf(qs, run.e2e.quantile),
      itlSeconds: cdfOf(qs, itlQuantile)
    },
    loadSamples: { seconds: run.sampleSeconds, perRank: run.samplePerRank },
    tokensPerRank: {
      prefillComputed: run.ranks.map((r) => r.prefillComputed),
      prefillCached: run.ranks.map((r) => r.cachedPromptTokens),
      decode: run.ranks.map((r) => r.decodeTokens)
    },
    tokenIds: run.tokenIds,
    slo: run.slo?.result(st._tag === "SloMissed"),
    outcomes,
    stepLog: run.stepLog,
    publishLog: run.publishLog
  }
}

/** The quantile curve at `qs`, or `[]` when a quantile is unknown (nothing was measured). */
const cdfOf = (qs: ReadonlyArray<number>, at: (q: number) => number | undefined): ReadonlyArray<number> => {
  const out: Array<number> = []
  for (const q of qs) {
    const v = at(q)
    if (v === undefined) return []
    out.push(v)
  }
  return out
}
