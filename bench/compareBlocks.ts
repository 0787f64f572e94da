/**
 * One block of `pnpm compare` (issue 30 item 3): a trace behind one front-end setup under one SLO,
 * every registered upstream policy (reference and peer) and every own policy on the held-out half
 * of the trace, our default configuration and the configuration tuned on the first half
 * (`tuneConfig`, which also judges the default and the balance bound on the held-out half), and the
 * clairvoyant reference (`clairvoyantPolicy` of `@loadledger/sim`: it knows every request's output
 * length, which no online router does), all on the same windows, so every difference is paired.
 *
 * @since 0.6.0
 */
import { type PolicyConfig, policyEntries } from "@loadledger/policies"
import {
  compareGoodput,
  type EngineName,
  estimateGoodput,
  type GoodputComparison,
  type GoodputEstimate,
  meanArrivalRate,
  type Slo
} from "@loadledger/sim"
import { policySource } from "../packages/cli/src/commands/list.js"
import {
  type GoodputJob,
  type GoodputJobResult,
  type GoodputSetup,
  runGoodputJob,
  type Subject,
  traceRateOf,
  windowsOf
} from "../packages/cli/src/goodput/jobs.js"
import { runJobs, workerEntry } from "../packages/cli/src/internal/pool.js"
import { tuneConfig } from "../packages/cli/src/tune/run.js"

/** What a block runs on. */
export interface BlockSpec {
  readonly trace: { readonly label: string; readonly path: string }
  readonly front: { readonly label: string; readonly engine: EngineName; readonly frontEnds: number }
  readonly slo: { readonly label: string; readonly name: string; readonly slo: Slo }
  readonly limit: number | undefined
  /** Windows per half. */
  readonly windows: number
  readonly precision: number
  readonly budget: number
  readonly jobs: number
  readonly from: PolicyConfig
}

/** One subject's held-out goodput, its share of the bound and (policies) its paired ratio to the best upstream. */
export interface Scored {
  readonly name: string
  readonly estimate: GoodputEstimate
  readonly share: number
  readonly vsBest?: GoodputComparison | undefined
  /** (ours - best) / (bound - best): the share of the best upstream's gap to the bound taken. */
  readonly gapClosed?: number | undefined
}

/** A block's figures. */
export interface BlockResult {
  readonly spec: BlockSpec
  readonly requests: number
  readonly bestUpstream: Scored
  readonly upstream: ReadonlyArray<Scored>
  readonly own: ReadonlyArray<Scored>
  readonly default: Scored
  readonly tuned: Scored & { readonly config: PolicyConfig; readonly firstHalfGain: number }
  /** The clairvoyant reference (knows output lengths): what a placement knowing more than any online router reaches. */
  readonly clairvoyant: Scored
  readonly bound: GoodputEstimate
  readonly seconds: number
}

/** The registered policies of a block: the upstream ones (every source but loadledger) and ours. */
const field = () => {
  const entries = policyEntries()
  return {
    upstream: entries.filter((e) => policySource(e) !== "loadledger").map((e) => e.name),
    own: entries.filter((e) => policySource(e) === "loadledger").map((e) => e.name)
  }
}

const search = (r: GoodputJobResult, what: string): number => {
  if (r.kind !== "search") throw new Error(`${what}: ${r.kind === "error" ? r.message : "no search"}`)
  return r.requestsPerSecond
}

/** The name the clairvoyant reference's goodputs are kept under (no registered policy's name). */
const CLAIRVOYANT = "clairvoyant (reference)"

/** Every policy's goodput on the held-out windows, warm-started from the first one's (on the pool). */
const heldOutGoodputs = async (
  setup: GoodputSetup,
  engine: EngineName,
  names: ReadonlyArray<string>,
  held: ReadonlyArray<number>,
  jobs: number
): Promise<Map<string, ReadonlyArray<number>>> => {
  const subjectOf = (name: string): Subject =>
    name === CLAIRVOYANT ? { kind: "clairvoyant" } : { kind: "policy", name }
  const job = (name: string, window: number, mode: GoodputJob["mode"]): GoodputJob => ({
    setup,
    engine,
    subject: subjectOf(name),
    window,
    mode
  })
  const pool = {
    entry: workerEntry(
      new URL("../packages/cli/src/goodput/run.ts", import.meta.url).href,
      "goodput-worker.js"
    ),
    threads: jobs <= 1 ? 0 : jobs,
    inThread: runGoodputJob
  }
  const pilot = held.map((k) => search(runGoodputJob(job(names[0]!, k, { kind: "search" })), names[0]!))
  const rest = names.slice(1).flatMap((name) =>
    held.map((k, i) => {
      const base = meanArrivalRate(windowsOf(setup)[k]!)!
      return job(
        name,
        k,
        pilot[i]! > 0 ? { kind: "search", start: pilot[i]! / base, step: 1.05 } : { kind: "search" }
      )
    })
  )
  const answers = [...(await runJobs(pool, rest))]
  // a warm bracket that failed (far from the pilot): again from the setup's start
  for (let i = 0; i < rest.length; i++)
    if (answers[i]!.kind === "error") answers[i] = runGoodputJob({ ...rest[i]!, mode: { kind: "search" } })
  const out = new Map<string, ReadonlyArray<number>>([[names[0]!, pilot]])
  names.slice(1).forEach((name, n) => {
    out.set(
      name,
      held.map((_, i) => search(answers[n * held.length + i]!, name))
    )
  })
  return out
}

/** A block's replay setup over `windows` windows (every block runs glm-5.3 on 8 H200 ranks). */
const setupOf = (b: BlockSpec, windows: number): GoodputSetup => ({
  trace: b.trace.path,
  limit: b.limit,
  windows,
  model: "glm-5.3",
  gpu: "h200",
  dp: 8,
  frontEnds: b.front.frontEnds,
  seed: 0,
  slo: b.slo.slo,
  start: 1,
  precision: b.precision
})

/** Run one block (see the module header). */
export const runBlock = async (b: BlockSpec): Promise<BlockResult> => {
  const t0 = performance.now()
  const W = b.windows
  const setup = setupOf(b, W)
  const whole = setupOf(b, 2 * W)
  const rate = traceRateOf(whole)!
  const requests = windowsOf(whole).reduce((n, w) => n + w.length, 0)
  const tuned = await tuneConfig({
    setup,
    engine: b.front.engine,
    from: b.from,
    name: `${b.from.name}-tuned`,
    budget: b.budget,
    traceRequestsPerSecond: rate,
    confidence: 0.95
  })
  const { upstream, own } = field()
  const held = Array.from({ length: W }, (_, k) => W + k)
  const g = await heldOutGoodputs(whole, b.front.engine, [...upstream, ...own, CLAIRVOYANT], held, b.jobs)
  const bound = tuned.heldOut.bound
  const estimate = (xs: ReadonlyArray<number>) => {
    const e = estimateGoodput(xs, rate)
    if (e._tag === "GoodputError") throw new Error(e.message)
    return e
  }
  const plain = (name: string, e: GoodputEstimate): Scored => ({
    name,
    estimate: e,
    share: e.requestsPerSecond / bound.requestsPerSecond
  })
  const ups = upstream.map((n) => plain(n, estimate(g.get(n)!)))
  const best = ups.reduce((a, x) => (x.estimate.requestsPerSecond > a.estimate.requestsPerSecond ? x : a))
  const against = (s: Scored): Scored => {
    const c = compareGoodput(s.estimate.windows, best.estimate.windows)
    const gap = bound.requestsPerSecond - best.estimate.requestsPerSecond
    return {
      ...s,
      vsBest: c._tag === "GoodputComparison" ? c : undefined,
      gapClosed: gap > 0 ? (s.estimate.requestsPerSecond - best.estimate.requestsPerSecond) / gap : undefined
    }
  }
  return {
    spec: b,
    requests,
    bestUpstream: best,
    upstream: ups,
    own: own.map((n) => against(plain(n, estimate(g.get(n)!)))),
    default: against(plain(b.from.name ?? "default", tuned.heldOut.default)),
    tuned: {
      ...against(plain(tuned.config.name ?? "tuned", tuned.heldOut.tuned)),
      config: tuned.config,
      firstHalfGain: tuned.tuning.tuned.requestsPerSecond / tuned.tuning.default.requestsPerSecond
    },
    clairvoyant: against(plain(CLAIRVOYANT, estimate(g.get(CLAIRVOYANT)!))),
    bound,
    seconds: (performance.now() - t0) / 1000
  }
}

/**
 * The selection pass (`pnpm compare --select`): every own policy and the balance bound on the
 * held-out half of one block, each own policy's goodput as a share of the bound (no upstream
 * policies, no tuning): the leaderboard the shipped default is chosen by.
 */
export const selectBlock = async (b: BlockSpec): Promise<ReadonlyArray<Scored>> => {
  const W = b.windows
  const whole = setupOf(b, 2 * W)
  const rate = traceRateOf(whole)!
  const held = Array.from({ length: W }, (_, k) => W + k)
  const { own } = field()
  const g = await heldOutGoodputs(whole, b.front.engine, own, held, b.jobs)
  const bound = held.map((k) =>
    search(
      runGoodputJob({
        setup: whole,
        engine: b.front.engine,
        subject: { kind: "bound" },
        window: k,
        mode: { kind: "search" }
      }),
      "balance bound"
    )
  )
  const mean = bound.reduce((a, x) => a + x, 0) / bound.length
  return own.map((name) => {
    const e = estimateGoodput(g.get(name)!, rate)
    if (e._tag === "GoodputError") throw new Error(e.message)
    return { name, estimate: e, share: e.requestsPerSecond / mean }
  })
}
