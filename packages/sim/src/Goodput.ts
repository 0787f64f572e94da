/**
 * Goodput under a latency SLO: the largest arrival rate at which a policy still meets the SLO
 * (`findGoodputRate`, a bisection on SLO attainment), replicated over disjoint windows of the
 * trace (`traceWindows`) into an estimate with a confidence interval (`estimateGoodput`), and
 * paired comparisons between policies on the same windows (`compareGoodput`).
 *
 * **The method, and why.** A trace is cut into `k` disjoint windows of consecutive requests (equal
 * counts). Each window is replayed on its own, from an idle group, and its goodput is the largest
 * rate multiplier whose run passes the SLO, found by bisection to `precision`; as requests per
 * second it is that multiplier x the window's own mean arrival rate. The windows are the
 * replications: they are real traffic (burstiness, length mix and prefix sharing as they were),
 * disjoint (no request is counted twice) and the same for every policy, so a comparison is paired:
 * for policies A and B the per-window log ratios `ln(g_A / g_B)` remove what the windows share
 * (a busy hour is busy for both) and a Student t interval over them gives "A beats B by x%
 * [lo, hi]". The estimate of one policy's goodput is the mean over windows with its t interval:
 * the goodput of a window of this length drawn from traffic like the trace's, which includes the
 * traffic's own variation from window to window (so single-policy intervals are wider than the
 * paired ones). The t interval assumes the windows are independent; adjacent windows of a real
 * trace are correlated (a slow drift across the day), which the paired ratio mostly cancels.
 * `bench/goodputCoverage.ts` checks the coverage on synthetic stationary traces whose true goodput
 * is known from many independent windows. Each window starts from an idle group: a warm-up of a
 * few seconds against windows of minutes.
 *
 * The estimate and the paired comparison over the windows' goodputs are in `GoodputEstimate.ts`.
 *
 * @since 0.5.0
 */
import type { PolicyResult } from "./Result.js"
import type { TraceRequest } from "./Trace.js"

/**
 * How `findGoodputRate` searches. Every field is optional.
 * - `start`: the first rate multiplier probed (default 1; multiplied or divided by `step` from there);
 * - `step`: the first factor of the bracketing phase (default 2; a start close to the answer
 *   brackets it in fewer replays with a small step, e.g. 1.05 from a similar policy's goodput; a
 *   step below 2 is squared after each replay that does not bracket, up to 2);
 * - `precision`: stop when the failing rate is within `1 + precision` of the passing one (default 0.01);
 * - `minRate`: below this multiplier the SLO counts as unattainable (default `start / 1024`);
 * - `maxProbes`: at most this many replays (default 40);
 * - `onProbe`: called after each replay (does not change the result).
 *
 * @category goodput
 * @since 0.5.0
 */
export interface GoodputSearchOptions {
  readonly start?: number | undefined
  readonly step?: number | undefined
  readonly precision?: number | undefined
  readonly minRate?: number | undefined
  readonly maxProbes?: number | undefined
  readonly onProbe?: ((probe: GoodputProbe) => void) | undefined
}

/**
 * One replay of the search: the rate multiplier, the attainment it reached (an upper bound when
 * `stoppedEarly`: the replay ended as soon as the SLO could no longer be met), and whether it passed.
 *
 * @category goodput
 * @since 0.5.0
 */
export interface GoodputProbe {
  readonly rate: number
  readonly attainment: number
  readonly passed: boolean
  readonly stoppedEarly: boolean
}

/**
 * What `findGoodputRate` found on one trace (or window): `rate`, the largest multiplier probed
 * that passed (0 when none down to `minRate` did: `attainable` false), `failedRate` the smallest
 * that failed (within `1 + precision` of `rate`), `requestsPerSecond` = `rate` x
 * `baseRequestsPerSecond` (the trace's own mean arrival rate, `(n - 1) / span`), every probe.
 *
 * @category goodput
 * @since 0.5.0
 */
export interface GoodputRate {
  readonly _tag: "GoodputRate"
  readonly rate: number
  readonly failedRate: number
  readonly requestsPerSecond: number
  readonly baseRequestsPerSecond: number
  readonly attainable: boolean
  readonly probes: ReadonlyArray<GoodputProbe>
}

/**
 * Why a goodput search or estimate could not be made: `field` names the option or input at fault.
 *
 * @category goodput
 * @since 0.5.0
 */
export interface GoodputError {
  readonly _tag: "GoodputError"
  readonly message: string
  readonly field?: string | undefined
}

const goodputError = (message: string, field?: string): GoodputError => ({
  _tag: "GoodputError",
  message,
  field
})

const positive = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x) && x > 0

/**
 * The mean arrival rate of a trace: `(n - 1) / span` requests per second; undefined with no span.
 *
 * @example
 * ```ts
 * import { meanArrivalRate } from "@loadledger/sim"
 * const trace = [0, 1, 2, 4].map((t, i) => ({ requestId: `${i}`, arrivalSeconds: t, inputLength: 10, outputLength: 2 }))
 * meanArrivalRate(trace) // => 0.75
 * meanArrivalRate(trace.slice(0, 1)) // => undefined
 * ```
 */
export const meanArrivalRate = (trace: ReadonlyArray<TraceRequest>): number | undefined => {
  if (trace.length < 2) return undefined
  const span = trace[trace.length - 1]!.arrivalSeconds - trace[0]!.arrivalSeconds
  return span > 0 ? (trace.length - 1) / span : undefined
}

/**
 * Find the largest arrival-rate multiplier at which a replay of `trace` passes its SLO. `replay`
 * runs the trace at a multiplier (arrival times divided by it) and returns the result, which must
 * carry `slo` (a `SimConfig` with `slo`; with `sloStopEarly` a hopeless probe ends early and costs
 * little). Brackets from `start` by doubling or halving, then bisects geometrically. A probe passes
 * when `result.slo.passed`: rejected and unfinished requests miss, so a run that fell behind, stalled
 * or rejected too many fails. Deterministic when `replay` is. Attainment need not be monotone in the
 * rate; the search returns one crossing, and every probe is listed.
 *
 * Errors (`GoodputError`, never a throw): an option not a positive number (`field` names it); a
 * trace of fewer than 2 requests or arrivals spanning no time (`trace`); a result without `slo`
 * (`slo`) or one whose config was refused (`config`, with the status message).
 *
 * @example
 * ```ts
 * import { findGoodputRate, type PolicyResult } from "@loadledger/sim"
 * // a made-up replay: attainment falls as the rate rises and passes (>= 0.9) up to 3x
 * const replay = (rate: number) => ({ status: { _tag: "Completed" }, slo: { attainment: rate <= 3 ? 0.95 : 0.5, passed: rate <= 3, stoppedEarly: rate > 3 } }) as PolicyResult
 * const trace = [0, 10].map((t, i) => ({ requestId: `${i}`, arrivalSeconds: t, inputLength: 1, outputLength: 1 }))
 * const found = findGoodputRate((_trace, rate) => replay(rate), trace)
 * found._tag === "GoodputRate" && found.rate >= 2.97 && found.rate <= 3 // => true
 * found._tag === "GoodputRate" && found.baseRequestsPerSecond // => 0.1
 * findGoodputRate((_t, rate) => replay(rate), trace, { precision: -1 })._tag // => "GoodputError"
 * // from a start near the answer, a small step brackets it in fewer replays
 * const near = findGoodputRate((_trace, rate) => replay(rate), trace, { start: 2.9, step: 1.05 })
 * near._tag === "GoodputRate" && [near.rate >= 2.97 && near.rate <= 3, near.probes.length] // => [true, 5]
 * ```
 *
 * @category goodput
 * @since 0.5.0
 */
export const findGoodputRate = (
  replay: (trace: ReadonlyArray<TraceRequest>, rate: number) => PolicyResult,
  trace: ReadonlyArray<TraceRequest>,
  options: GoodputSearchOptions = {}
): GoodputRate | GoodputError => {
  const start = options.start ?? 1
  const step = options.step ?? 2
  const precision = options.precision ?? 0.01
  const minRate = options.minRate ?? start / 1024
  const maxProbes = options.maxProbes ?? 40
  for (const [field, v] of [
    ["start", start],
    ["precision", precision],
    ["minRate", minRate],
    ["maxProbes", maxProbes]
  ] as const)
    if (!positive(v)) return goodputError(`${field} must be a positive number, got ${String(v)}`, field)
  if (!(step > 1)) return goodputError(`step must be a number > 1, got ${String(step)}`, "step")
  const base = meanArrivalRate(trace)
  if (base === undefined)
    return goodputError(
      "the trace needs at least 2 requests whose arrivals span some time to have a rate",
      "trace"
    )
  const probes: Array<GoodputProbe> = []
  let failure: GoodputError | undefined
  const run = (rate: number): boolean => {
    const scaled = rate === 1 ? trace : trace.map((r) => ({ ...r, arrivalSeconds: r.arrivalSeconds / rate }))
    const result = replay(scaled, rate)
    if (result.status._tag === "InvalidConfig") {
      failure = goodputError(`the replay's config was refused: ${result.status.message}`, "config")
      return false
    }
    if (result.slo === undefined) {
      failure = goodputError("the replay's result has no SLO attainment: give its config an slo", "slo")
      return false
    }
    const p: GoodputProbe = {
      rate,
      attainment: result.slo.attainment,
      passed: result.slo.passed,
      stoppedEarly: result.slo.stoppedEarly
    }
    probes.push(p)
    options.onProbe?.(p)
    return p.passed
  }
  const done = (low: number, high: number): GoodputRate => ({
    _tag: "GoodputRate",
    rate: low,
    failedRate: high,
    requestsPerSecond: low * base,
    baseRequestsPerSecond: base,
    attainable: low > 0,
    probes
  })
  let low = 0
  let high = Number.POSITIVE_INFINITY
  let rate = start
  let factor = step
  // bracket: `low` passes (0: none yet), `high` fails
  while (low === 0 || high === Number.POSITIVE_INFINITY) {
    if (probes.length >= maxProbes)
      return goodputError(`no rate bracketed within ${maxProbes} probes`, "maxProbes")
    const passed = run(rate)
    if (failure) return failure
    if (passed) {
      low = rate
      if (high !== Number.POSITIVE_INFINITY) break
      rate *= factor
    } else {
      high = rate
      if (low > 0) break
      if (rate / factor < minRate) return done(0, rate)
      rate /= factor
    }
    // a small step grows (squared, up to 2) while the bracket is not found: a start far from the
    // answer costs a few more replays, not hundreds
    factor = Math.min(2, factor * factor)
  }
  while (high / low > 1 + precision) {
    if (probes.length >= maxProbes) break
    const mid = Math.sqrt(low * high)
    const passed = run(mid)
    if (failure) return failure
    if (passed) low = mid
    else high = mid
  }
  return done(low, high)
}

/**
 * Cut `trace` (sorted by arrival) into `count` disjoint windows of consecutive requests, as equal
 * in size as they can be (the first `n mod count` windows hold one more), each shifted so its first
 * request arrives at 0. The replications of a goodput estimate.
 *
 * Errors: `count` not an integer >= 2, or a window of fewer than `minRequests` (default 20)
 * requests (`field` "windows").
 *
 * @example
 * ```ts
 * import { traceWindows } from "@loadledger/sim"
 * const trace = Array.from({ length: 50 }, (_, i) => ({ requestId: `${i}`, arrivalSeconds: 10 + i, inputLength: 1, outputLength: 1 }))
 * const w = traceWindows(trace, 2)
 * Array.isArray(w) && w.map((x) => x.length) // => [25, 25]
 * Array.isArray(w) && w[1]![0]!.arrivalSeconds // => 0
 * Array.isArray(w) && w[1]![0]!.requestId // => "25"
 * "_tag" in traceWindows(trace, 5) // => true
 * ```
 *
 * @category goodput
 * @since 0.5.0
 */
export const traceWindows = (
  trace: ReadonlyArray<TraceRequest>,
  count: number,
  minRequests = 20
): ReadonlyArray<ReadonlyArray<TraceRequest>> | GoodputError => {
  if (!(Number.isSafeInteger(count) && count >= 2))
    return goodputError(`windows must be an integer >= 2, got ${String(count)}`, "windows")
  const n = trace.length
  const size = Math.floor(n / count)
  if (size < minRequests)
    return goodputError(
      `${n} requests in ${count} windows leaves ${size} per window; at least ${minRequests} are needed (use fewer windows)`,
      "windows"
    )
  const extra = n % count
  const out: Array<ReadonlyArray<TraceRequest>> = []
  let at = 0
  for (let k = 0; k < count; k++) {
    const len = size + (k < extra ? 1 : 0)
    const slice = trace.slice(at, at + len)
    at += len
    const t0 = slice[0]!.arrivalSeconds
    out.push(t0 === 0 ? slice : slice.map((r) => ({ ...r, arrivalSeconds: r.arrivalSeconds - t0 })))
  }
  return out
}
