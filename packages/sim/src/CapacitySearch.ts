/**
 * The capacity search as a pure step (`capacityStep`: the probes so far in, the next rate or the
 * answer out) and an asynchronous driver (`searchCapacity`) that runs its probes wherever the
 * caller says (worker threads, other machines), several at a time by speculation, with the same
 * probes and the same answer as `findCapacity`.
 *
 * @since 0.5.0
 */

import type { Capacity, CapacityError, CapacityOptions, CapacityProbe } from "./CapacityTypes.js"
import type { PolicyResult } from "./Result.js"
import type { TraceRequest } from "./Trace.js"

/**
 * The fewest requests a trace needs for `keptUp` to judge a run and for the capacity search to
 * start: with fewer, a backlog cannot be told from one request's own queueing.
 *
 * @example
 * ```ts
 * import { CAPACITY_MIN_REQUESTS } from "@loadledger/sim"
 * CAPACITY_MIN_REQUESTS // => 100
 * ```
 *
 * @category capacity
 * @since 0.5.0
 */
export const CAPACITY_MIN_REQUESTS = 100

/**
 * What the search does next: probe `rate`, or stop with the `Capacity` found or a `CapacityError`.
 *
 * @category capacity
 * @since 0.5.0
 */
export type CapacityStep = { readonly _tag: "Probe"; readonly rate: number } | Capacity | CapacityError

const positive = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x) && x > 0

/**
 * The next step of `findCapacity`'s search, given the probes run so far (in order, each at the
 * rate the previous step asked for): the next rate multiplier to probe, or the answer. Pure and
 * cheap (it replays the decisions of `probes`, at most `maxProbes` of them), so a caller can run
 * the probes itself, anywhere, and get exactly `findCapacity`'s probes and answer. The search
 * reads only each probe's `rate`, `keepsUp` and `result.requests.rejected`. Options and errors as
 * `findCapacity` (whose docs give the rules: bracket by doubling or halving from `start`, then
 * bisect geometrically to `precision`).
 *
 * **When to use**: to drive the capacity search yourself (`searchCapacity` does it with several
 * probes in flight); `findCapacity` otherwise.
 *
 * @example
 * ```ts
 * import { capacityStep, type CapacityProbe, type PolicyResult } from "@loadledger/sim"
 * const trace = Array.from({ length: 100 }, (_, i) => ({ requestId: `${i}`, arrivalSeconds: i, inputLength: 1, outputLength: 1 }))
 * const seen = (rate: number, keepsUp: boolean): CapacityProbe =>
 *   ({ rate, keepsUp, backlog: 0, result: { requests: { rejected: 0 } } as PolicyResult })
 * capacityStep(trace, "p", {}, []) // => { _tag: "Probe", rate: 1 }
 * capacityStep(trace, "p", {}, [seen(1, true)]) // => { _tag: "Probe", rate: 2 }
 * // kept up at 1x, not at 2x: bisect geometrically
 * capacityStep(trace, "p", {}, [seen(1, true), seen(2, false)]) // => { _tag: "Probe", rate: Math.SQRT2 }
 * capacityStep(trace, "p", { precision: 1 }, [seen(1, true), seen(2, false)])._tag // => "Capacity"
 * ```
 *
 * @category capacity
 * @since 0.5.0
 */
export const capacityStep = (
  trace: ReadonlyArray<TraceRequest>,
  policyName: string,
  options: Omit<CapacityOptions, "onProbe">,
  probes: ReadonlyArray<CapacityProbe>
): CapacityStep => {
  const error = (message: string, field?: string): CapacityError => ({
    _tag: "CapacityError",
    message,
    field,
    probes
  })
  const start = options.start ?? 1
  const precision = options.precision ?? 0.01
  const tolerance = options.tolerance ?? 0.02
  const maxProbes = options.maxProbes ?? 40
  for (const [field, v] of [
    ["start", start],
    ["precision", precision],
    ["tolerance", tolerance],
    ["maxProbes", maxProbes]
  ] as const)
    if (!positive(v)) return error(`${field} must be a positive number`, field)
  if (trace.length < CAPACITY_MIN_REQUESTS)
    return error(
      `the trace has ${trace.length} requests: at least ${CAPACITY_MIN_REQUESTS} are needed to tell a backlog`
    )
  const span = trace.at(-1)!.arrivalSeconds - trace[0]!.arrivalSeconds
  if (!(span > 0))
    return error("the trace's arrivals span no time: at least two distinct arrival times are needed")
  let i = 0
  // bracket: `low` keeps up, `high` does not
  let low: number | undefined
  let high: number | undefined
  let rate = start
  while (low === undefined || high === undefined) {
    if (i >= maxProbes) return error(`no rate bracketed within ${maxProbes} probes`, "maxProbes")
    const p = probes[i++]
    if (p === undefined) return { _tag: "Probe", rate }
    if (p.keepsUp) {
      low = rate
      rate *= 2
    } else {
      // halving the rate left as many rejections: they are not load, and no rate serves every request
      const above = probes[i - 2]
      const rejected = p.result.requests.rejected
      if (
        low === undefined &&
        above !== undefined &&
        rejected > 0 &&
        rejected >= above.result.requests.rejected
      )
        return error(
          `${policyName} rejected ${above.result.requests.rejected} of ${trace.length} requests at ${above.rate}x and ${rejected} at ${rate}x: the rejections do not fall with the rate (too large for the KV pool or the request limit, or the policy cannot place them), so no rate serves every request`
        )
      high = rate
      rate /= 2
    }
  }
  while (high / low > 1 + precision) {
    if (i >= maxProbes) return error(`not within precision after ${maxProbes} probes`, "maxProbes")
    const mid = Math.sqrt(low * high)
    const p = probes[i++]
    if (p === undefined) return { _tag: "Probe", rate: mid }
    if (p.keepsUp) low = mid
    else high = mid
  }
  return {
    _tag: "Capacity",
    rate: low,
    failedRate: high,
    requestsPerSecond: ((trace.length - 1) / span) * low,
    probes
  }
}

// a probe that never ran, to ask `capacityStep` where the search would go after each outcome
const NO_REJECTIONS = { requests: { rejected: 0 } } as PolicyResult
const supposed = (rate: number, keepsUp: boolean): CapacityProbe => ({
  rate,
  keepsUp,
  backlog: 0,
  result: NO_REJECTIONS
})

/**
 * A guess at the capacity from the probes so far, to order speculative probes (never to decide):
 * above capacity the queue grows with the trace, so a run at `rate` that fell behind by a backlog
 * `b` (a share of the arrival span) served about `rate / (1 + b)`; the lowest such run is the
 * closest. Without one (no run fell behind on its backlog alone), the last outcome goes on: a
 * bracket tends to keep doubling or halving.
 */
const guessKeepsUp = (probes: ReadonlyArray<CapacityProbe>): ((rate: number) => boolean) => {
  let nearest: CapacityProbe | undefined
  for (const p of probes)
    if (!p.keepsUp && p.result.requests.rejected === 0 && Number.isFinite(p.backlog) && p.backlog > 0)
      if (nearest === undefined || p.rate < nearest.rate) nearest = p
  if (nearest === undefined) {
    const last = probes.at(-1)?.keepsUp ?? true
    return () => last
  }
  const capacity = nearest.rate / (1 + nearest.backlog)
  return (rate) => rate <= capacity
}

/**
 * The first `k` distinct rates the search may need next, most likely first: the next rate, then
 * the rates after each outcome of it (the guessed outcome first, `guessKeepsUp`), breadth first.
 */
const upcoming = (
  trace: ReadonlyArray<TraceRequest>,
  options: Omit<CapacityOptions, "onProbe">,
  probes: ReadonlyArray<CapacityProbe>,
  k: number
): ReadonlyArray<number> => {
  const rates: Array<number> = []
  const queue: Array<ReadonlyArray<CapacityProbe>> = [probes]
  const guess = guessKeepsUp(probes)
  // the tree is at most maxProbes deep; a few nodes past k are enough (a rate may repeat)
  for (let q = 0; q < queue.length && q < 4 * k && rates.length < k; q++) {
    const path = queue[q]!
    const s = capacityStep(trace, "", options, path)
    if (s._tag !== "Probe") continue
    if (!rates.includes(s.rate)) rates.push(s.rate)
    const likely = guess(s.rate)
    for (const keepsUp of [likely, !likely]) queue.push([...path, supposed(s.rate, keepsUp)])
  }
  return rates
}

/**
 * `findCapacity` with the probes run by `probeAt` (a replay at a rate multiplier, e.g. on a worker
 * thread: `capacityProbe` there) and up to `options.parallel` of them at a time (default 1). The
 * search is sequential, so the extra probes are speculative: while the next rate runs, so do the
 * rates the search goes to after either outcome, breadth first, and a probe whose rate the search
 * does not take is dropped (its result unused; it is not cancelled). With 2 in flight the search
 * waits for about two thirds as many probes' time as with 1; with 3, half. The probes taken, their
 * order, `onProbe`'s calls and the answer are exactly `findCapacity`'s (`capacityStep` decides
 * every step; a speculative rate is the same number the search computes). A `probeAt` that
 * rejects for a rate the search takes rejects the search; for a dropped rate it is ignored.
 *
 * **When to use**: a capacity search on several cores or machines; `findCapacity` on one.
 *
 * @example
 * ```ts
 * import { capacityProbe, findCapacity, searchCapacity } from "@loadledger/sim"
 * import type { Policy } from "@loadledger/policies"
 * // one rank that needs 1 s per request, one request every 2 s at 1x: capacity about 2x
 * const one: Policy<null> = {
 *   name: "one", init: () => null, observe: (s) => s, finish: (s) => s, setStatus: (s) => s,
 *   route: (s) => ({ _tag: "Routed", rank: 0, state: s, explanation: {} })
 * }
 * const policy = { name: "one", make: () => one as Policy<unknown> }
 * const trace = Array.from({ length: 200 }, (_, i) => ({ requestId: `${i}`, arrivalSeconds: i * 2, inputLength: 1, outputLength: 1 }))
 * const config = {
 *   dpSize: 1, maxRunningRequests: 1,
 *   stepModel: (ranks: ReadonlyArray<unknown>) => ({ stepSeconds: 1, tokenImbalanceRatio: 1, ranks: ranks.map(() => ({ syncWaitSeconds: 0 })) })
 * }
 * const probeAt = async (rate: number) => capacityProbe(config, trace, policy, rate, 0.02)
 * const found = await searchCapacity(trace, "one", { parallel: 3 }, probeAt)
 * const same = findCapacity(config, trace, policy)
 * found._tag === "Capacity" && same._tag === "Capacity" && found.rate === same.rate // => true
 * found.probes.map((p) => p.rate).join() === same.probes.map((p) => p.rate).join() // => true
 * ```
 *
 * @category capacity
 * @since 0.5.0
 */
export const searchCapacity = async (
  trace: ReadonlyArray<TraceRequest>,
  policyName: string,
  options: CapacityOptions & { readonly parallel?: number | undefined },
  probeAt: (rate: number) => Promise<CapacityProbe>
): Promise<Capacity | CapacityError> => {
  const parallel = Math.max(1, Math.floor(options.parallel ?? 1))
  const probes: Array<CapacityProbe> = []
  const done = new Map<number, CapacityProbe>()
  const failed = new Map<number, unknown>()
  const running = new Map<number, Promise<void>>()
  for (;;) {
    let step = capacityStep(trace, policyName, options, probes)
    while (step._tag === "Probe" && done.has(step.rate)) {
      const p = done.get(step.rate)!
      probes.push(p)
      options.onProbe?.(p)
      step = capacityStep(trace, policyName, options, probes)
    }
    if (step._tag !== "Probe") return step
    if (failed.has(step.rate)) throw failed.get(step.rate)
    for (const rate of upcoming(trace, options, probes, parallel)) {
      if (running.size >= parallel) break
      if (done.has(rate) || running.has(rate) || failed.has(rate)) continue
      running.set(
        rate,
        probeAt(rate)
          .then(
            (p) => void done.set(rate, p),
            (e: unknown) => void failed.set(rate, e)
          )
          .finally(() => running.delete(rate))
      )
    }
    await Promise.race(running.values())
  }
}
