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
import type { SimStatus } from "../Result.js"
import type { TraceRequest } from "../Trace.js"
import { Arrivals, isProblem, shapeOf, type TraceShape } from "./arrivals.js"
import { endAtTimeLimit, endWithoutEvents } from "./ends.js"
import { arriveAll, publish, routeHeld } from "./events.js"
import { neverRoutes, withDefaultsForInvalid } from "./invalidRun.js"
import { endLoop, type RawRun } from "./loopEnd.js"
import { engineFault, newRun, type Run } from "./run.js"
import { completeStep } from "./stepEnd.js"
import { startStep } from "./stepStart.js"

export type { RawRun } from "./loopEnd.js"

/** Step 1: every idle group tries to start a step now. */
const startIdleGroups = (run: Run): SimStatus | undefined => {
  // an engine that routes per iteration assigns its held arrivals before an idle group steps
  if (run.held !== undefined && run.held.length > 0 && run.groups.some((g) => !g.busy)) routeHeld(run)
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

/**
 * The next arrival's time (infinite when every request has arrived); closed loop
 * (`maxConcurrency`): infinite while that many are in flight, else no earlier than now.
 */
const nextArrival = (run: Run, arrivals: Arrivals): number => {
  const t = arrivals.peek()?.arrivalSeconds ?? Number.POSITIVE_INFINITY
  const cap = run.c.maxConcurrency
  if (cap === undefined) return t
  return arrivals.taken - run.done >= cap ? Number.POSITIVE_INFINITY : Math.max(t, run.t)
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

/** `runEvents` stopped where the next arrival is not read yet (an async trace's buffer is empty). */
export const NEED_INPUT = "NeedInput" as const

/** Steps 1-3 until the run ends; its status (Completed when every event has happened). */
const runEvents = (run: Run, arrivals: Arrivals): SimStatus | typeof NEED_INPUT => {
  for (;;) {
    // at the top of a round only, so a resumed run goes on exactly where it stopped
    if (arrivals.blocked()) return NEED_INPUT
    const started = startIdleGroups(run)
    if (started) return started
    const tStep = nextStepEnd(run)
    const tArr = nextArrival(run, arrivals)
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
