/**
 * `loadledger goodput`'s leaderboard: every job (subject x window) run on worker threads or in
 * this thread, then the estimates, the ranking per engine, the verdicts and the curves.
 *
 * @since 0.5.0
 */
import { availableParallelism } from "node:os"
import {
  compareGoodput,
  estimateGoodput,
  type GoodputComparison,
  type GoodputEstimate,
  type GoodputProbe
} from "@loadledger/sim"
import { runJobs, workerEntry } from "../internal/pool.js"
import {
  type GoodputJob,
  type GoodputJobResult,
  type GoodputSetup,
  runGoodputJob,
  type Subject
} from "./jobs.js"

/** The rates of the curves, as shares of the best policy's goodput on each engine. */
export const CURVE_SHARES: ReadonlyArray<number> = [0.7, 0.85, 1, 1.15, 1.3]

/**
 * One subject's row of the leaderboard: its goodput estimate, its share of the balance bound
 * (ratio of the mean goodputs), its verdict against the engine's best policy (absent for the best
 * itself and for the bound), the curve (mean attainment and its t interval at each curve rate),
 * each window's probes, and the most requests any probe rejected.
 *
 * @category goodput
 * @since 0.5.0
 */
export interface LeaderboardRow {
  readonly policy: string
  readonly kind: Subject["kind"]
  readonly engine: "sglang" | "vllm"
  readonly goodput: GoodputEstimate
  readonly shareOfBound: number
  readonly vsBest?: GoodputComparison | undefined
  readonly curve: ReadonlyArray<{
    readonly rate: number
    readonly requestsPerSecond: number
    readonly attainment: number
    readonly ci: readonly [number, number]
  }>
  readonly probes: ReadonlyArray<ReadonlyArray<GoodputProbe>>
  readonly rejected: number
}

/**
 * The leaderboard of one engine: the rows ranked by mean goodput (registered policies, then the
 * clairvoyant reference and the balance bound last), the best policy, and every pairwise verdict
 * between the registered policies and the clairvoyant one.
 *
 * @category goodput
 * @since 0.5.0
 */
export interface EngineBoard {
  readonly engine: "sglang" | "vllm"
  readonly rows: ReadonlyArray<LeaderboardRow>
  readonly best: string
  readonly verdicts: ReadonlyArray<{
    readonly a: string
    readonly b: string
    readonly ratio: number
    readonly ci: readonly [number, number]
    readonly verdict: GoodputComparison["verdict"]
  }>
}

/** A subject on an engine, with its label. */
interface Entry {
  readonly engine: "sglang" | "vllm"
  readonly subject: Subject
  readonly label: string
}

const labelOf = (s: Subject): string =>
  s.kind === "policy" ? s.name : s.kind === "clairvoyant" ? "clairvoyant" : "balance-bound"

/** Run `jobs` on `workers` threads (0 or 1: in this thread), calling `onDone` after each. */
const runAll = (
  jobs: ReadonlyArray<GoodputJob>,
  workers: number,
  onDone: () => void
): Promise<ReadonlyArray<GoodputJobResult>> =>
  runJobs(
    {
      entry: workerEntry(import.meta.url, "goodput-worker.js"),
      threads: workers <= 1 ? 0 : workers,
      inThread: runGoodputJob
    },
    jobs,
    onDone
  )

/**
 * What `runLeaderboard` needs: the setup, the registered policies by name and engine, how many
 * worker threads (default: one per core), and a progress callback.
 *
 * @category goodput
 * @since 0.5.0
 */
export interface LeaderboardOptions {
  readonly setup: GoodputSetup
  readonly policies: ReadonlyArray<{ readonly name: string; readonly engine: "sglang" | "vllm" }>
  readonly traceRequestsPerSecond: number
  readonly confidence: number
  readonly curve: boolean
  readonly jobs?: number | undefined
  readonly onProgress?: ((done: number, total: number, phase: string) => void) | undefined
}

/**
 * Run the whole leaderboard: a goodput search for every policy, the clairvoyant reference and the
 * balance bound on every window (phase 1), then, with `curve`, the exact attainment of each at
 * `CURVE_SHARES` of its engine's best goodput on every window (phase 2). Results do not depend on
 * the number of threads. Throws an `Error` naming the subject and window when a job failed.
 *
 * @category goodput
 * @since 0.5.0
 */
export const runLeaderboard = async (o: LeaderboardOptions): Promise<ReadonlyArray<EngineBoard>> => {
  const engines = [...new Set(o.policies.map((p) => p.engine))]
  const entries: Array<Entry> = engines.flatMap((engine) => [
    ...o.policies
      .filter((p) => p.engine === engine)
      .map((p) => ({ engine, subject: { kind: "policy", name: p.name } as Subject, label: p.name })),
    { engine, subject: { kind: "clairvoyant" } as Subject, label: "clairvoyant" },
    { engine, subject: { kind: "bound" } as Subject, label: "balance-bound" }
  ])
  const K = o.setup.windows
  const workers = o.jobs ?? availableParallelism()
  const searchJobs = entries.flatMap((e) =>
    Array.from(
      { length: K },
      (_, window): GoodputJob => ({
        setup: o.setup,
        engine: e.engine,
        subject: e.subject,
        window,
        mode: { kind: "search" }
      })
    )
  )
  let done = 0
  const total = searchJobs.length * (o.curve ? 2 : 1)
  const tick = (phase: string) => () => o.onProgress?.(++done, total, phase)
  const searched = await runAll(searchJobs, workers, tick("goodput search"))
  const failed = searched.findIndex((r) => r.kind === "error")
  if (failed >= 0) {
    const j = searchJobs[failed]!
    throw new Error(
      `${labelOf(j.subject)} on window ${j.window}: ${(searched[failed] as { message: string }).message}`
    )
  }
  const at = (i: number, k: number) => searched[i * K + k] as Extract<GoodputJobResult, { kind: "search" }>
  const perEntry = entries.map((e, i) => {
    const windows = Array.from({ length: K }, (_, k) => at(i, k).requestsPerSecond)
    const est = estimateGoodput(windows, o.traceRequestsPerSecond, o.confidence)
    if (est._tag === "GoodputError") throw new Error(`${e.label}: ${est.message}`)
    return {
      entry: e,
      windows,
      goodput: est,
      probes: Array.from({ length: K }, (_, k) => at(i, k).probes),
      rejected: Math.max(...Array.from({ length: K }, (_, k) => at(i, k).rejected))
    }
  })
  const bestOf = (engine: string) => {
    const own = perEntry.filter((p) => p.entry.engine === engine && p.entry.subject.kind === "policy")
    return own.reduce((a, b) => (b.goodput.requestsPerSecond > a.goodput.requestsPerSecond ? b : a))
  }
  const curveRates = new Map(
    engines.map((engine) => [engine, CURVE_SHARES.map((s) => s * bestOf(engine).goodput.requestsPerSecond)])
  )
  let curves: ReadonlyArray<GoodputJobResult> = []
  if (o.curve) {
    const curveJobs = searchJobs.map(
      (j): GoodputJob => ({ ...j, mode: { kind: "curve", requestsPerSecond: curveRates.get(j.engine)! } })
    )
    curves = await runAll(curveJobs, workers, tick("attainment curves"))
    const bad = curves.findIndex((r) => r.kind === "error")
    if (bad >= 0)
      throw new Error(
        `${labelOf(curveJobs[bad]!.subject)} on window ${curveJobs[bad]!.window}: ${(curves[bad] as { message: string }).message}`
      )
  }
  return engines.map((engine): EngineBoard => {
    const best = bestOf(engine)
    const bound = perEntry.find((p) => p.entry.engine === engine && p.entry.subject.kind === "bound")!
    const mine = perEntry.map((p, i) => ({ p, i })).filter(({ p }) => p.entry.engine === engine)
    const rows = mine.map(({ p, i }): LeaderboardRow => {
      const rates = curveRates.get(engine)!
      const curve = o.curve
        ? rates.map((rps, j) => {
            const xs = Array.from(
              { length: K },
              (_, k) => (curves[i * K + k] as Extract<GoodputJobResult, { kind: "curve" }>).attainment[j]!
            )
            const e = estimateGoodput(xs, 1, o.confidence)
            const mean = xs.reduce((a, x) => a + x, 0) / K
            const ci =
              e._tag === "GoodputEstimate"
                ? ([Math.max(0, e.ci[0]), Math.min(1, e.ci[1])] as const)
                : ([mean, mean] as const)
            return { rate: rps / o.traceRequestsPerSecond, requestsPerSecond: rps, attainment: mean, ci }
          })
        : []
      const vs =
        p === best || p.entry.subject.kind === "bound"
          ? undefined
          : compareGoodput(p.windows, best.windows, o.confidence)
      return {
        policy: p.entry.label,
        kind: p.entry.subject.kind,
        engine,
        goodput: p.goodput,
        shareOfBound:
          bound.goodput.requestsPerSecond > 0
            ? p.goodput.requestsPerSecond / bound.goodput.requestsPerSecond
            : Number.NaN,
        vsBest: vs === undefined || vs._tag === "GoodputError" ? undefined : vs,
        curve,
        probes: p.probes,
        rejected: p.rejected
      }
    })
    const order = (r: LeaderboardRow) => (r.kind === "policy" ? 0 : r.kind === "clairvoyant" ? 1 : 2)
    const ranked = [...rows].sort(
      (a, b) => order(a) - order(b) || b.goodput.requestsPerSecond - a.goodput.requestsPerSecond
    )
    const compared = mine.filter(({ p }) => p.entry.subject.kind !== "bound").map(({ p }) => p)
    const verdicts = compared.flatMap((a, x) =>
      compared.slice(x + 1).flatMap((b) => {
        const c = compareGoodput(a.windows, b.windows, o.confidence)
        return c._tag === "GoodputError"
          ? []
          : [{ a: a.entry.label, b: b.entry.label, ratio: c.ratio, ci: c.ci, verdict: c.verdict }]
      })
    )
    return { engine, rows: ranked, best: best.entry.label, verdicts }
  })
}
