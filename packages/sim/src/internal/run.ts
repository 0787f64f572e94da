/**
 * One simulation run's state, shared by the loop's named steps (`loop.ts`, `stepStart.ts`,
 * `stepEnd.ts`, `events.ts`): the requests, ranks, lockstep groups, router, clock, counters and
 * samples. Mutable on purpose and private to one `simulate` call (as `Rank` is): each step is a
 * function of this record that advances it.
 */
import { type Policy, type PolicyOptions, stepCostFrom } from "@loadledger/policies"
import type { ResolvedSimConfig } from "../Config.js"
import type { EngineFault, EngineRun } from "../engines/Engine.js"
import { findEngine } from "../engines/index.js"
import type { SimStatus, StepRecord } from "../Result.js"
import { IMBALANCE_BUCKETS } from "../Result.js"
import type { RankWork } from "../StepModel.js"
import type { TraceRequest } from "../Trace.js"
import { CountedSamples } from "./countedSamples.js"
import { pooledRules } from "./pooled.js"
import { type Hooks, Rank, type RankParams } from "./rank.js"
import type { Req } from "./req.js"
import { roomStream } from "./rng.js"
import { Router } from "./router.js"
import { SloCount } from "./sloCount.js"
import { LatencySamples } from "./stats.js"

/** A step model's input row, reused across steps (the step model reads it and keeps nothing). */
export type MutableWork = { -readonly [K in keyof RankWork]: RankWork[K] }

/** Ranks that step together: all of them under `lockstep`, else each rank alone. */
export interface Group {
  /** The group's index in `Run.groups` (how the engine names it). */
  readonly index: number
  readonly ranks: ReadonlyArray<Rank>
  /** One work row per rank of the group, reused every step. */
  readonly works: ReadonlyArray<MutableWork>
  /** The global rank of each of `ranks` (what `rankFaults` name). */
  readonly ids: ReadonlyArray<number>
  /** The current step's sync wait per rank (read by the step log). */
  waits: ReadonlyArray<number> | undefined
  busy: boolean
  startSeconds: number
  stepSeconds: number
  endSeconds: number
  /** When the current forward veto began (NaN: not vetoed). */
  vetoSince: number
}

export interface Run {
  readonly c: ResolvedSimConfig
  /**
   * The requests to replay. A request's record (`Req`) is made when it arrives and, unless
   * `recordRequests` keeps it in `kept`, is dropped when it finishes or is rejected: what a result
   * needs of it is summed in `progress`.
   */
  readonly trace: ReadonlyArray<TraceRequest>
  /** Request i's bootstrap room when its trace row has none (drawn in arrival order). */
  readonly nextRoom: () => string
  /** Every request's record by trace index, with `recordRequests` (none for those that never arrived). */
  readonly kept: Array<Req | undefined> | undefined
  /** Time to first token / end to end of each finished request. */
  readonly ttft: LatencySamples
  readonly e2e: LatencySamples
  finished: number
  rejected: number
  /** The latest finish and first-scheduled time among the finished requests (NaN: none scheduled). */
  lastFinishSeconds: number
  lastScheduledSeconds: number
  readonly ranks: ReadonlyArray<Rank>
  readonly groups: ReadonlyArray<Group>
  /** The group of each rank. */
  readonly groupOf: ReadonlyArray<number>
  readonly router: Router
  /** The engine's side of the run: its group protocol and load path (`engines/<name>/`). */
  readonly engine: EngineRun
  /** Arrivals not routed yet, in arrival order, when the engine routes per iteration (`EngineRun.fetch`). */
  readonly held: Array<Req> | undefined
  readonly itl: CountedSamples
  readonly hooks: Hooks
  /** Per-request SLO judgement (with `c.slo`). */
  readonly slo: SloCount | undefined
  readonly imbalanceCounts: Array<number>
  readonly stepLog: Array<StepRecord> | undefined
  readonly sampleEvery: number
  readonly sampleSeconds: Array<number>
  readonly samplePerRank: ReadonlyArray<Array<number>>
  readonly onProgress: ((done: number, total: number) => void) | undefined
  readonly progressEvery: number
  /** Simulated time (seconds). */
  t: number
  /** The next arrival (index into `trace`). */
  next: number
  /** Requests finished or rejected. */
  done: number
  nextSample: number
  steps: number
  rankSeconds: number
  syncWaitSeconds: number
  forwardStallSeconds: number
  idleRankSteps: number
  rankSteps: number
}

const newWork = (): MutableWork => ({
  attentionPairs: 0,
  tokens: 0,
  numDecodes: 0,
  extendTokens: 0,
  numRequests: 0,
  numExtends: 0,
  kvReadPairs: undefined,
  denseKvReadPairs: undefined
})

/** The run at t = 0: requests (with their bootstrap rooms), idle ranks and groups, the router. */
export const newRun = (
  c: ResolvedSimConfig,
  trace: ReadonlyArray<TraceRequest>,
  make: (o: PolicyOptions) => Policy<unknown>,
  onProgress: ((done: number, total: number) => void) | undefined
): Run => {
  const n = c.dpSize
  // a config that names no registered engine is refused before it gets here
  const model = findEngine(c.engine)!
  // the balance bound's pooled rank (`Bound.ts`) fills its batches its own way
  const rules = (c as RankParams).pooledChunkTokens === undefined ? model.rank : pooledRules(model.rank)
  const ranks = Array.from({ length: n }, (_, i) => new Rank(i, c, rules))
  const groups: Array<Group> = (c.lockstep ? [ranks] : ranks.map((r) => [r])).map((rs, index) => ({
    index,
    ranks: rs,
    works: rs.map(newWork),
    ids: rs.map((r) => r.id),
    waits: undefined,
    busy: false,
    startSeconds: 0,
    stepSeconds: 0,
    endSeconds: 0,
    vetoSince: Number.NaN
  }))
  // the engines' running-request cap and step cost, as a router's operator configures them (the
  // cost fitted from this run's step model by probing it, as `stepCostFrom` documents)
  const stepCost = stepCostFrom(
    (probe) => c.stepModel(probe.map((r) => ({ ...r, numRequests: r.numDecodes + r.numExtends }))),
    { dpSize: n, chunkTokens: c.chunkedPrefillTokens }
  )
  const router = new Router(
    (o) => make({ ...o, maxRunningRequests: c.maxRunningRequests, stepCost }),
    n,
    c.frontEnds,
    c.seed
  )
  const engine = model.start({ config: c, groups: groups.map((g) => g.ranks), observe: router.observe })
  const span = trace.length > 0 ? trace[trace.length - 1]!.arrivalSeconds : 0
  const run: Run = {
    c,
    trace,
    nextRoom: roomStream(c.seed),
    kept: c.recordRequests ? new Array<Req | undefined>(trace.length).fill(undefined) : undefined,
    ttft: new LatencySamples(),
    e2e: new LatencySamples(),
    finished: 0,
    rejected: 0,
    lastFinishSeconds: 0,
    lastScheduledSeconds: Number.NaN,
    ranks,
    groups,
    groupOf: ranks.map((_, i) => (c.lockstep ? 0 : i)),
    router,
    engine,
    held: engine.fetch === undefined ? undefined : [],
    itl: new CountedSamples(),
    hooks: {
      onFinish: (r: Req, now: number) => {
        router.finish(r, now)
        progress(run, r)
      }
    },
    slo: c.slo === undefined ? undefined : new SloCount(c.slo, trace.length),
    imbalanceCounts: new Array<number>(IMBALANCE_BUCKETS.length + 1).fill(0),
    stepLog: c.recordSteps ? [] : undefined,
    sampleEvery: Math.max(span / Math.max(1, c.loadSamples), 1e-3),
    sampleSeconds: [],
    samplePerRank: ranks.map(() => []),
    onProgress,
    progressEvery: Math.max(1, Math.floor(trace.length / 200)),
    t: 0,
    next: 0,
    done: 0,
    nextSample: 0,
    steps: 0,
    rankSeconds: 0,
    syncWaitSeconds: 0,
    forwardStallSeconds: 0,
    idleRankSteps: 0,
    rankSteps: 0
  }
  return run
}

/** The latest of `a` and `b` that is a number (NaN when neither is). */
export const laterOf = (a: number, b: number): number => (b > a || Number.isNaN(a) ? b : a)

/**
 * A request finished or was rejected: count it, add its latencies (and judge it against the SLO),
 * and report progress every `progressEvery`. After this nothing of the request is kept (unless
 * `recordRequests`).
 */
export const progress = (run: Run, r: Req): void => {
  run.done++
  if (r.rejected !== undefined) run.rejected++
  else if (!Number.isNaN(r.finishSeconds)) {
    run.finished++
    run.ttft.push(r.firstTokenSeconds - r.t.arrivalSeconds)
    run.e2e.push(r.finishSeconds - r.t.arrivalSeconds)
    if (r.finishSeconds > run.lastFinishSeconds) run.lastFinishSeconds = r.finishSeconds
    run.lastScheduledSeconds = laterOf(run.lastScheduledSeconds, r.firstScheduledSeconds)
  }
  run.slo?.judge(r)
  if (run.onProgress && run.done % run.progressEvery === 0) run.onProgress(run.done, run.trace.length)
}

/** The status to end with when the engine reports a fault (a bad protocol message: a simulator bug). */
export const engineFault = (run: Run, f: EngineFault | undefined): SimStatus | undefined =>
  f === undefined ? undefined : { _tag: "NoProgress", atSeconds: run.t, ranks: f.ranks, message: f.message }

/** NoProgress: `held` ranks hold requests that cannot run; `causes` names each empty rank and why. */
export const noProgress = (
  run: Run,
  held: ReadonlyArray<number>,
  causes: ReadonlyArray<{ readonly rank: number; readonly cause: string }>,
  why: string
): SimStatus => ({
  _tag: "NoProgress",
  atSeconds: run.t,
  ranks: held,
  causes,
  message: `no progress at t=${run.t}s: ${causes.map((x) => `rank ${x.rank}: ${x.cause}`).join("; ")}${why}`
})
