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
import { isTokenCount, isTokenId, type Policy, type PolicyOptions, policyError } from "@loadledger/policies"
import type { ResolvedSimConfig } from "../Config.js"
import { checkConfig, resolveConfig } from "../Config.js"
import type { PublishRecord, SimStatus, StepRecord } from "../Result.js"
import type { TraceRequest } from "../Trace.js"
import { arriveAll, publish } from "./events.js"
import type { Rank } from "./rank.js"
import type { Req } from "./req.js"
import { engineFault, laterOf, newRun, noProgress, type Run } from "./run.js"
import type { CountedSamples, LatencySummary } from "./stats.js"
import { completeStep } from "./stepEnd.js"
import { startStep } from "./stepStart.js"

export interface RawRun {
  readonly status: SimStatus
  /** The trace the run was built from: none of one that cannot run (an InvalidConfig naming it). */
  readonly trace: ReadonlyArray<TraceRequest>
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
const nextArrival = (run: Run): number =>
  run.next < run.trace.length ? run.trace[run.next]!.arrivalSeconds : Number.POSITIVE_INFINITY

/**
 * No step in flight and no arrival left: the run is over. Coordinator publishes (heartbeats
 * included) matter only while something is left to happen. A vetoed forward with no event left
 * to fill its empty ranks never runs: NoProgress, naming them.
 */
const endWithoutEvents = (run: Run): SimStatus | undefined => {
  for (const g of run.groups)
    if (!Number.isNaN(g.vetoSince) && g.ranks.some((r) => r.hasWork)) {
      const empty = g.ranks.filter((r) => !r.formed || r.batchTokens === 0)
      const waiting = g.ranks.filter((r) => r.hasWork && !empty.includes(r)).map((r) => r.id)
      const status = noProgress(
        run,
        g.ranks.filter((r) => r.hasWork).map((r) => r.id),
        empty.map((r) => ({ rank: r.id, cause: r.hasWork ? r.blockedReason() : "no request to run" })),
        ` (without dummy batches the forward of ranks ${waiting.join(",")} waits for the empty ranks, and no request is left to arrive)`
      )
      run.forwardStallSeconds += run.t - g.vetoSince
      g.vetoSince = Number.NaN
      return status
    }
  return undefined
}

/**
 * The next event is past `maxSimulatedSeconds`. Only a limit that leaves requests unfinished is
 * a TimeLimit (trailing wave dummy steps or coordinator publishes after the last request are
 * not); a vetoed forward's wait counts up to the end.
 */
const endAtTimeLimit = (run: Run): SimStatus | undefined => {
  const c = run.c
  let status: SimStatus | undefined
  if (run.next < run.trace.length || run.ranks.some((r) => r.hasWork)) {
    status = { _tag: "TimeLimit", atSeconds: c.maxSimulatedSeconds }
    run.t = c.maxSimulatedSeconds
  }
  for (const g of run.groups)
    if (!Number.isNaN(g.vetoSince)) run.forwardStallSeconds += Math.max(0, run.t - g.vetoSince)
  return status
}

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
const runEvents = (run: Run): SimStatus => {
  for (;;) {
    const started = startIdleGroups(run)
    if (started) return started
    const tStep = nextStepEnd(run)
    const tArr = nextArrival(run)
    if (tStep === Number.POSITIVE_INFINITY && tArr === Number.POSITIVE_INFINITY)
      return endWithoutEvents(run) ?? { _tag: "Completed" }
    const tPub = run.engine.nextPublishSeconds
    const tNext = Math.min(tStep, tArr, tPub)
    if (tNext > run.c.maxSimulatedSeconds) return endAtTimeLimit(run) ?? { _tag: "Completed" }
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
    } else arriveAll(run)
  }
}

/**
 * `c` with each field `checkConfig` refuses replaced by its default (`dpSize` 1, a constant step
 * model), so an `InvalidConfig` result is built from a run that never started, not from a throw.
 */
const withDefaultsForInvalid = (c: ResolvedSimConfig): ResolvedSimConfig => {
  const defaults = resolveConfig({
    dpSize: 1,
    stepModel: () => ({ stepSeconds: 0, tokenImbalanceRatio: 1, ranks: [] })
  })
  let safe = c
  // every default passes the check: one pass per bad field (bounded all the same)
  for (let i = 0, p = checkConfig(safe); p !== undefined && i < 64; i++, p = checkConfig(safe))
    safe = { ...safe, [p.field]: defaults[p.field as keyof ResolvedSimConfig] }
  return safe
}

/** Trace row `i`'s field `f` breaks `rule`. */
const badField = (i: number, f: string, rule: string, v: unknown) => ({
  field: `trace[${i}].${f}`,
  message: `trace[${i}].${f} must be ${rule}, got ${String(v)}`
})

/**
 * The first request of `trace` the simulator cannot run, named by its index and field: an arrival
 * that is not a finite number >= 0 (NaN spun forever, Infinity held every other request back), a
 * prompt that is not an integer >= 1 (0 ended in a contradictory NoProgress), an output that is not
 * an integer >= 0, a `requestId` that is not a string, `tokenIds` that are not an array of at most
 * `inputLength` token ids (`isTokenId`). `parseTrace` gives only valid requests; this guards traces
 * built by hand.
 */
const checkTrace = (
  trace: ReadonlyArray<TraceRequest>
): { readonly field: string; readonly message: string } | undefined => {
  if (!Array.isArray(trace)) return { field: "trace", message: "trace must be an array of requests" }
  for (let i = 0; i < trace.length; i++) {
    const r = trace[i] as TraceRequest | undefined
    // the field's name is built only for a bad request (one string per request was a tenth of a
    // large replay's allocation)
    if (typeof r !== "object" || r === null)
      return { field: `trace[${i}]`, message: `trace[${i}] must be a request object` }
    if (typeof r.requestId !== "string") return badField(i, "requestId", "a string", r.requestId)
    if (!(Number.isFinite(r.arrivalSeconds) && r.arrivalSeconds >= 0))
      return badField(i, "arrivalSeconds", "a finite number >= 0", r.arrivalSeconds)
    if (!(isTokenCount(r.inputLength) && r.inputLength >= 1))
      return badField(i, "inputLength", "an integer >= 1", r.inputLength)
    if (!isTokenCount(r.outputLength)) return badField(i, "outputLength", "an integer >= 0", r.outputLength)
    const ids = r.tokenIds
    if (ids !== undefined && !(Array.isArray(ids) && ids.length <= r.inputLength && ids.every(isTokenId)))
      return {
        field: `trace[${i}].tokenIds`,
        message: `trace[${i}].tokenIds must be absent or at most inputLength token ids (integers 0..4294967295)`
      }
  }
  return undefined
}

/** A policy that is never asked to route: what a run that does not start is built with. */
const neverRoutes: Policy<null> = {
  name: "none",
  init: () => null,
  observe: (s) => s,
  route: () => policyError("NoRanks", "the run did not start"),
  finish: (s) => s,
  setStatus: (s) => s
}

export const runLoop = (
  c: ResolvedSimConfig,
  trace: ReadonlyArray<TraceRequest>,
  make: (o: PolicyOptions) => Policy<unknown>,
  onProgress?: (done: number, total: number) => void
): RawRun => {
  // a policy without `make` (e.g. a made policy where its registry entry belongs) names `policy`
  const invalid =
    typeof make === "function"
      ? (checkConfig(c) ?? checkTrace(trace))
      : {
          field: "policy",
          message: "policy must be { name, make(options) }, e.g. a registry entry from findPolicy(name)"
        }
  // a trace that cannot run is not built into requests either
  const ran = invalid?.field.startsWith("trace") ? [] : trace
  const run = newRun(
    invalid ? withDefaultsForInvalid(c) : c,
    ran,
    typeof make === "function" ? make : () => neverRoutes as Policy<unknown>,
    onProgress
  )
  const status: SimStatus = invalid
    ? { _tag: "InvalidConfig", ...invalid }
    : (engineFault(run, run.engine.fault) ?? runEvents(run))
  onProgress?.(run.done, run.trace.length)
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
    trace: ran,
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
