/**
 * One unit of work of `loadledger goodput`: a goodput search, or the attainment at given rates, of
 * one subject (a registered policy, the clairvoyant reference or the balance bound) on one window
 * of the trace. Plain data in, plain data out, so a worker thread runs it as well as this one; the
 * trace and its windows are read once per thread.
 *
 * @since 0.5.0
 */

import { findPolicy } from "@loadledger/policies"
import type { EngineName } from "@loadledger/sim"
import {
  type CoordinatorRows,
  clairvoyantPolicy,
  findGoodputRate,
  type GoodputProbe,
  meanArrivalRate,
  type PolicyResult,
  type RankFault,
  type SimConfig,
  type Slo,
  simulate,
  simulateBound,
  type TraceFormat,
  type TraceRequest,
  traceWindows
} from "@loadledger/sim"
import { configEntry } from "../commands/policyConfigFile.js"
import { readTraceFile, simConfigFor } from "../internal/simSetup.js"

/**
 * What every job of one `goodput` run shares: the trace (read and cut into `windows` by each
 * thread), the group and the SLO.
 *
 * @category goodput
 * @since 0.5.0
 */
export interface GoodputSetup {
  readonly trace: string
  readonly format?: TraceFormat | undefined
  readonly limit?: number | undefined
  readonly windows: number
  readonly model: string
  readonly gpu: string
  /** Tensor-parallel size per DP rank (default: the model preset's). */
  readonly tp?: number | undefined
  readonly dp: number
  readonly frontEnds: number
  /** vLLM front ends only: the rows they are handed (the simulator's default when absent). */
  readonly coordinatorRows?: CoordinatorRows | undefined
  readonly seed: number
  readonly slo: Slo
  readonly start: number
  readonly precision: number
  /** Per-rank speed faults of the group (a slow GPU: `simulate --slow-rank`); default none. */
  readonly rankFaults?: ReadonlyArray<RankFault> | undefined
}

/** Who a job replays: a registered policy by name, the clairvoyant reference, or the balance bound. */
export type Subject =
  | { readonly kind: "policy"; readonly name: string; readonly config?: unknown }
  | { readonly kind: "clairvoyant" }
  | { readonly kind: "bound" }

/**
 * One job: `subject` on `engine` over window `window` of the setup's trace; `search` finds its
 * goodput, `curve` measures its exact attainment (no early stop) at each of `requestsPerSecond`.
 *
 * @category goodput
 * @since 0.5.0
 */
export interface GoodputJob {
  readonly setup: GoodputSetup
  readonly engine: EngineName
  readonly subject: Subject
  readonly window: number
  readonly mode:
    | {
        readonly kind: "search"
        /** Start multiplier and bracketing step of this search (default: the setup's start, 2). */
        readonly start?: number | undefined
        readonly step?: number | undefined
      }
    | { readonly kind: "curve"; readonly requestsPerSecond: ReadonlyArray<number> }
}

/**
 * A job's answer. `search`: the window's goodput (requests per second, 0 when the SLO is not
 * attainable at any rate probed) and the probes; `curve`: the attainment at each rate asked.
 * `error` (a one-line message) when the job could not run.
 *
 * @category goodput
 * @since 0.5.0
 */
export type GoodputJobResult =
  | {
      readonly kind: "search"
      readonly requestsPerSecond: number
      readonly baseRequestsPerSecond: number
      readonly probes: ReadonlyArray<GoodputProbe>
      readonly rejected: number
    }
  | { readonly kind: "curve"; readonly attainment: ReadonlyArray<number> }
  | { readonly kind: "error"; readonly message: string }

let cached:
  | {
      key: string
      windows: ReadonlyArray<ReadonlyArray<TraceRequest>>
      traceRequestsPerSecond: number | undefined
    }
  | undefined

/** The setup's trace read and cut once per thread, with its own mean arrival rate. */
const readCut = (s: GoodputSetup) => {
  const key = JSON.stringify([s.trace, s.format, s.limit, s.windows])
  if (cached?.key === key) return cached
  const trace = readTraceFile(s.trace, s.format, `--trace ${s.trace}`, s.limit)
  const w = traceWindows(trace, s.windows)
  if (!Array.isArray(w)) throw new Error(`--windows: ${(w as { message: string }).message}`)
  cached = {
    key,
    windows: w as ReadonlyArray<ReadonlyArray<TraceRequest>>,
    traceRequestsPerSecond: meanArrivalRate(trace)
  }
  return cached
}

/**
 * The setup's windows, read and cut once per thread.
 *
 * @example
 * ```ts
 * import { windowsOf } from "./jobs.js"
 * import { parseSlo } from "@loadledger/sim"
 * const slo = parseSlo("ttft=10s,tpot=100ms,attain=0.9")
 * if (slo._tag === "SloError") throw new Error(slo.message)
 * const setup = {
 *   trace: "examples/traces/mooncake/conversation_trace.jsonl", limit: 100, windows: 2, model: "glm-5.3", gpu: "h200",
 *   dp: 2, frontEnds: 1, seed: 0, slo: slo.slo, start: 1, precision: 0.1
 * }
 * windowsOf(setup).map((w) => w.length) // => [50, 50]
 * windowsOf(setup)[1]![0]!.arrivalSeconds // => 0
 * ```
 */
export const windowsOf = (s: GoodputSetup): ReadonlyArray<ReadonlyArray<TraceRequest>> => readCut(s).windows

/**
 * The setup's whole trace's mean arrival rate (requests per second; undefined when its arrivals
 * span no time), from the same read as {@link windowsOf}.
 *
 * @example
 * ```ts
 * import { traceRateOf } from "./jobs.js"
 * import { parseSlo } from "@loadledger/sim"
 * const slo = parseSlo("ttft=10s,tpot=100ms,attain=0.9")
 * if (slo._tag === "SloError") throw new Error(slo.message)
 * const setup = {
 *   trace: "examples/traces/mooncake/conversation_trace.jsonl", limit: 100, windows: 2, model: "glm-5.3", gpu: "h200",
 *   dp: 2, frontEnds: 1, seed: 0, slo: slo.slo, start: 1, precision: 0.1
 * }
 * traceRateOf(setup)! > 0 // => true
 * ```
 *
 * @category goodput
 * @since 0.5.0
 */
export const traceRateOf = (s: GoodputSetup): number | undefined => readCut(s).traceRequestsPerSecond

const replayer = (
  job: GoodputJob,
  window: ReadonlyArray<TraceRequest>,
  stopEarly: boolean
): ((t: ReadonlyArray<TraceRequest>) => PolicyResult) => {
  const s = job.setup
  const config: SimConfig = {
    ...simConfigFor({ ...s, engine: job.engine }),
    slo: s.slo,
    sloStopEarly: stopEarly,
    ...(s.rankFaults === undefined ? {} : { rankFaults: s.rankFaults })
  }
  const subject = job.subject
  if (subject.kind === "bound") return (t) => simulateBound(config, t)
  const policy =
    subject.kind === "clairvoyant"
      ? { ...clairvoyantPolicy(window), engine: job.engine }
      : subject.config !== undefined
        ? configEntry(subject.config, subject.name)
        : findPolicy(subject.name)
  if (policy === undefined) throw new Error(`unknown policy "${(subject as { name: string }).name}"`)
  return (t) => simulate(config, t, policy)
}

/**
 * Run one job (see {@link GoodputJob}). Never throws: a problem is a `{ kind: "error" }` answer.
 *
 * @example
 * ```ts
 * import { runGoodputJob } from "./jobs.js"
 * import { parseSlo } from "@loadledger/sim"
 * const slo = parseSlo("ttft=10s,tpot=100ms,attain=0.9")
 * if (slo._tag === "SloError") throw new Error(slo.message)
 * const setup = {
 *   trace: "examples/traces/mooncake/conversation_trace.jsonl", limit: 100, windows: 2, model: "glm-5.3", gpu: "h200",
 *   dp: 2, frontEnds: 1, seed: 0, slo: slo.slo, start: 1, precision: 0.1
 * }
 * const job = { setup, engine: "sglang" as const, subject: { kind: "policy" as const, name: "round-robin" }, window: 1, mode: { kind: "search" as const } }
 * const found = runGoodputJob(job)
 * found.kind // => "search"
 * found.kind === "search" && found.requestsPerSecond > 0 // => true
 * runGoodputJob({ ...job, subject: { kind: "policy", name: "no-such-policy" } }).kind // => "error"
 * ```
 *
 * @category goodput
 * @since 0.5.0
 */
export const runGoodputJob = (job: GoodputJob): GoodputJobResult => {
  try {
    const window = windowsOf(job.setup)[job.window]!
    const base = meanArrivalRate(window)
    if (base === undefined)
      return { kind: "error", message: "the window's arrivals span no time: it has no rate" }
    if (job.mode.kind === "curve") {
      const replay = replayer(job, window, false)
      const attainment: Array<number> = []
      for (const rps of job.mode.requestsPerSecond) {
        const k = rps / base
        const r = replay(window.map((x) => ({ ...x, arrivalSeconds: x.arrivalSeconds / k })))
        if (r.slo === undefined)
          return { kind: "error", message: `no SLO attainment at ${rps} requests/s (${r.status._tag})` }
        attainment.push(r.slo.attainment)
      }
      return { kind: "curve", attainment }
    }
    const replay = replayer(job, window, true)
    let rejected = 0
    const found = findGoodputRate(
      (t) => {
        const r = replay(t)
        rejected = Math.max(rejected, r.requests.rejected)
        return r
      },
      window,
      { start: job.mode.start ?? job.setup.start, step: job.mode.step, precision: job.setup.precision }
    )
    if (found._tag === "GoodputError") return { kind: "error", message: found.message }
    return {
      kind: "search",
      requestsPerSecond: found.requestsPerSecond,
      baseRequestsPerSecond: found.baseRequestsPerSecond,
      probes: found.probes,
      rejected
    }
  } catch (e) {
    return { kind: "error", message: e instanceof Error ? e.message : String(e) }
  }
}
