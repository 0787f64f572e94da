/**
 * Goodput over replications (the method is in `Goodput.ts`'s header): one policy's estimate with
 * its Student t interval over the windows' goodputs (`estimateGoodput`), and the paired
 * comparison of two policies on the same windows (`compareGoodput`, per-window log ratios).
 *
 * @since 0.5.0
 */
import { createRequire } from "node:module"
import type { GoodputError } from "./Goodput.js"

const goodputError = (message: string, field?: string): GoodputError => ({
  _tag: "GoodputError",
  message,
  field
})

const positive = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x) && x > 0

type Jstat = typeof import("jstat").default
let jstat: Jstat | undefined
/**
 * Student's t quantile with `dof` degrees of freedom (jstat). jstat (CommonJS) is loaded on the
 * first interval, not at import: it takes about 60 ms of CPU to load, which every replay that
 * never asks for an interval would pay.
 */
const tQuantile = (p: number, dof: number): number => {
  jstat ??= createRequire(import.meta.url)("jstat") as Jstat
  return jstat.jStat.studentt.inv(p, dof)
}

/** Mean and the half-width of its two-sided t interval at `confidence`. */
const tInterval = (xs: ReadonlyArray<number>, confidence: number): { mean: number; half: number } => {
  const k = xs.length
  let mean = 0
  for (const x of xs) mean += x / k
  let ss = 0
  for (const x of xs) ss += (x - mean) ** 2
  const sd = Math.sqrt(ss / (k - 1))
  return { mean, half: tQuantile(1 - (1 - confidence) / 2, k - 1) * (sd / Math.sqrt(k)) }
}

const checkConfidence = (confidence: number): GoodputError | undefined =>
  confidence > 0 && confidence < 1
    ? undefined
    : goodputError(`confidence must be in (0, 1), got ${String(confidence)}`, "confidence")

/**
 * A goodput estimate over replications: `requestsPerSecond`, the mean of the windows' goodputs
 * (requests per second); `ci` its two-sided Student t interval at `confidence` ([lo, hi], requests
 * per second, lo clipped at 0); `rate` and `rateCi`, the same as multipliers of `traceRequestsPerSecond`
 * (the whole trace's mean arrival rate); `windows`, each window's goodput in requests per second
 * (0 where the SLO was unattainable; `unattainable` counts them).
 *
 * @category goodput
 * @since 0.5.0
 */
export interface GoodputEstimate {
  readonly _tag: "GoodputEstimate"
  readonly requestsPerSecond: number
  readonly ci: readonly [number, number]
  readonly rate: number
  readonly rateCi: readonly [number, number]
  readonly confidence: number
  readonly windows: ReadonlyArray<number>
  readonly unattainable: number
}

/**
 * Estimate goodput from per-window goodputs (requests per second, one per window, at least 2):
 * the mean with its two-sided Student t interval at `confidence` (default 0.95), and the same as a
 * multiplier of `traceRequestsPerSecond`.
 *
 * @example
 * ```ts
 * import { estimateGoodput } from "@loadledger/sim"
 * const e = estimateGoodput([9, 10, 11, 10], 5)
 * e._tag === "GoodputEstimate" && e.requestsPerSecond // => 10
 * e._tag === "GoodputEstimate" && e.rate // => 2
 * // sd 0.816, t(0.975, 3) = 3.182: 10 +- 1.30
 * e._tag === "GoodputEstimate" && e.ci.map((x) => +x.toFixed(2)) // => [8.7, 11.3]
 * estimateGoodput([10], 5)._tag // => "GoodputError"
 * ```
 *
 * @category goodput
 * @since 0.5.0
 */
export const estimateGoodput = (
  windows: ReadonlyArray<number>,
  traceRequestsPerSecond: number,
  confidence = 0.95
): GoodputEstimate | GoodputError => {
  if (windows.length < 2 || windows.some((g) => !(Number.isFinite(g) && g >= 0)))
    return goodputError("at least 2 window goodputs, each a finite number >= 0, are needed", "windows")
  if (!positive(traceRequestsPerSecond))
    return goodputError("traceRequestsPerSecond must be a positive number", "traceRequestsPerSecond")
  const bad = checkConfidence(confidence)
  if (bad) return bad
  const { mean, half } = tInterval(windows, confidence)
  const ci = [Math.max(0, mean - half), mean + half] as const
  return {
    _tag: "GoodputEstimate",
    requestsPerSecond: mean,
    ci,
    rate: mean / traceRequestsPerSecond,
    rateCi: [ci[0] / traceRequestsPerSecond, ci[1] / traceRequestsPerSecond],
    confidence,
    windows,
    unattainable: windows.filter((g) => g === 0).length
  }
}

/**
 * A paired comparison of two policies' goodputs on the same windows. `ratio` is the geometric mean
 * of the per-window ratios `g_a / g_b` (1.05: A sustains 5% more); `ci` the interval of that ratio
 * at `confidence` (a Student t interval on the per-window log ratios, exponentiated). `verdict`:
 * `"better"` or `"worse"` only when the interval excludes 1 (A's goodput above / below B's),
 * `"no significant difference"` otherwise, `"not comparable"` when a window's goodput is 0 for one
 * of them only (the SLO unattainable there: no ratio), with `reason`. Windows where it is 0 for
 * both are left out (`excludedWindows`): they say nothing about either (e.g. a burst of requests
 * arriving at one instant, which no rate scaling spreads, that no placement serves in time).
 *
 * @category goodput
 * @since 0.5.0
 */
export interface GoodputComparison {
  readonly _tag: "GoodputComparison"
  readonly ratio: number
  readonly ci: readonly [number, number]
  readonly confidence: number
  readonly verdict: "better" | "worse" | "no significant difference" | "not comparable"
  readonly reason?: string | undefined
  /** Windows left out because the SLO is unattainable there for both policies. */
  readonly excludedWindows: number
}

/**
 * Compare policy A with policy B on the same windows (`a[k]` and `b[k]` are their goodputs on
 * window k, requests per second): the paired log-ratio t interval. Each interval is at
 * `confidence` on its own (not adjusted for how many comparisons a table makes).
 *
 * @example
 * ```ts
 * import { compareGoodput } from "@loadledger/sim"
 * const c = compareGoodput([10.5, 21, 15.75, 12.6], [10, 20, 15, 12])
 * c._tag === "GoodputComparison" && c.verdict // => "better"
 * c._tag === "GoodputComparison" && +c.ratio.toFixed(3) // => 1.05
 * const n = compareGoodput([10.5, 19, 15.75, 11.6], [10, 20, 15, 12])
 * n._tag === "GoodputComparison" && n.verdict // => "no significant difference"
 * const z = compareGoodput([0, 20], [10, 20])
 * z._tag === "GoodputComparison" && z.verdict // => "not comparable"
 * // a window unattainable for both is left out
 * const both = compareGoodput([0, 10.5, 21, 15.75, 12.6], [0, 10, 20, 15, 12])
 * both._tag === "GoodputComparison" && [both.verdict, both.excludedWindows] // => ["better", 1]
 * ```
 *
 * @category goodput
 * @since 0.5.0
 */
export const compareGoodput = (
  a: ReadonlyArray<number>,
  b: ReadonlyArray<number>,
  confidence = 0.95
): GoodputComparison | GoodputError => {
  if (a.length !== b.length || a.length < 2)
    return goodputError("both policies need the same windows, at least 2", "windows")
  const bad = checkConfidence(confidence)
  if (bad) return bad
  // a window where the SLO is unattainable for both tells nothing about either: left out
  const kept = a.flatMap((g, k) => (g > 0 || b[k]! > 0 ? [k] : []))
  const excluded = a.length - kept.length
  const zero = kept.find((k) => !(a[k]! > 0) || !(b[k]! > 0))
  const notComparable = (reason: string): GoodputComparison => ({
    _tag: "GoodputComparison",
    ratio: Number.NaN,
    ci: [Number.NaN, Number.NaN],
    confidence,
    verdict: "not comparable",
    reason,
    excludedWindows: excluded
  })
  if (zero !== undefined)
    return notComparable(
      `the SLO is unattainable in window ${zero} for ${!(a[zero]! > 0) ? "the first" : "the second"} policy only`
    )
  if (kept.length < 2)
    return notComparable(
      `the SLO is unattainable for both in ${excluded} of ${a.length} windows: fewer than 2 left`
    )
  const logs = kept.map((k) => Math.log(a[k]! / b[k]!))
  const { mean, half } = tInterval(logs, confidence)
  const lo = mean - half
  const hi = mean + half
  return {
    _tag: "GoodputComparison",
    ratio: Math.exp(mean),
    ci: [Math.exp(lo), Math.exp(hi)],
    confidence,
    verdict: lo > 0 ? "better" : hi < 0 ? "worse" : "no significant difference",
    excludedWindows: excluded
  }
}
