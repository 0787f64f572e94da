/**
 * `loadledger goodput`'s leaderboard: every job (subject x window) run on worker threads or in
 * this thread, then the estimates, the ranking per engine, the verdicts and the curves.
 *
 * @since 0.5.0
 */

import { availableParallelism } from "node:os"
import type { EngineName } from "@loadledger/sim"
import { estimateGoodput } from "@loadledger/sim"
import { runJobs, workerEntry } from "../internal/pool.js"
import { type EngineBoard, type LeaderboardRow, rankBoard } from "./board.js"
import {
  type GoodputJob,
  type GoodputJobResult,
  type GoodputSetup,
  runGoodputJob,
  type Subject
} from "./jobs.js"

/**
 * The rates of the curves, as shares of the best policy's goodput on each engine.
 *
 * @example
 * ```ts
 * import { CURVE_SHARES } from "./run.js"
 * CURVE_SHARES // => [0.7, 0.85, 1, 1.15, 1.3]
 * ```
 */
export const CURVE_SHARES: ReadonlyArray<number> = [0.7, 0.85, 1, 1.15, 1.3]

/** A subject on an engine, with its label. */
interface Entry {
  readonly engine: EngineName
  readonly subject: Subject
  readonly label: string
}

const labelOf = (s: Subject): string =>
  s.kind === "policy" ? s.name : s.kind === "clairvoyant" ? "clairvoyant" : "balance-bound"

/**
 * Run `jobs` on `workers` threads (0 or 1: in this thread), calling `onDone` after each; throws an
 * `Error` naming the subject and window of the first job that failed.
 */
const runAll = async (
  jobs: ReadonlyArray<GoodputJob>,
  workers: number,
  onDone: () => void
): Promise<ReadonlyArray<GoodputJobResult>> => {
  const results = await runJobs(
    {
      entry: workerEntry(import.meta.url, "goodput-worker.js"),
      threads: workers <= 1 ? 0 : workers,
      inThread: runGoodputJob
    },
    jobs,
    onDone
  )
  const failed = results.findIndex((r) => r.kind === "error")
  if (failed >= 0)
    throw new Error(
      `${labelOf(jobs[failed]!.subject)} on window ${jobs[failed]!.window}: ${(results[failed] as { message: string }).message}`
    )
  return results
}

/**
 * What `runLeaderboard` needs: the setup, the registered policies by name and engine, how many
 * worker threads (default: one per core), and a progress callback.
 *
 * @category goodput
 * @since 0.5.0
 */
export interface LeaderboardOptions {
  readonly setup: GoodputSetup
  readonly policies: ReadonlyArray<{
    readonly name: string
    readonly engine: EngineName
    /** A `--policy-config` policy: its configuration (the workers rebuild it from this). */
    readonly config?: unknown
  }>
  readonly traceRequestsPerSecond: number
  readonly confidence: number
  readonly curve: boolean
  /** With `curve`: how many of each engine's best policies get curves (default all; the references always do). */
  readonly curvePolicies?: number | undefined
  /**
   * Start every search but one per engine from that engine's first policy's goodput on the same
   * window, bracketing in steps of 5% (2x for the bound) instead of doubling from `setup.start`
   * (default true: about half the replays; the answers agree within the search's precision).
   */
  readonly warmStart?: boolean | undefined
  readonly jobs?: number | undefined
  readonly onProgress?: ((done: number, total: number, phase: string) => void) | undefined
}

/**
 * Run the whole leaderboard: a goodput search for every policy, the clairvoyant reference and the
 * balance bound on every window (phase 1), then, with `curve`, the exact attainment of each at
 * `CURVE_SHARES` of its engine's best goodput on every window (phase 2). Results do not depend on
 * the number of threads. Throws an `Error` naming the subject and window when a job failed.
 *
 * @example
 * ```ts
 * import { runLeaderboard } from "./run.js"
 * import { parseSlo } from "@loadledger/sim"
 * const slo = parseSlo("ttft=10s,tpot=100ms,attain=0.9")
 * if (slo._tag === "SloError") throw new Error(slo.message)
 * const setup = {
 *   trace: "examples/traces/mooncake/conversation_trace.jsonl", limit: 100, windows: 2, model: "glm-5.3", gpu: "h200",
 *   dp: 2, frontEnds: 1, seed: 0, slo: slo.slo, start: 1, precision: 0.1
 * }
 * const boards = await runLeaderboard({
 *   setup, policies: [{ name: "round-robin", engine: "sglang" }], traceRequestsPerSecond: 2, confidence: 0.95, curve: false, jobs: 1
 * })
 * boards.map((b) => b.best) // => ["round-robin"]
 * boards[0]!.rows.map((r) => r.kind) // => ["policy", "clairvoyant", "bound"]
 * ```
 *
 * @category goodput
 * @since 0.5.0
 */
export const runLeaderboard = async (o: LeaderboardOptions): Promise<ReadonlyArray<EngineBoard>> => {
  const engines = [...new Set(o.policies.map((p) => p.engine))]
  const entries: Array<Entry> = engines.flatMap((engine) => [
    ...o.policies
      .filter((p) => p.engine === engine)
      .map((p) => ({
        engine,
        subject: { kind: "policy", name: p.name, config: p.config } as Subject,
        label: p.name
      })),
    { engine, subject: { kind: "clairvoyant" } as Subject, label: "clairvoyant" },
    { engine, subject: { kind: "bound" } as Subject, label: "balance-bound" }
  ])
  const K = o.setup.windows
  const workers = o.jobs ?? availableParallelism()
  const searchJob = (e: Entry, window: number, mode: GoodputJob["mode"]): GoodputJob => ({
    setup: o.setup,
    engine: e.engine,
    subject: e.subject,
    window,
    mode
  })
  const warm = o.warmStart !== false
  // the pilot of each engine (its first policy) is searched from setup.start; with warmStart the
  // other subjects start from the pilot's answer on the same window
  const pilots = engines.map((engine) => entries.findIndex((e) => e.engine === engine))
  const isPilot = (i: number) => !warm || pilots.includes(i)
  const curveTotal = o.curve
    ? entries.filter((e) => e.subject.kind !== "policy").length +
      engines.reduce(
        (n, engine) =>
          n +
          Math.min(
            o.curvePolicies ?? Number.POSITIVE_INFINITY,
            entries.filter((e) => e.engine === engine && e.subject.kind === "policy").length
          ),
        0
      )
    : 0
  let done = 0
  const total = (entries.length + curveTotal) * K
  const tick = (phase: string) => () => o.onProgress?.(++done, total, phase)
  const searched: Array<GoodputJobResult | undefined> = new Array(entries.length * K)
  /** Every window of each subject in `which`, in `mode`, their answers written into `into`. */
  const runPhase = async (
    which: ReadonlyArray<number>,
    modeOf: (i: number, k: number) => GoodputJob["mode"],
    into: Array<GoodputJobResult | undefined>,
    phase: string
  ) => {
    const jobs = which.flatMap((i) =>
      Array.from({ length: K }, (_, k) => searchJob(entries[i]!, k, modeOf(i, k)))
    )
    const results = await runAll(jobs, workers, tick(phase))
    which.forEach((i, x) => {
      for (let k = 0; k < K; k++) into[i * K + k] = results[x * K + k]!
    })
  }
  const all = entries.map((_, i) => i)
  await runPhase(all.filter(isPilot), () => ({ kind: "search" }), searched, "goodput search")
  if (warm)
    await runPhase(
      all.filter((i) => !isPilot(i)),
      (i, k) => {
        const pilot = searched[pilots[engines.indexOf(entries[i]!.engine)]! * K + k] as Extract<
          GoodputJobResult,
          { kind: "search" }
        >
        const rate = pilot.requestsPerSecond / pilot.baseRequestsPerSecond
        return rate > 0
          ? { kind: "search", start: rate, step: entries[i]!.subject.kind === "bound" ? 2 : 1.05 }
          : { kind: "search" }
      },
      searched,
      "goodput search"
    )
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
  // curves for the references and each engine's `curvePolicies` best policies
  const curved = new Set(
    engines.flatMap((engine) => {
      const mine = perEntry.map((p, i) => ({ p, i })).filter(({ p }) => p.entry.engine === engine)
      const top = mine
        .filter(({ p }) => p.entry.subject.kind === "policy")
        .sort((a, b) => b.p.goodput.requestsPerSecond - a.p.goodput.requestsPerSecond)
        .slice(0, o.curvePolicies ?? Number.POSITIVE_INFINITY)
      return [...top, ...mine.filter(({ p }) => p.entry.subject.kind !== "policy")].map(({ i }) => i)
    })
  )
  const curves: Array<GoodputJobResult | undefined> = new Array(entries.length * K)
  if (o.curve)
    await runPhase(
      all.filter((i) => curved.has(i)),
      (i) => ({ kind: "curve", requestsPerSecond: curveRates.get(entries[i]!.engine)! }),
      curves,
      "attainment curves"
    )
  const curveOf = (i: number, engine: EngineName): LeaderboardRow["curve"] =>
    o.curve && curved.has(i)
      ? curveRates.get(engine)!.map((rps, j) => {
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
  return engines.map((engine) =>
    rankBoard(
      engine,
      perEntry.flatMap((p, i) =>
        p.entry.engine === engine
          ? [
              {
                policy: p.entry.label,
                kind: p.entry.subject.kind,
                windows: p.windows,
                goodput: p.goodput,
                probes: p.probes,
                rejected: p.rejected,
                curve: curveOf(i, engine)
              }
            ]
          : []
      ),
      o.confidence
    )
  )
}
