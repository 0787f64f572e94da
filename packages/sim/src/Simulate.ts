/**
 * `simulate`: one policy, one trace, one DP group.
 *
 * @since 0.1.0
 */
import type { Policy, PolicyOptions } from "@loadledger/policies"
import type { SimConfig } from "./Config.js"
import { resolveConfig } from "./Config.js"
import { type EngineName, findEngine } from "./engines/index.js"
import { runLoop } from "./internal/loop.js"
import { POOLED_CHUNK_TOKENS, type PooledConfig } from "./internal/pooled.js"
import type { PolicyResult, RequestOutcome } from "./Result.js"
import { IMBALANCE_BUCKETS } from "./Result.js"
import { traceTokenIds } from "./TokenIds.js"
import type { TraceRequest } from "./Trace.js"

/**
 * What `simulate` needs of a policy: its name and a factory (a `PolicyEntry` from
 * `@loadledger/policies` fits). The factory is called once per front end with
 * `{ clientCount, clientIndex, seed }`.
 *
 * @category models
 * @since 0.1.0
 */
export interface SimPolicy {
  readonly name: string
  readonly make: (options: PolicyOptions) => Policy<unknown>
  /**
   * The engine whose router the policy is (a registry entry's `engine`): `simulate` runs it when the
   * config names no `engine` (`"any"` or absent: SGLang). Since 0.4.0.
   */
  readonly engine?: EngineName | "any" | undefined
}

/**
 * Options that do not change the result: `onProgress(done, total)` is called as requests
 * finish or are rejected (`done` of `total`) (the CLI draws its progress bar with it).
 *
 * @category models
 * @since 0.1.0
 */
export interface SimulateOptions {
  readonly onProgress?: ((done: number, total: number) => void) | undefined
}

const CDF_POINTS = 101

/**
 * Replay `trace` through `policy` on a DP group and summarise what happened. Deterministic: the
 * same config (seed included), trace and policy give the same result; no clock is read.
 *
 * **When to use**: to compare routing policies on a real trace (call it once per policy; the
 * arrivals are the same). Requests the policy cannot place, or that can never fit in the KV pool,
 * are counted as rejected, not dropped silently; a run that cannot go on ends with a `Deadlock` or
 * `NoProgress` status naming the ranks. Each request reaches the policy with its `tokenIds`: the
 * trace's own, or ids synthesised from its block hashes or its request id (`tokenIdsOf`), so
 * token-keyed policies (`smg/prefix-hash`) route traces without prompt tokens too; the result's
 * `tokenIds` says which (`traceTokenIds`).
 *
 * **The step rule.** A group (all ranks under `lockstep`, else each rank alone) is idle until a
 * rank holds a request. A step of the group, at time `t`:
 * 1. every rank forms its batch from its own queue (SGLang: an extend batch if it can, else a decode
 *    batch; vLLM: decodes, then prefill chunks, under one token budget). Admission is KV-aware: a
 *    waiting request is admitted only when its whole prompt (less its cached prefix) fits the
 *    rank's free KV next to what the prefills in progress still need, so a request larger than the
 *    free KV waits at the head of its rank's queue (FCFS) and one larger than the pool never runs.
 *    With `prefillIntervalSteps` k > 1, a step whose group counter is not a multiple of k defers
 *    every prefill on ranks that have a decode to run, unless the rank's last prefill-admitting
 *    step left requests waiting (vLLM's `prefill_schedule_interval` and its saturation guard).
 * 2. a rank that holds requests but formed an empty batch counts an empty attempt; after
 *    `stallSteps` attempts in a row the run ends `NoProgress`, naming the rank and its cause. A step
 *    in which no rank formed a token is re-formed at once (bounded by the same count).
 * 3. with `dummyBatches` (default) the step runs if any rank has tokens; ranks with an empty batch
 *    run a 1-token dummy forward. Without them, a lockstep group's forward runs only when every rank
 *    has a non-empty batch: otherwise it is vetoed — no rank runs, the formed batches wait, and the
 *    group forms again at the next arrival (the wait is `forwardStallSeconds`); with no arrival
 *    left, the run ends `NoProgress` naming the empty ranks.
 * 4. the step lasts what the step model charges for all ranks' batches (lockstep: one duration for
 *    every rank, so one prefill on any rank sets every rank's step); tokens and finishes apply at
 *    its end.
 *
 * @example
 * ```ts
 * import { simulate } from "@loadledger/sim"
 * import type { Policy } from "@loadledger/policies"
 * const rr: Policy<number> = {
 *   name: "rr", init: () => 0, observe: (s) => s, finish: (s) => s, setStatus: (s) => s,
 *   route: (s, _r) => ({ _tag: "Routed", rank: s % 2, state: s + 1, explanation: {} })
 * }
 * const result = simulate(
 *   { dpSize: 2, stepModel: (ranks) => ({ stepSeconds: 0.01, tokenImbalanceRatio: 1, ranks: ranks.map(() => ({ syncWaitSeconds: 0 })) }) },
 *   [{ requestId: "a", arrivalSeconds: 0, inputLength: 100, outputLength: 3 }],
 *   { name: "rr", make: () => rr as Policy<unknown> }
 * )
 * result.requests.finished // => 1
 * result.ttftSeconds.p50 // => 0.01
 * ```
 *
 * @category simulation
 * @since 0.1.0
 */
export const simulate = (
  config: SimConfig,
  trace: ReadonlyArray<TraceRequest>,
  policy: SimPolicy,
  options: SimulateOptions = {}
): PolicyResult => {
  // a config that is not an object resolves to one without a dpSize: an InvalidConfig naming it
  const given: SimConfig = typeof config === "object" && config !== null ? config : ({} as SimConfig)
  const own = given.engine === undefined ? findEngine(policy?.engine) : undefined
  const resolved = resolveConfig(own === undefined ? given : { ...given, engine: own.name as EngineName })
  // the balance bound's pooled rank (`balanceBoundConfig`) caps each request's chunk
  const pooled = (given as PooledConfig)[POOLED_CHUNK_TOKENS]
  const c = pooled === undefined ? resolved : { ...resolved, pooledChunkTokens: pooled }
  const run = runLoop(c, trace, policy?.make, options.onProgress)
  const ran = run.trace
  const { finished, rejected, stalled } = run
  const lastFinish = run.lastFinishSeconds
  const lastScheduled = run.lastScheduledSeconds
  const st = run.status
  const firstArrival = ran[0]?.arrivalSeconds ?? 0
  const sum = (f: (r: (typeof run.ranks)[number]) => number) => run.ranks.reduce((a, r) => a + f(r), 0)
  const output = sum((r) => r.outputTokens)
  const admitted = sum((r) => r.admittedPromptTokens)
  const itlQuantile = run.itl.quantiles()
  const qs = Array.from({ length: CDF_POINTS }, (_, i) => i / (CDF_POINTS - 1))
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
    requests: { total: ran.length, finished, unfinished: ran.length - finished, rejected, stalled },
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
    lastArrivalSeconds: ran.at(-1)?.arrivalSeconds ?? 0,
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
    tokenIds: traceTokenIds(ran),
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
