/**
 * Which kind of slow is it? Reads a time series of per-rank load reports (SGLang `/v1/loads`) of a
 * lockstep DP group and says, per rank, `hardware` (slower at equal load), `load` (slow because it
 * holds more: `count`, `length` or `cache` skew) or `ok`, and for the group whether structural
 * slowness (every rank waiting with balanced tokens and no slow rank) is likely.
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
 * no load skew says "structural: expert hot spot";
 * the ranks then above `hardwareResidual` are `expert` (they hold the hot experts), not
 * `hardware`. Cure: EPLB (redundant experts, rebalanced placement), not new GPUs.
 *
 * @since 0.6.0
 */

/**
 * One rank's row of one report, as read from `/v1/loads` (`prefillTokens`: tokens prefilled
 * since the previous report).
 *
 * @category diagnose
 * @since 0.6.0
 */
export interface DiagnoseRow {
  readonly dpRank: number
  readonly numRunningReqs: number
  readonly numWaitingReqs?: number | undefined
  readonly numUsedTokens: number
  readonly utilization: number
  readonly cacheHitRate: number
  readonly prefillTokens: number
}

/**
 * The thresholds of the verdict: `hardware` when the median residual exceeds `hardwareResidual`;
 * `load` when a skew's median exceeds `loadSkew` (requests, tokens per request) or the cache hit
 * rate is `cacheGap` below the group's; structural when the mean wait share exceeds `structuralWait`
 * with no rank flagged; an expert hot spot when the ranks' residuals, the largest left out, spread
 * over more than `expertSpread` and over 0.4 of the slowest rank's residual, and no rank's load is
 * skewed.
 *
 * @category diagnose
 * @since 0.6.0
 */
export interface DiagnoseThresholds {
  readonly hardwareResidual: number
  readonly loadSkew: number
  readonly cacheGap: number
  readonly structuralWait: number
  readonly expertSpread: number
}

/**
 * The thresholds chosen on the benchmark's training seeds (`bench/diagnose.ts`, seeds 1-2; the
 * printed matrix uses other seeds).
 *
 * @example
 * ```ts
 * import { DEFAULT_THRESHOLDS } from "./diagnose.js"
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

/**
 * A rank's verdict and its evidence (medians over the reports where every rank was busy):
 * `utilizationRatio` (its forward time over the group's mean), `residual` (what load does not
 * explain), `requestSkew` (requests held, running + waiting, over the group's, less 1),
 * `lengthSkew` (KV tokens per running request over the group's, less 1), `cacheHitRateGap` (the group's mean hit rate less its own).
 *
 * @category diagnose
 * @since 0.6.0
 */
export interface RankVerdict {
  readonly dpRank: number
  readonly kind: "hardware" | "load" | "expert" | "ok"
  readonly skew?: "count" | "length" | "cache" | undefined
  readonly evidence: {
    readonly utilizationRatio: number
    readonly residual: number
    readonly requestSkew: number
    readonly lengthSkew: number
    readonly cacheHitRateGap: number
  }
}

/**
 * The whole diagnosis: per rank, and for the group (`syncWaitShare`: mean share of the busy time a
 * rank waits for the slowest; `requestImbalance`: median max over mean requests; `reports`: how
 * many reports had every rank busy; `fit`: the load coefficients; `minResidual`: the lowest
 * rank's median residual; `expertSpread`: the second-highest rank's less the lowest). `expertHotSpotLikely`: some rank is persistently faster than the
 * typical rank at equal load (see the module's note); `structuralLikely` is then true too.
 *
 * @category diagnose
 * @since 0.6.0
 */
export interface Diagnosis {
  readonly ranks: ReadonlyArray<RankVerdict>
  readonly group: {
    readonly structuralLikely: boolean
    readonly expertHotSpotLikely: boolean
    readonly evidence: {
      readonly syncWaitShare: number
      readonly requestImbalance: number
      readonly reports: number
      readonly fit: { readonly requests: number; readonly tokens: number; readonly prefill: number }
      readonly minResidual: number
      readonly expertSpread: number
    }
  }
}

/** An expert hot spot's spread is at least this share of the slowest rank's residual. */
const EXPERT_SPREAD_SHARE = 0.4

const mean = (xs: ReadonlyArray<number>): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)
const median = (xs: ReadonlyArray<number>): number => {
  if (xs.length === 0) return 0
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}
const rel = (x: number, m: number): number => (m > 0 ? x / m - 1 : 0)

/** Solve the 3x3 normal equations (ridge 1e-9); zeros when singular. */
const solve3 = (a: Array<Array<number>>, b: Array<number>): [number, number, number] => {
  for (let i = 0; i < 3; i++) a[i]![i]! += 1e-9
  const m = a.map((row, i) => [...row, b[i]!])
  for (let c = 0; c < 3; c++) {
    let p = c
    for (let r = c + 1; r < 3; r++) if (Math.abs(m[r]![c]!) > Math.abs(m[p]![c]!)) p = r
    ;[m[c], m[p]] = [m[p]!, m[c]!]
    if (Math.abs(m[c]![c]!) < 1e-12) return [0, 0, 0]
    for (let r = 0; r < 3; r++)
      if (r !== c) {
        const f = m[r]![c]! / m[c]![c]!
        for (let k = c; k < 4; k++) m[r]![k]! -= f * m[c]![k]!
      }
  }
  return [m[0]![3]! / m[0]![0]!, m[1]![3]! / m[1]![1]!, m[2]![3]! / m[2]![2]!]
}

/**
 * Diagnose a series of reports (each an array of rows, one per rank, same ranks throughout).
 * Pure. Reports where a rank is idle (no running request or no forward time) are left out.
 *
 * @example
 * ```ts
 * import { diagnose } from "./diagnose.js"
 * const row = (dpRank: number, n: number, u: number) => ({ dpRank, numRunningReqs: n, numUsedTokens: 1000 * n, utilization: u, cacheHitRate: 0, prefillTokens: 0 })
 * // rank 2 holds as many requests as the others but needs 1/0.7 of their forward time
 * const reports = [8, 10, 12, 9].map((n) => [row(0, n, 0.7), row(1, n + 1, 0.72), row(2, n, 1), row(3, n - 1, 0.68)])
 * diagnose(reports).ranks.map((r) => r.kind) // => ["ok", "ok", "hardware", "ok"]
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
  type Point = {
    report: number
    rank: number
    v: number
    res: number
    held: number
    x: [number, number, number]
    len: number
    gap: number
  }
  const points: Array<Point> = []
  const waits: Array<number> = []
  const imbalance: Array<number> = []
  busy.forEach((r, report) => {
    const mu = mean(r.map((l) => l.utilization))
    const mn = mean(r.map((l) => l.numRunningReqs))
    const held = (l: DiagnoseRow) => l.numRunningReqs + (l.numWaitingReqs ?? 0)
    const mh = mean(r.map(held))
    const mk = mean(r.map((l) => l.numUsedTokens))
    const mp = mean(r.map((l) => l.prefillTokens))
    const mc = mean(r.map((l) => l.cacheHitRate))
    const top = Math.max(...r.map((l) => l.utilization))
    const perReq = mk / mn
    for (const l of r) {
      waits.push(1 - l.utilization / top)
      points.push({
        report,
        rank: l.dpRank,
        res: 0,
        held: rel(held(l), mh),
        v: rel(l.utilization, mu),
        x: [rel(l.numRunningReqs, mn), rel(l.numUsedTokens, mk), rel(l.prefillTokens, mp)],
        len: rel(l.numUsedTokens / l.numRunningReqs, perReq),
        gap: mc - l.cacheHitRate
      })
    }
    imbalance.push(Math.max(...r.map((l) => l.numRunningReqs)) / mn)
  })
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
    const evidence = {
      utilizationRatio: 1 + median(mine.map((p) => p.v)),
      residual: median(mine.map((p) => p.res)),
      requestSkew: median(mine.map((p) => p.held)),
      lengthSkew: median(mine.map((p) => p.len)),
      cacheHitRateGap: median(mine.map((p) => p.gap))
    }
    const skew =
      evidence.requestSkew > t.loadSkew
        ? ("count" as const)
        : evidence.lengthSkew > t.loadSkew
          ? ("length" as const)
          : evidence.cacheHitRateGap > t.cacheGap
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
    const kind =
      evidence.residual > t.hardwareResidual
        ? hotSpot
          ? "expert"
          : "hardware"
        : skew !== undefined
          ? "load"
          : "ok"
    return kind === "load" ? { dpRank: rank, kind, skew, evidence } : { dpRank: rank, kind, evidence }
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
        fit: { requests: beta[0], tokens: beta[1], prefill: beta[2] },
        minResidual,
        expertSpread
      }
    }
  }
}
