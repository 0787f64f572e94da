/**
 * Which kind of slow is it? Reads a time series of per-rank load reports of a lockstep DP group
 * (SGLang `/v1/loads` lines for the CLI's `diagnose`, the polled rows for the live router's
 * diagnosis metrics) and says, per rank, `hardware` (slower at equal load), `load` (slow because it
 * holds more: `count`, `length` or `cache` skew), `expert` or `ok`, and for the group whether
 * structural slowness is likely. Pure: the CLI and the live router share it.
 *
 * The signal: in lockstep every rank runs the same steps, so generation throughput per request is
 * the same on every rank whatever its speed; what differs is each rank's own forward time
 * (`utilization`: the share of the time it is not waiting for the others). Per report, each rank's
 * utilization over the group's mean, less 1, is fitted by least squares (pooled over every rank
 * and report) on its relative load: requests, KV tokens and prefilled tokens over the group's
 * means, less 1. What load explains is `load`; a residual persistently above the others is
 * `hardware` (at speed s it is about 1/s - 1).
 *
 * An expert hot spot (an MoE routing skew: the GPUs holding the popular experts run longer expert
 * GEMMs, whichever requests they hold) moves every rank's residual, not one: the ranks holding
 * cold experts finish their MoE work early and wait, so residuals spread above and *below* the
 * typical rank's. One hardware-slow rank leaves its peers alike, so a wide spread of the residuals
 * with the largest left out (`expertSpread`; wide against the slowest rank's own residual too) and
 * no load skew says "structural: expert hot spot"; the ranks then above `hardwareResidual` are
 * `expert` (they hold the hot experts), not `hardware`. Cure: EPLB, not new GPUs.
 *
 * **Gotchas**: a slow link is not told from a slow GPU. SGLang publishes per rank one `utilization`
 * and `sglang:gpu_execution_seconds_total{category}` (GPU busy time by forward mode, collectives
 * inside it), vLLM no per-rank time at all; neither has a collective (communication) time field
 * (sgl-project/sglang `python/sglang/srt/metrics/collector.py` @ 00ae9c15). A degraded link
 * lengthens the rank's time at equal load as a slow GPU does, so it is `hardware` with
 * `causes: ["gpu", "cpu", "link"]`; tell them apart off the reports (nccl-tests on the rank's
 * links, the GPU's clocks). Absent fields stay unknown: without `numWaitingReqs` the count skew is
 * the running requests' alone, without `cacheHitRate` no `cache` skew is judged.
 *
 * @since 0.6.0
 */
import type {
  DiagnoseRow,
  DiagnoseThresholds,
  Diagnosis,
  HardwareCause,
  RankVerdict
} from "./DiagnoseTypes.js"
import { mean, median, medianOf, rel, solve3 } from "./internal/diagnoseMath.js"

/**
 * The diagnosis' shapes (`DiagnoseTypes.ts`), re-exported so `@loadledger/live/diagnose` carries
 * them: `DiagnoseRow`, `DiagnoseThresholds`, `Diagnosis`, `HardwareCause`, `RankVerdict`.
 *
 * @example
 * ```ts
 * import type { DiagnoseRow } from "@loadledger/live/diagnose"
 * const row: DiagnoseRow = { dpRank: 0, numRunningReqs: 4, numUsedTokens: 4000, utilization: 0.8 }
 * row.numWaitingReqs // => undefined
 * ```
 *
 * @category diagnose
 * @since 0.7.0
 */
export type {
  DiagnoseRow,
  DiagnoseThresholds,
  Diagnosis,
  HardwareCause,
  RankVerdict
} from "./DiagnoseTypes.js"

/**
 * The thresholds chosen on the benchmark's training seeds (`bench/diagnose.ts`, seeds 1-2; the
 * printed matrix uses other seeds).
 *
 * @example
 * ```ts
 * import { DEFAULT_THRESHOLDS } from "@loadledger/live"
 * DEFAULT_THRESHOLDS.hardwareResidual > 0 // => true
 * ```
 *
 * @category diagnose
 * @since 0.6.0
 */
export const DEFAULT_THRESHOLDS: DiagnoseThresholds = {
  hardwareResidual: 0.05,
  loadSkew: 0.2,
  cacheGap: 0.15,
  structuralWait: 0.15,
  expertSpread: 0.015
}

/** An expert hot spot's spread is at least this share of the slowest rank's residual. */
const EXPERT_SPREAD_SHARE = 0.4
/** What a hardware verdict may be (the reports do not separate them). */
const CAUSES: ReadonlyArray<HardwareCause> = ["gpu", "cpu", "link"]

interface Point {
  readonly report: number
  readonly rank: number
  readonly v: number
  res: number
  readonly held: number | undefined
  readonly x: readonly [number, number, number]
  readonly len: number
  readonly gap: number | undefined
}

/** Each busy report's points (relative load and utilization), its wait shares and imbalance. */
const pointsOf = (busy: ReadonlyArray<ReadonlyArray<DiagnoseRow>>) => {
  const points: Array<Point> = []
  const waits: Array<number> = []
  const imbalance: Array<number> = []
  let prefillKnown = false
  busy.forEach((r, report) => {
    const mu = mean(r.map((l) => l.utilization))
    const mn = mean(r.map((l) => l.numRunningReqs))
    // waiting known on every rank, or the held count is unknown for the report
    const waitingKnown = r.every((l) => l.numWaitingReqs !== undefined)
    const mh = mean(r.map((l) => l.numRunningReqs + (l.numWaitingReqs ?? 0)))
    const mk = mean(r.map((l) => l.numUsedTokens))
    const prefill = r.every((l) => l.prefillTokens !== undefined)
    if (prefill) prefillKnown = true
    const mp = mean(r.map((l) => l.prefillTokens ?? 0))
    const rates = r.flatMap((l) => (l.cacheHitRate === undefined ? [] : [l.cacheHitRate]))
    const mc = mean(rates)
    const top = Math.max(...r.map((l) => l.utilization))
    const perReq = mk / mn
    for (const l of r) {
      waits.push(1 - l.utilization / top)
      points.push({
        report,
        rank: l.dpRank,
        res: 0,
        held: waitingKnown ? rel(l.numRunningReqs + l.numWaitingReqs!, mh) : undefined,
        v: rel(l.utilization, mu),
        x: [rel(l.numRunningReqs, mn), rel(l.numUsedTokens, mk), prefill ? rel(l.prefillTokens!, mp) : 0],
        len: rel(l.numUsedTokens / l.numRunningReqs, perReq),
        gap: l.cacheHitRate === undefined || rates.length < 2 ? undefined : mc - l.cacheHitRate
      })
    }
    imbalance.push(Math.max(...r.map((l) => l.numRunningReqs)) / mn)
  })
  return { points, waits, imbalance, prefillKnown }
}

const known = (xs: ReadonlyArray<number | undefined>): Array<number> =>
  xs.flatMap((x) => (x === undefined ? [] : [x]))

/**
 * Diagnose a series of reports (each an array of rows, one per rank, same ranks throughout).
 * Pure. Reports where a rank is idle (no running request or no forward time) are left out.
 *
 * @example
 * ```ts
 * import { diagnose } from "@loadledger/live"
 * const row = (dpRank: number, n: number, u: number) => ({ dpRank, numRunningReqs: n, numUsedTokens: 1000 * n, utilization: u })
 * // rank 2 holds as many requests as the others but needs 1/0.7 of their forward time
 * const reports = [8, 10, 12, 9].map((n) => [row(0, n, 0.7), row(1, n + 1, 0.72), row(2, n, 1), row(3, n - 1, 0.68)])
 * const d = diagnose(reports)
 * d.ranks.map((r) => r.kind) // => ["ok", "ok", "hardware", "ok"]
 * d.ranks[2]!.causes // => ["gpu", "cpu", "link"]
 * d.ranks[2]!.evidence.cacheHitRateGap // => undefined
 * ```
 *
 * @category diagnose
 * @since 0.6.0
 */
export const diagnose = (
  reports: ReadonlyArray<ReadonlyArray<DiagnoseRow>>,
  t: DiagnoseThresholds = DEFAULT_THRESHOLDS
): Diagnosis => {
  const busy = reports.filter(
    (r) => r.length > 1 && r.every((l) => l.numRunningReqs > 0 && l.utilization > 0)
  )
  const dp = Math.max(0, ...reports.map((r) => r.length))
  const { points, waits, imbalance, prefillKnown } = pointsOf(busy)
  const ata = [0, 1, 2].map(() => [0, 0, 0])
  const atb = [0, 0, 0]
  for (const p of points)
    for (let i = 0; i < 3; i++) {
      atb[i]! += p.x[i]! * p.v
      for (let j = 0; j < 3; j++) ata[i]![j]! += p.x[i]! * p.x[j]!
    }
  const beta = solve3(ata, atb)
  // each point's residual, less its report's median residual (the typical rank is the reference)
  for (const p of points) p.res = p.v - (beta[0] * p.x[0] + beta[1] * p.x[1] + beta[2] * p.x[2])
  const byReport = busy.map((_, i) => median(points.filter((p) => p.report === i).map((p) => p.res)))
  for (const p of points) p.res -= byReport[p.report]!
  const judged = Array.from({ length: dp }, (_, rank) => {
    const mine = points.filter((p) => p.rank === rank)
    const requestSkew = medianOf(known(mine.map((p) => p.held)))
    const cacheHitRateGap = medianOf(known(mine.map((p) => p.gap)))
    const evidence = {
      utilizationRatio: 1 + median(mine.map((p) => p.v)),
      residual: median(mine.map((p) => p.res)),
      runningSkew: median(mine.map((p) => p.x[0])),
      ...(requestSkew === undefined ? {} : { requestSkew }),
      lengthSkew: median(mine.map((p) => p.len)),
      ...(cacheHitRateGap === undefined ? {} : { cacheHitRateGap })
    }
    const skew =
      (requestSkew ?? evidence.runningSkew) > t.loadSkew
        ? ("count" as const)
        : evidence.lengthSkew > t.loadSkew
          ? ("length" as const)
          : (cacheHitRateGap ?? 0) > t.cacheGap
            ? ("cache" as const)
            : undefined
    return { evidence, skew }
  })
  const sorted = judged.map((j) => j.evidence.residual).sort((a, b) => a - b)
  const minResidual = busy.length > 0 ? sorted[0]! : 0
  // the residuals' spread without the slowest rank: one slow GPU leaves its peers alike, a hot spot
  // spreads them (hot experts above, cold ones below); with a skewed rank the fit may just miss its load
  const expertSpread = busy.length > 0 && dp > 2 ? sorted[dp - 2]! - sorted[0]! : 0
  // and against the slowest rank's residual: one slow GPU stands far above a spread its peers'
  // noise makes (in the benchmark under 0.15 of it), a hot spot's hottest rank does not (over 0.5)
  const top = busy.length > 0 ? sorted[dp - 1]! : 0
  const hotSpot =
    expertSpread > t.expertSpread &&
    expertSpread > EXPERT_SPREAD_SHARE * top &&
    judged.every((j) => j.skew === undefined)
  const ranks: Array<RankVerdict> = judged.map(({ evidence, skew }, rank) => {
    if (evidence.residual > t.hardwareResidual)
      return hotSpot
        ? { dpRank: rank, kind: "expert", evidence }
        : { dpRank: rank, kind: "hardware", causes: CAUSES, evidence }
    return skew !== undefined
      ? { dpRank: rank, kind: "load", skew, evidence }
      : { dpRank: rank, kind: "ok", evidence }
  })
  const syncWaitShare = mean(waits)
  return {
    ranks,
    group: {
      structuralLikely:
        hotSpot ||
        (busy.length > 0 && syncWaitShare > t.structuralWait && ranks.every((r) => r.kind === "ok")),
      expertHotSpotLikely: hotSpot,
      evidence: {
        syncWaitShare,
        requestImbalance: median(imbalance),
        reports: busy.length,
        fit: { requests: beta[0], tokens: beta[1], ...(prefillKnown ? { prefill: beta[2] } : {}) },
        minResidual,
        expertSpread
      }
    }
  }
}
