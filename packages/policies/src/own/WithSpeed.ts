/**
 * `withSpeed`: the speed term (issue 33 item 3). Route around a slow GPU by weighing each rank's
 * token load by the speed it is learned to run at, so a hardware-slow rank receives work in
 * proportion to its speed. A `Policy -> Policy` wrapper that rewrites the rows its inner policy
 * observes, as `withStaleness` does.
 *
 * @since 0.8.0
 */
import type { Policy, RankLoad, RouteResult } from "../Policy.js"
import {
  defaultSpeedSettings,
  emptySpeeds,
  observeSpeeds,
  type SpeedEstimate,
  type SpeedSettings
} from "./internal/speedTerm.js"

/**
 * Options of {@link withSpeed}, every one optional: `smoothing` (0.1: the weight of each new
 * report, in (0, 1]), `floor` (0.3: the lowest speed a rank is believed to have, in (0, 1]),
 * `minUtilization` (0.05: busier rows only are learned from) and `name` (default: the inner name +
 * `"+speed"`).
 *
 * @category own policies
 * @since 0.8.0
 */
export interface SpeedOptions {
  readonly smoothing?: number | undefined
  readonly floor?: number | undefined
  readonly minUtilization?: number | undefined
  readonly name?: string | undefined
}

/**
 * The state of a {@link withSpeed} policy: the inner policy's state and each rank's learned speed
 * (`speeds`, 0..1 of the group's typical rank). Opaque and immutable.
 *
 * @category own policies
 * @since 0.8.0
 */
export interface SpeedState<S> {
  readonly inner: S
  readonly estimate: SpeedEstimate
  /** Per rank, the row the inner policy last observed (scaled), for the charge of a slow rank. */
  readonly rows: ReadonlyArray<RankLoad | undefined>
}

const inRange = (x: number | undefined, lo: number, hi: number, d: number): number =>
  x !== undefined && x > lo && x <= hi ? x : d

/**
 * A row's token fields in nominal-speed units: the tokens that would take a full-speed rank as long
 * as this rank takes with its own (its fixed part `fixed` included), `(x + fixed) / speed - fixed`.
 */
const scaled = (row: RankLoad, speed: number, fixed: number): RankLoad => {
  if (speed >= 1) return row
  const out: { -readonly [K in keyof RankLoad]: RankLoad[K] } = { ...row }
  if (row.numTotalTokens !== undefined) out.numTotalTokens = (row.numTotalTokens + fixed) / speed - fixed
  if (row.numWaitingUncachedTokens !== undefined)
    out.numWaitingUncachedTokens = row.numWaitingUncachedTokens / speed
  return out
}

/**
 * A policy that prices its ranks in seconds and can price each at a speed: `withSpeeds(state,
 * speeds)` is the state with rank r's seconds divided by `speeds[r]` (`makeStepTimeAware` is one).
 * {@link withSpeed} hands such an inner policy its beliefs this way instead of rescaling its rows.
 *
 * @category own policies
 * @since 0.8.0
 */
export interface SpeedPriced<S> extends Policy<S> {
  readonly withSpeeds: (state: S, speeds: ReadonlyArray<number>) => S
}

const isSpeedPriced = <S>(p: Policy<S>): p is SpeedPriced<S> =>
  typeof (p as Partial<SpeedPriced<S>>).withSpeeds === "function"

/**
 * Wrap a policy with the speed term. On every `observe` it learns each rank's speed from the rows
 * (SGLang's `utilization`, the share of the time a rank is not waiting for the others, against the
 * tokens it holds: see "Explanation") and hands the beliefs to the inner policy, one of two ways:
 *
 * - an inner policy that prices seconds ({@link SpeedPriced}: `step-time-aware`, the registered
 *   `speed-aware`) gets them as its `speeds`: each rank's predicted prefill wait, own prefill, decode
 *   and slot seconds are divided by its speed, so a request goes where it would finish soonest at the
 *   ranks' real speeds. Only the seconds a placement adds are priced: the fixed part of a step
 *   (weights, MoE, collectives), slowed on a slow rank whatever it holds, is no rank's cost, so a
 *   slow rank is not starved for a cost it pays anyway (issue 33: `ledger-balanced` in token units
 *   gave a rank at 0.5 15 of 2,000 requests, 22% idle rank-steps);
 * - any other policy (`ledger-balanced`) gets the rows with `numTotalTokens` and
 *   `numWaitingUncachedTokens` in full-speed units, `(tokens + fixed) / speed - fixed` (`fixed` the
 *   learned fixed part in tokens): a rank at 0.7 holding 700 tokens looks like one at full speed
 *   holding 1,000 or more; a request routed to a slow rank is charged `1 / speed` of its prompt
 *   tokens there, the same way.
 *
 * **Explanation**: in a lockstep DP group every rank runs every step, so throughput per request is
 * the group's and cannot tell a slow GPU from a fast one; a rank's own forward time can. Per
 * report, `u_r · ŝ_r = a + b · tokens_r` is fitted over the ranks (`ŝ` the current belief), each
 * rank's raw speed is `(a + b · tokens_r) / u_r` over the upper median rank's, and the belief moves by
 * `smoothing` towards it, within `[floor, 1]`. The floor means one bad window never exiles a rank
 * (its cost is at most `1 / floor` of its load); the smoothing is the recovery: once a rank runs at
 * full speed again its distance to 1 shrinks by `1 - smoothing` a report (22 reports from the floor
 * to within 0.1 at the defaults). Rows without `utilization` or a token count teach nothing: behind
 * them the wrapper is the inner policy, decision for decision. vLLM's `/metrics` and coordinator
 * rows carry no utilization, so the term learns nothing there. `details.speeds` in each routed
 * explanation lists the beliefs. Errors are the inner policy's.
 *
 * **When to use**: when a rank may be hardware-slow (a throttling GPU, a starved scheduler process)
 * and the ranks publish SGLang `/v1/loads` rows. The registered `speed-aware` is `step-time-aware`
 * inside it.
 *
 * @example
 * ```ts
 * import { makeLedgerBalanced, makeStepTimeAware, withSpeed } from "@loadledger/policies"
 * const p = withSpeed(makeLedgerBalanced())
 * // rank 1 is busy all the time with the same tokens as rank 0, which is busy half the time
 * const rows = (t: number) => [0.5, 1].map((utilization, dpRank) => ({
 *   dpRank, timestamp: t, numRunningReqs: 1, numWaitingReqs: 0, numTotalTokens: 1000, utilization
 * }))
 * let s = p.init(2)
 * for (let t = 1; t <= 40; t++) s = p.observe(s, rows(t), t)
 * s.estimate.speeds.map((x) => Number(x.toFixed(2))) // => [1, 0.5]
 * const r = p.route(s, { requestId: "a", inputLength: 10 }, 41)
 * r._tag === "Routed" && r.rank // => 0
 * // in seconds: rank 1's own prefill of a 4,000-token prompt is priced at its speed
 * const q = withSpeed(makeStepTimeAware())
 * let u = q.init(2)
 * for (let t = 1; t <= 40; t++) u = q.observe(u, rows(t), t)
 * const b = q.route(u, { requestId: "b", inputLength: 4000 }, 41)
 * const own = b._tag === "Routed" ? (b.explanation.details?.["terms"] as Array<number>) : []
 * Number((own[6]! / own[1]!).toFixed(2)) // => 2
 * b._tag === "Routed" && b.rank // => 0
 * ```
 *
 * @category own policies
 * @since 0.8.0
 */
export const withSpeed = <S>(inner: Policy<S>, options: SpeedOptions = {}): Policy<SpeedState<S>> => {
  const priced = isSpeedPriced(inner) ? inner : undefined
  const settings: SpeedSettings = {
    smoothing: inRange(options.smoothing, 0, 1, defaultSpeedSettings.smoothing),
    floor: inRange(options.floor, 0, 1, defaultSpeedSettings.floor),
    minUtilization: inRange(options.minUtilization, 0, 1, defaultSpeedSettings.minUtilization)
  }
  /**
   * The inner policy charged the request's prompt tokens at full speed; a slow rank's charge is
   * `1 / speed` of them: the rest is added to the row it last observed (same timestamp, so the
   * charge stays until a newer snapshot covers it).
   */
  const slowCharge = (s: SpeedState<S>, next: S, rank: number, inputLength: number, now: number) => {
    if (priced !== undefined) return { inner: next, estimate: s.estimate, rows: s.rows }
    const speed = s.estimate.speeds[rank] ?? 1
    const row = s.rows[rank]
    if (speed >= 1 || row?.numTotalTokens === undefined || (row.timestamp ?? now) > now)
      return { inner: next, estimate: s.estimate, rows: s.rows }
    const bumped = { ...row, numTotalTokens: row.numTotalTokens + inputLength * (1 / speed - 1) }
    const rows = [...s.rows]
    rows[rank] = bumped
    return { inner: inner.observe(next, [bumped], now), estimate: s.estimate, rows }
  }
  const wrap = (
    s: SpeedState<S>,
    r: RouteResult<S>,
    inputLength: number,
    now: number
  ): RouteResult<SpeedState<S>> => {
    if (r._tag === "PolicyError")
      return r.state === undefined ? r : { ...r, state: { ...s, inner: r.state as S } }
    return {
      ...r,
      state: slowCharge(s, r.state, r.rank, inputLength, now),
      explanation: { ...r.explanation, details: { ...r.explanation.details, speeds: s.estimate.speeds } }
    }
  }
  const charge = inner.charge
  return {
    name: options.name ?? `${inner.name}+speed`,
    init: (dpSize) => ({
      inner: inner.init(dpSize),
      estimate: emptySpeeds(dpSize),
      rows: new Array<RankLoad | undefined>(dpSize).fill(undefined)
    }),
    observe: (s, loads, now) => {
      if (!Number.isFinite(now)) return s
      const estimate = observeSpeeds(s.estimate, loads, now, settings)
      if (priced !== undefined) {
        const next = priced.observe(s.inner, loads, now)
        return { inner: priced.withSpeeds(next, estimate.speeds), estimate, rows: s.rows }
      }
      const rows = loads.map((row) => scaled(row, estimate.speeds[row.dpRank] ?? 1, estimate.fixedTokens))
      const held = [...s.rows]
      for (const row of rows) if (row.dpRank >= 0 && row.dpRank < held.length) held[row.dpRank] = row
      return { inner: inner.observe(s.inner, rows, now), estimate, rows: held }
    },
    route: (s, request, now) => wrap(s, inner.route(s.inner, request, now), request.inputLength, now),
    finish: (s, ids, now) => {
      const next = inner.finish(s.inner, ids, now)
      return next === s.inner ? s : { ...s, inner: next }
    },
    setStatus: (s, status) => {
      const next = inner.setStatus(s.inner, status)
      return next === s.inner ? s : { ...s, inner: next }
    },
    ...(charge === undefined
      ? {}
      : { charge: (s, request, now) => wrap(s, charge(s.inner, request, now), request.inputLength, now) })
  }
}
