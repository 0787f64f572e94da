/**
 * `findCapacity`: the largest arrival rate a simulated DP group keeps up with, found by replaying
 * a trace at scaled rates (bracket, then bisection).
 *
 * @since 0.3.0
 */
import { CAPACITY_MIN_REQUESTS, capacityStep } from "./CapacitySearch.js"
import type { Capacity, CapacityError, CapacityOptions, CapacityProbe } from "./CapacityTypes.js"
import type { SimConfig } from "./Config.js"
import type { PolicyResult } from "./Result.js"
import type { SimPolicy } from "./SimPolicy.js"
import { simulate } from "./Simulate.js"
import { scaleTrace, type TraceRequest } from "./Trace.js"

/**
 * Did the group keep up with the arrivals in this run? It did when every request finished (status
 * `Completed`, none rejected, stalled or left over) and the backlog left at the last arrival was
 * small: the last request to start started within `tolerance` x the arrival span of the last
 * arrival. Below capacity requests start seconds after they arrive; above it the queue grows with
 * the trace and the last ones start a backlog later (a long request's own service time does not
 * count: only when requests start). A run that rejected any request did not keep up, whatever the
 * reason (too large for the KV pool or the request limit, or the policy could not place it): the
 * group did not serve the load it was given, and a policy that sheds load under pressure would
 * otherwise look as if it kept up at any rate. `undefined` (cannot tell) for a trace of fewer than
 * 100 requests or arrivals spanning no time, rejections or not, and for results written before 0.3.0.
 *
 * **When to use**: to tell a run at a sustainable load from one that fell behind or did not serve
 * every request (the sweep's verdict compares only policies that finished every request and kept
 * up; `findCapacity` bisects on it).
 *
 * @example
 * ```ts
 * import { keptUp, type PolicyResult } from "@loadledger/sim"
 * const run = { status: { _tag: "Completed" }, requests: { total: 1000, finished: 1000, unfinished: 0, rejected: 0, stalled: 0 }, firstArrivalSeconds: 0, lastArrivalSeconds: 1000 }
 * keptUp({ ...run, lastScheduledSeconds: 1003 } as PolicyResult) // => true
 * keptUp({ ...run, lastScheduledSeconds: 1300 } as PolicyResult) // => false
 * keptUp({ ...run, lastScheduledSeconds: 1300 } as PolicyResult, 0.5) // => true
 * keptUp({ ...run, requests: { ...run.requests, total: 10 }, lastScheduledSeconds: 1300 } as PolicyResult) // => undefined
 * // one request rejected (too large for the pool), the rest on time: did not keep up
 * const rejected = { total: 1000, finished: 999, unfinished: 1, rejected: 1, stalled: 0 }
 * keptUp({ ...run, requests: rejected, lastScheduledSeconds: 1003 } as PolicyResult) // => false
 * ```
 *
 * @category capacity
 * @since 0.3.0
 */
export const keptUp = (result: PolicyResult, tolerance = 0.02): boolean | undefined => {
  const span = result.lastArrivalSeconds - result.firstArrivalSeconds
  if (result.requests.total < CAPACITY_MIN_REQUESTS || !(span > 0)) return undefined
  const q = result.requests
  if (result.status._tag !== "Completed" || q.rejected > 0 || q.finished < q.total) return false
  const last = result.lastScheduledSeconds
  return last === undefined || last - result.lastArrivalSeconds <= tolerance * span
}

/**
 * One probe of the capacity search: `policy` on `config` replaying `trace` at `rate` x its arrival
 * rate (`scaleTrace`'s `rateScale`), whether it kept up (`keptUp` with `tolerance`; a result
 * `keptUp` cannot judge counts as not) and the backlog at the last arrival as a share of the
 * arrival span. `findCapacity` runs exactly this; a worker thread running it for
 * `searchCapacity` gives the same probe.
 *
 * @example
 * ```ts
 * import { capacityProbe } from "@loadledger/sim"
 * import type { Policy } from "@loadledger/policies"
 * const one: Policy<null> = {
 *   name: "one", init: () => null, observe: (s) => s, finish: (s) => s, setStatus: (s) => s,
 *   route: (s) => ({ _tag: "Routed", rank: 0, state: s, explanation: {} })
 * }
 * const trace = Array.from({ length: 200 }, (_, i) => ({ requestId: `${i}`, arrivalSeconds: i * 2, inputLength: 1, outputLength: 1 }))
 * const config = {
 *   dpSize: 1, maxRunningRequests: 1,
 *   stepModel: (ranks: ReadonlyArray<unknown>) => ({ stepSeconds: 1, tokenImbalanceRatio: 1, ranks: ranks.map(() => ({ syncWaitSeconds: 0 })) })
 * }
 * const policy = { name: "one", make: () => one as Policy<unknown> }
 * capacityProbe(config, trace, policy, 1, 0.02).keepsUp // => true
 * capacityProbe(config, trace, policy, 4, 0.02).keepsUp // => false
 * ```
 *
 * @category capacity
 * @since 0.5.0
 */
export const capacityProbe = (
  config: SimConfig,
  trace: ReadonlyArray<TraceRequest>,
  policy: SimPolicy,
  rate: number,
  tolerance: number
): CapacityProbe => {
  const result = simulate(config, scaleTrace(trace, { rateScale: rate }), policy)
  const span = result.lastArrivalSeconds - result.firstArrivalSeconds
  const backlog =
    ((result.lastScheduledSeconds ?? result.lastArrivalSeconds) - result.lastArrivalSeconds) / span
  return { rate, keepsUp: keptUp(result, tolerance) === true, backlog, result }
}

/**
 * Find the largest arrival-rate multiplier (as `scaleTrace`'s `rateScale`) at which `policy` on the
 * group `config` keeps up with `trace` (`keptUp`: every request finishes and the last one starts
 * within `tolerance` x the arrival span of the last arrival), and one at `rate x (1 + precision)` does not. Brackets from
 * `start` by doubling or halving, then bisects geometrically; every probe is a full `simulate`.
 * Deterministic: the same inputs give the same probes. The search itself is `capacityStep` (pure:
 * the probes so far in, the next rate out); `searchCapacity` runs its probes several at a time.
 *
 * **When to use**: to state a load as a share of capacity (70% of capacity = `0.7 x rate`), to
 * size a group for a trace, or to compare how much load policies sustain. The capacity is the
 * long-run one: a bursty trace at 90% of it still queues during its bursts.
 *
 * Vidur's capacity search (microsoft/vidur, `vidur/config_optimizer/config_explorer/capacity_search.py`)
 * bisects the rate under a bound on a scheduling-delay quantile; here the bound is the backlog at the
 * last arrival, a share of the trace's span, so no latency threshold has to be chosen.
 *
 * A probe that rejected requests did not keep up (`keptUp`). Rejections that grow with the load
 * (a policy that sheds requests when its ranks are full) mark the rates above capacity, like a
 * backlog; rejections that halving the rate does not reduce (requests too large for the KV pool or
 * the request limit, or a policy that cannot place them at all, e.g. one that honours pins on requests
 * pinned past the ranks) mean no rate serves every request: the search stops with an error naming
 * the counts rather than halving on to `maxProbes`.
 *
 * Errors (`CapacityError`, never a throw): `start`, `precision`, `tolerance` or `maxProbes` not a
 * positive number (`field` names it); fewer than 100 requests or arrivals spanning no time; requests
 * rejected at a rate and at least as many at half of it, before any probe kept up; no bracket
 * within `maxProbes`.
 *
 * @example
 * ```ts
 * import { findCapacity } from "@loadledger/sim"
 * import type { Policy } from "@loadledger/policies"
 * // one rank that needs 1 s per request: capacity is 1 request per second
 * const one: Policy<null> = {
 *   name: "one", init: () => null, observe: (s) => s, finish: (s) => s, setStatus: (s) => s,
 *   route: (s) => ({ _tag: "Routed", rank: 0, state: s, explanation: {} })
 * }
 * const trace = Array.from({ length: 200 }, (_, i) => ({ requestId: `${i}`, arrivalSeconds: i * 2, inputLength: 1, outputLength: 1 }))
 * const config = {
 *   dpSize: 1, maxRunningRequests: 1,
 *   stepModel: (ranks: ReadonlyArray<unknown>) => ({ stepSeconds: 1, tokenImbalanceRatio: 1, ranks: ranks.map(() => ({ syncWaitSeconds: 0 })) })
 * }
 * const found = findCapacity(config, trace, { name: "one", make: () => one as Policy<unknown> })
 * found._tag // => "Capacity"
 * found._tag === "Capacity" && Math.round(found.requestsPerSecond * 10) / 10 // => 1
 * findCapacity(config, trace, { name: "one", make: () => one as Policy<unknown> }, { precision: 0 })._tag
 * // => "CapacityError"
 * ```
 *
 * @category capacity
 * @since 0.3.0
 */
export const findCapacity = (
  config: SimConfig,
  trace: ReadonlyArray<TraceRequest>,
  policy: SimPolicy,
  options: CapacityOptions = {}
): Capacity | CapacityError => {
  // the search is `capacityStep`'s; this runs its probes one after another, here
  const probes: Array<CapacityProbe> = []
  for (;;) {
    const step = capacityStep(trace, policy.name, options, probes)
    if (step._tag !== "Probe") return step
    const p = capacityProbe(config, trace, policy, step.rate, options.tolerance ?? 0.02)
    probes.push(p)
    options.onProbe?.(p)
  }
}
