/**
 * The discrete-event loop: arrivals -> router -> ranks; groups of ranks step (all ranks in one
 * lockstep group, or one group per rank); the step model charges each step.
 *
 * **The step rule** (each step is a named function; the run's state is `run.ts`'s `Run`):
 * 1. `startIdleGroups`: at each instant every idle group tries to start a step
 *    (`stepStart.ts`): its ranks form their batches, the forward may be vetoed, the step model
 *    charges the step and the group is busy until `t + stepSeconds`.
 * 2. `nextEventTime`: the next instant is the earliest of a busy group's step end, the next
 *    arrival and the engine's next publish (vLLM's coordinator). With no step and no arrival left the run
 *    ends (`endWithoutEvents`: a vetoed forward that can never run is NoProgress); past
 *    `maxSimulatedSeconds` it ends (`endAtTimeLimit`).
 * 3. the clock moves to that instant and one kind of event happens, in this order of precedence
 *    at equal times: the steps that end then complete, in group order (`stepEnd.ts`); else the
 *    engine publishes; else every request arriving then arrives, in trace order
 *    (`events.ts`).
 * A status other than Completed from any step ends the run with that status.
 */
import type { Policy, PolicyOptions } from "@loadledger/policies"
import type { ResolvedSimConfig } from "../Config.js"
import { checkConfig } from "../Config.js"
import type { PublishRecord, SimStatus, StepRecord } from "../Result.js"
import { MAX_SYNTHETIC_TOKEN_IDS, traceTokenIds } from "../TokenIds.js"
import type { TraceTokenIds } from "../TokenIdsTypes.js"
import type { TraceRequest } from "../Trace.js"
import { Arrivals, isProblem, shapeOf, type TraceShape } from "./arrivals.js"
import { endAtTimeLimit, endWithoutEvents } from "./ends.js"
import { arriveAll, publish } from "./events.js"
import { neverRoutes, withDefaultsForInvalid } from "./invalidRun.js"
import type { Rank } from "./rank.js"
import type { Req } from "./req.js"
import { engineFault, laterOf, newRun, type Run } from "./run.js"
import type { CountedSamples, LatencySummary } from "./stats.js"
import { completeStep } from "./stepEnd.js"
import { startStep } from "./stepStart.js"
import { tokenIdsTally } from "./tokenTally.js"

export interface RawRun {
  readonly status: SimStatus
  /** The trace's request count, first and last arrival (0 for a trace that cannot run). */
  readonly count: number
  readonly firstArrivalSeconds: number
  readonly lastArrivalSeconds: number
  /** Where the requests' token ids come from (`traceTokenIds`). */
  readonly tokenIds: TraceTokenIds
  /**
   * The requests by trace index when they are at hand: an array trace, or a streamed one with
   * `recordRequests` (none of a trace that cannot run).
   */
  readonly rows: ReadonlyArray<TraceRequest> | undefined
  /** Every request's record by trace index (`recordRequests`; undefined: it never arrived). */
  readonly kept: ReadonlyArray<Req | undefined> | undefined
  readonly ranks: ReadonlyArray<Rank>
  readonly itl: CountedSamples
  readonly ttft: LatencySummary
  readonly e2e: LatencySummary
  readonly finished: number
  readonly rejected: number
  /** Unfinished requests on the ranks a NoProgress or Deadlock status names. */
  readonly stalled: number
  /** The latest finish (0: none). */
  readonly lastFinishSeconds: number
  /** The latest time a request was first scheduled (NaN: none was). */
  readonly lastScheduledSeconds: number
  readonly slo: Run["slo"]
  readonly steps: number
  readonly endSeconds: number
  readonly rankSeconds: number
  readonly syncWaitSeconds: number
  readonly forwardStallSeconds: number
  readonly idleRankSteps: number
  readonly rankSteps: number
  readonly imbalanceCounts: ReadonlyArray<number>
  readonly sampleSeconds: ReadonlyArray<number>
  readonly samplePerRank: ReadonlyArray<Array<number>>
  readonly stepLog: ReadonlyArray<StepRecord> | undefined
  readonly publishLog: ReadonlyArray<PublishRecord> | undefined
}

/** Step 1: every idle group tries to start a step now. */
const startIdleGroups = (run: Run): SimStatus | undefined => {
  for (const g of run.groups) {
    if (g.busy) continue
    const s = startStep(run, g)
    if (s) return s
  }
  return undefined
}

/** The earliest end of a step in flight (infinite when no group is busy). */
const nextStepEnd = (run: Run): number => {
  let tStep = Number.POSITIVE_INFINITY
  for (const g of run.groups) if (g.busy && g.endSeconds < tStep) tStep = g.endSeconds
  return tStep
}

/** The next arrival's time (infinite when every request has arrived). */
const nextArrival = (arrivals: Arrivals): number =>
  arrivals.peek()?.arrivalSeconds ?? Number.POSITIVE_INFINITY

/** Step 3, a step end: every group whose step ends now completes it, in group order. */
const completeSteps = (run: Run): SimStatus | undefined => {
  for (let gi = 0; gi < run.groups.length; gi++) {
    const g = run.groups[gi]!
    if (!g.busy || g.endSeconds !== run.t) continue
    const s = completeStep(run, gi, g)
    if (s) return s
  }
  return undefined
}

/** Steps 1-3 until the run ends; its status (Completed when every event has happened). */
/** `runEvents` stopped where the next arrival is not read yet (an async trace's buffer is empty). */
export const NEED_INPUT = "NeedInput" as const

const runEvents = (run: Run, arrivals: Arrivals): SimStatus | typeof NEED_INPUT => {
  for (;;) {
    // at the top of a round only, so a resumed run goes on exactly where it stopped
    if (arrivals.blocked()) return NEED_INPUT
    const started = startIdleGroups(run)
    if (started) return started
    const tStep = nextStepEnd(run)
    const tArr = nextArrival(arrivals)
    // a streamed request the simulator cannot run, or a stream longer than its stated count
    if (arrivals.problem) return { _tag: "InvalidConfig", ...arrivals.problem }
    if (tStep === Number.POSITIVE_INFINITY && tArr === Number.POSITIVE_INFINITY)
      return endWithoutEvents(run) ?? { _tag: "Completed" }
    const tPub = run.engine.nextPublishSeconds
    const tNext = Math.min(tStep, tArr, tPub)
    if (tNext > run.c.maxSimulatedSeconds) return endAtTimeLimit(run, arrivals) ?? { _tag: "Completed" }
    run.t = tNext
    if (tStep === tNext) {
      const s = completeSteps(run)
      if (s) return s
      if (run.c.sloStopEarly && run.slo?.hopeless)
        return {
          _tag: "SloMissed",
          atSeconds: run.t,
          message: `stopped at t=${run.t}s: ${run.slo.judged - run.slo.met} requests already missed the SLO, more than its target allows`
        }
    } else if (tPub === tNext) {
      const s = publish(run)
      if (s) return s
    } else arriveAll(run, arrivals)
  }
}

/** What `newRun` reads of a streamed trace: its length and last arrival (it holds no request). */
const shapeOnly = (shape: TraceShape): ReadonlyArray<TraceRequest> =>
  ({
    length: shape.count,
    [shape.count - 1]: { arrivalSeconds: shape.lastArrivalSeconds }
  }) as unknown as ReadonlyArray<TraceRequest>

const NO_TRACE: TraceShape = { count: 0, lastArrivalSeconds: 0 }

/**
 * A run that may wait for its input: `resume` runs events until the run ends (its status) or the
 * next arrival is not read yet (`NEED_INPUT`: read more, then resume); `end` summarises it.
 */
export interface Loop {
  readonly arrivals: Arrivals
  readonly resume: () => SimStatus | typeof NEED_INPUT
  readonly end: (status: SimStatus) => RawRun
}

/** `openLoop` run to its end at once (a trace read synchronously never waits). */
export const runLoop = (
  c: ResolvedSimConfig,
  trace: Iterable<TraceRequest>,
  make: (o: PolicyOptions) => Policy<unknown>,
  onProgress?: (done: number, total: number) => void
): RawRun => {
  const loop = openLoop(c, trace, make, onProgress)
  const s = loop.resume()
  return loop.end(s === NEED_INPUT ? { _tag: "Completed" } : s)
}

export const openLoop = (
  c: ResolvedSimConfig,
  trace: Iterable<TraceRequest>,
  make: (o: PolicyOptions) => Policy<unknown>,
  onProgress?: (done: number, total: number) => void
): Loop => {
  // a policy without `make` (e.g. a made policy where its registry entry belongs) names `policy`
  const badConfig =
    typeof make === "function"
      ? checkConfig(c)
      : {
          field: "policy",
          message: "policy must be { name, make(options) }, e.g. a registry entry from findPolicy(name)"
        }
  const isArray = Array.isArray(trace)
  // a bad config: an array trace is not checked (its requests are counted), a stream not read
  const found = badConfig ? NO_TRACE : shapeOf(trace)
  const invalid = badConfig ?? (isProblem(found) ? found : undefined)
  // a trace that cannot run is not built into requests either
  const shape = isProblem(found)
    ? NO_TRACE
    : badConfig && isArray
      ? { count: trace.length, lastArrivalSeconds: trace.at(-1)?.arrivalSeconds ?? 0 }
      : found
  const ran: ReadonlyArray<TraceRequest> = isArray ? (isProblem(found) ? [] : trace) : shapeOnly(shape)
  const arrivals = new Arrivals(
    isArray ? ran : invalid ? [] : trace,
    !isArray,
    invalid ? NO_TRACE : shape,
    !isArray && c.recordRequests === true ? [] : undefined
  )
  const run = newRun(
    invalid ? withDefaultsForInvalid(c) : c,
    ran,
    typeof make === "function" ? make : () => neverRoutes as Policy<unknown>,
    onProgress
  )
  const first: SimStatus | undefined = invalid
    ? { _tag: "InvalidConfig", ...invalid }
    : engineFault(run, run.engine.fault)
  return {
    arrivals,
    resume: () => first ?? runEvents(run, arrivals),
    end: (s) => endLoop(run, arrivals, s, shape, isArray, invalid !== undefined, ran)
  }
}

const endLoop = (
  run: Run,
  arrivals: Arrivals,
  s: SimStatus,
  shape: TraceShape,
  isArray: boolean,
  invalid: boolean,
  ran: ReadonlyArray<TraceRequest>
): RawRun => {
  const onProgress = run.onProgress
  let status = s
  // a stream left unread (a run that stopped early) is read to its end: its token ids' tally
  if (!isArray && !invalid) {
    arrivals.drain()
    if (arrivals.problem && status._tag !== "InvalidConfig")
      status = { _tag: "InvalidConfig", ...arrivals.problem }
  }
  onProgress?.(run.done, shape.count)
  for (const r of run.ranks) r.settle()
  // what is still on the ranks: unfinished (stalled when its rank is stuck), maybe scheduled
  const stuck = new Set(
    status._tag === "NoProgress"
      ? status.ranks
      : status._tag === "Deadlock"
        ? [...status.busyRanks, ...status.skippingRanks]
        : []
  )
  let stalled = 0
  let lastScheduled = run.lastScheduledSeconds
  for (const rank of run.ranks)
    rank.forEachHeld((r) => {
      if (stuck.has(rank.id)) stalled++
      lastScheduled = laterOf(lastScheduled, r.firstScheduledSeconds)
    })
  return {
    status,
    count: shape.count,
    firstArrivalSeconds: isArray
      ? (ran[0]?.arrivalSeconds ?? 0)
      : Number.isNaN(arrivals.firstArrivalSeconds)
        ? 0
        : arrivals.firstArrivalSeconds,
    lastArrivalSeconds: shape.count > 0 ? shape.lastArrivalSeconds : 0,
    tokenIds: isArray
      ? traceTokenIds(ran)
      : tokenIdsTally(arrivals.fromTrace, arrivals.blockHashes, shape.count, MAX_SYNTHETIC_TOKEN_IDS),
    rows: isArray ? ran : arrivals.rows,
    kept: run.kept,
    ranks: run.ranks,
    itl: run.itl,
    ttft: run.ttft.summary(),
    e2e: run.e2e.summary(),
    finished: run.finished,
    rejected: run.rejected,
    stalled,
    lastFinishSeconds: run.lastFinishSeconds,
    lastScheduledSeconds: lastScheduled,
    slo: run.slo,
    steps: run.steps,
    endSeconds: run.t,
    rankSeconds: run.rankSeconds,
    syncWaitSeconds: run.syncWaitSeconds,
    forwardStallSeconds: run.forwardStallSeconds,
    idleRankSteps: run.idleRankSteps,
    rankSteps: run.rankSteps,
    imbalanceCounts: run.imbalanceCounts,
    sampleSeconds: run.sampleSeconds,
    samplePerRank: run.samplePerRank,
    stepLog: run.stepLog,
    publishLog: run.engine.publishLog
  }
}
