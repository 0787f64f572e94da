/**
 * The speed term's estimator (issue 33 item 3): each rank's speed, relative to its group's typical
 * rank, learned from the load reports the ranks publish. Pure: every function returns a new value;
 * time is the rows' `timestamp` (or the `now` of the poll), never a clock.
 *
 * The signal. In a lockstep DP group every rank runs every step, so generation throughput per
 * request (`genThroughput / numRunningReqs`) is the group's, whatever one rank's speed: it cannot
 * tell a slow GPU from a fast one. What differs is each rank's own forward time, the share of the
 * time it is not waiting for the others: SGLang's `utilization` (`/v1/loads`, 0..1). At nominal
 * speed a rank's forward time grows with the tokens it holds (`numTotalTokens`, else
 * `numUsedTokens`): `u = a + b x`, the same `a`, `b` for every rank of the group; a rank at speed
 * `s` takes `u = (a + b x) / s`. Per report the estimator fits `u_r · ŝ_r = a + b x_r` by least
 * squares (`ŝ` the current estimate, so a rank already known to be slow does not bend the fit;
 * `b > 0`; where the tokens do not vary, only the slope is fitted, through the fixed part learned so
 * far) and reads each rank's raw speed `(a + b x_r) / u_r` from the line fitted on the *other* ranks
 * (leave one out: a rank's own row never bends the line its speed is read from; with the line over
 * every rank, three ranks holding two token counts let a slow rank's corrected point fix the line
 * through itself, and its belief never moved again), divided by the upper median over the ranks (the
 * typical rank is 1); then again with the ranks found below 0.9 left out of every line (when two
 * others remain), and smooths it: `ŝ ← ŝ + smoothing · (raw - ŝ)`, kept within
 * `[floor, 1]`. The floor keeps a rank in the rotation (one bad window never exiles it: its cost is
 * at most `1 / floor` times its load), and the smoothing is the recovery: once a rank's raw speed is
 * back to 1, its distance to 1 shrinks by `1 - smoothing` per report (`pollsToRecover`). The fit's
 * `a / b` (`fixedTokens`, smoothed) is the part of a rank's forward time that does not move with
 * its tokens, in tokens: a slow rank spends `fixedTokens · (1/s - 1)` more on it.
 *
 * A report with fewer than two usable ranks (utilization in `[minUtilization, 1]`, a token count)
 * teaches nothing and leaves the estimate as it was; so does a rank's row whose `timestamp` is not
 * newer than the last one learned from (a repeated snapshot counts once).
 *
 * @internal
 */
import type { RankLoad } from "../../Policy.js"

/** The estimator's settings (see the module header). @internal */
export interface SpeedSettings {
  /** Weight of a new report, in (0, 1]. */
  readonly smoothing: number
  /** The lowest speed a rank is believed to have, in (0, 1]. */
  readonly floor: number
  /** Rows with a lower utilization (an idle rank) are not learned from. */
  readonly minUtilization: number
}

/** The defaults: 0.1 per report, floor 0.3, rows busier than 5%. @internal */
export const defaultSpeedSettings: SpeedSettings = { smoothing: 0.1, floor: 0.3, minUtilization: 0.05 }

/** Per rank: the believed speed (0..1] and the timestamp of the last row learned from. @internal */
export interface SpeedEstimate {
  readonly speeds: ReadonlyArray<number>
  readonly seenSeconds: ReadonlyArray<number>
  /**
   * The group's fixed forward time in token units, `a / b` of the fit (smoothed; at most 4 times
   * the report's mean tokens): the part of a step no placement moves. 0 until a fit has a slope.
   */
  readonly fixedTokens: number
  /** Reports learned from. */
  readonly reports: number
}

/** Every rank at nominal speed, nothing seen. @internal */
export const emptySpeeds = (dpSize: number): SpeedEstimate => ({
  speeds: new Array<number>(dpSize).fill(1),
  seenSeconds: new Array<number>(dpSize).fill(Number.NEGATIVE_INFINITY),
  fixedTokens: 0,
  reports: 0
})

/** Reports until a rank estimated at `from` is within `within` of 1 once its raw speed is 1. @internal */
export const pollsToRecover = (from: number, within: number, smoothing: number): number =>
  from >= 1 - within ? 0 : Math.ceil(Math.log(within / (1 - from)) / Math.log(1 - smoothing))

const tokensOf = (row: RankLoad): number | undefined => row.numTotalTokens ?? row.numUsedTokens

/** The upper median (of two ranks, the faster one: the typical rank is never the slow one). */
const upperMedian = (xs: Array<number>): number => {
  xs.sort((a, b) => a - b)
  return xs[xs.length >> 1]!
}

/** Sums of the points a line is fitted on: count, x, y, x², x·y. */
interface Sums {
  n: number
  x: number
  y: number
  xx: number
  xy: number
}

const sumsOf = (xs: ReadonlyArray<number>, ys: ReadonlyArray<number>, use: ReadonlyArray<boolean>): Sums => {
  const t = { n: 0, x: 0, y: 0, xx: 0, xy: 0 }
  for (let i = 0; i < xs.length; i++) {
    if (!use[i]) continue
    const x = xs[i]!
    const y = ys[i]!
    t.n++
    t.x += x
    t.y += y
    t.xx += x * x
    t.xy += x * y
  }
  return t
}

/** The sums without point `(x, y)` (a rank's own row, left out of the line its speed is read from). */
const without = (t: Sums, x: number, y: number): Sums => ({
  n: t.n - 1,
  x: t.x - x,
  y: t.y - y,
  xx: t.xx - x * x,
  xy: t.xy - x * y
})

/**
 * The least-squares line `y = a + b x` with `b > 0` through the summed points; when fewer than two
 * points, `x` does not vary or the slope is not positive, the line through `(-fixed, 0)` with the
 * learned fixed part (`y = b (x + fixed)`), and flat (`b = 0`) when even that has no positive slope.
 */
const fitLine = (t: Sums, fixed: number): { a: number; b: number; free: boolean } => {
  if (t.n <= 0) return { a: 0, b: 0, free: false }
  const mx = t.x / t.n
  const my = t.y / t.n
  const sxx = t.xx - t.n * mx * mx
  const sxy = t.xy - t.n * mx * my
  // relative tolerance: sums of large token counts leave rounding where x does not vary
  if (t.n >= 2 && sxx > 1e-9 * t.xx && sxy > 0) {
    const b = sxy / sxx
    return { a: my - b * mx, b, free: true }
  }
  const szz = t.xx + 2 * fixed * t.x + t.n * fixed * fixed
  const szy = t.xy + fixed * t.y
  if (szz > 0 && szy > 0) return { a: (szy / szz) * fixed, b: szy / szz, free: false }
  return { a: my, b: 0, free: false }
}

/**
 * Each rank's forward time at nominal speed over its own, over the typical rank's (upper median):
 * each rank's read from the line fitted on the others in `use` (all others when fewer than two of
 * them are), so a rank's own row never bends the line its speed is read from.
 */
const rawSpeeds = (
  xs: ReadonlyArray<number>,
  ys: ReadonlyArray<number>,
  us: ReadonlyArray<number>,
  use: ReadonlyArray<boolean>,
  fixed: number
): ReadonlyArray<number> | undefined => {
  const inUse = sumsOf(xs, ys, use)
  const all = sumsOf(
    xs,
    ys,
    xs.map(() => true)
  )
  const raw = xs.map((x, i) => {
    const own = use[i] ? without(inUse, x, ys[i]!) : inUse
    const line = fitLine(own.n >= 2 ? own : without(all, x, ys[i]!), fixed)
    return (line.a + line.b * x) / us[i]!
  })
  const typical = upperMedian([...raw])
  return typical > 0 ? raw.map((x) => x / typical) : undefined
}

/**
 * Learn from one report (the rows of one poll, any order; rows of ranks at or above `dpSize` are
 * ignored). `now` stands in for a row without a `timestamp`. @internal
 */
export const observeSpeeds = (
  est: SpeedEstimate,
  rows: ReadonlyArray<RankLoad>,
  now: number,
  settings: SpeedSettings = defaultSpeedSettings
): SpeedEstimate => {
  const ranks: Array<number> = []
  const xs: Array<number> = []
  const us: Array<number> = []
  const dpSize = est.speeds.length
  for (const row of rows) {
    const r = row.dpRank
    const u = row.utilization
    const x = tokensOf(row)
    const t = row.timestamp ?? now
    if (!(r >= 0 && r < dpSize) || u === undefined || x === undefined) continue
    if (!(u >= settings.minUtilization && u <= 1) || !(x >= 0) || !(t > est.seenSeconds[r]!)) continue
    if (ranks.includes(r)) continue
    ranks.push(r)
    xs.push(x)
    us.push(u)
  }
  if (ranks.length < 2) return est
  const ys = ranks.map((r, i) => us[i]! * est.speeds[r]!)
  // two passes: the ranks the first finds slow (below 0.9 of the typical) are left out of the lines
  // the second reads every rank's speed from
  const everyone = ranks.map(() => true)
  const first = rawSpeeds(xs, ys, us, everyone, est.fixedTokens)
  if (first === undefined) return est
  const keep = first.map((x) => x >= 0.9)
  const rel = keep.includes(false) ? rawSpeeds(xs, ys, us, keep, est.fixedTokens) : first
  if (rel === undefined) return est
  const { a, b, free } = fitLine(
    sumsOf(xs, ys, keep.filter(Boolean).length >= 2 ? keep : everyone),
    est.fixedTokens
  )
  const speeds = [...est.speeds]
  const seenSeconds = [...est.seenSeconds]
  ranks.forEach((r, i) => {
    const target = Math.min(1, Math.max(settings.floor, rel[i]!))
    const s = speeds[r]! + settings.smoothing * (target - speeds[r]!)
    speeds[r] = Math.min(1, Math.max(settings.floor, s))
    seenSeconds[r] = rows.find((row) => row.dpRank === r)?.timestamp ?? now
  })
  let meanTokens = 0
  for (const x of xs) meanTokens += x / xs.length
  const fixed = free ? Math.min(Math.max(0, a) / b, 4 * meanTokens) : est.fixedTokens
  const fixedTokens = est.fixedTokens + settings.smoothing * (fixed - est.fixedTokens)
  return { speeds, seenSeconds, fixedTokens, reports: est.reports + 1 }
}
