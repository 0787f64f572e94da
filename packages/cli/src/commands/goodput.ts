/**
 * `loadledger goodput`: which routing policy serves a trace best under a latency SLO, and by how
 * much: goodput per policy with a confidence interval, paired verdicts, the share of the balance
 * bound and a clairvoyant reference, ranked per engine.
 *
 * @since 0.5.0
 */

import { writeFileSync } from "node:fs"
import type { EngineName } from "@loadledger/sim"
import {
  describeSlo,
  describeTokenIds,
  meanArrivalRate,
  type TraceFormat,
  traceTokenIds
} from "@loadledger/sim"
import type { Command } from "commander"
import type { EngineBoard } from "../goodput/board.js"
import type { GoodputSetup } from "../goodput/jobs.js"
import { pairsTable } from "../goodput/pairs.js"
import { runLeaderboard } from "../goodput/run.js"
import { boardJson, boardTable, HOW_TO_READ } from "../goodput/table.js"
import { boardHtmlTable, curveChart } from "../goodput/tableHtml.js"
import { fail } from "../internal/args.js"
import { examplesHelp } from "../internal/examples.js"
import { addPolicyFlags, DEFAULT_POLICIES, engineOf } from "../internal/policyFlags.js"
import { gpuPreset, modelPreset, readTraceFileNoting } from "../internal/simSetup.js"
import { readSloFlag } from "../internal/sloFlag.js"
import { escapeLines } from "../internal/terminalText.js"
import { addGoodputFlags, methodText, SLO_HELP } from "./goodputFlags.js"
import { readPolicyConfig } from "./policyConfigFile.js"
import { progressMode, startProgress } from "./progress.js"
import { checkModelFit, checkOutputPath, isArgError, parsePolicyList } from "./simulateArgs.js"

/**
 * Options of `loadledger goodput`, as parsed.
 *
 * @category goodput
 * @since 0.5.0
 */
export interface GoodputCommandOptions {
  readonly trace: string
  readonly policies?: string | undefined
  /** `--policy-config FILE`: an own policy as a JSON configuration, ranked beside `policies`. */
  readonly policyConfig?: string | undefined
  readonly slo: string
  readonly dp: number
  readonly model: string
  readonly gpu: string
  /** Tensor-parallel size per DP rank (default: the model preset's). */
  readonly tp?: number | undefined
  readonly engine?: EngineName | undefined
  readonly frontEnds: number
  readonly seed: number
  readonly format?: TraceFormat | undefined
  readonly limit?: number | undefined
  readonly windows: number
  readonly precision: number
  readonly confidence: number
  readonly start: number
  readonly jobs?: number | undefined
  readonly curves: boolean
  readonly curvePolicies?: number | undefined
  readonly warmStart?: boolean | undefined
  readonly report?: string | undefined
  readonly json?: boolean | undefined
  readonly quiet?: boolean | undefined
  readonly progress?: boolean | undefined
  /** `compare`: at least two policies, and every pair's paired verdict after the board. */
  readonly pairs?: boolean | undefined
}

const METHOD = methodText

/**
 * Run `goodput` with parsed options: check them, read the trace, run the leaderboard (worker
 * threads, `--jobs`), print the ranked table per engine (or the JSON), and write the HTML report
 * with the curves when `--report` is given. Throws an `Error` with a one-line message on bad input
 * (the CLI prints it and exits 1).
 *
 * @example
 * ```ts
 * import { runGoodput } from "./goodput.js"
 * const o = { trace: "examples/traces/mooncake/conversation_trace.jsonl", slo: "ttft=2s,tpot=100ms", dp: 2, model: "glm-5.3", gpu: "h200", frontEnds: 1, seed: 0, windows: 4, precision: 0.01, confidence: 0.95, start: 1, curves: false }
 * await runGoodput({ ...o, slo: "ttft=2s" }).catch((e: Error) => e.message)
 * // => "--slo: the SLO needs a tpot bound, e.g. tpot=100ms"
 * await runGoodput({ ...o, confidence: 95 }).catch((e: Error) => e.message)
 * // => "--confidence must be in (0, 1), e.g. 0.95, got 95"
 * ```
 *
 * @category goodput
 * @since 0.5.0
 */
export const runGoodput = async (o: GoodputCommandOptions): Promise<void> => {
  // every check before any work: a typo in a name must not cost a replay, nor wait for a worker
  const slo = { slo: readSloFlag(o.slo, "--slo") }
  modelPreset(o.model, o.tp)
  gpuPreset(o.gpu)
  const noFit = checkModelFit(o.model, o.gpu, o.tp)
  if (noFit !== undefined) return fail(noFit.message)
  if (!(o.confidence > 0 && o.confidence < 1))
    return fail(`--confidence must be in (0, 1), e.g. 0.95, got ${o.confidence}`)
  if (!(o.windows >= 2)) return fail(`--windows must be an integer >= 2, got ${o.windows}`)
  const listed = parsePolicyList(o.policies ?? DEFAULT_POLICIES)
  if (isArgError(listed)) return fail(listed.message)
  const configured = o.policyConfig === undefined ? undefined : readPolicyConfig(o.policyConfig)
  if (isArgError(configured)) return fail(configured.message)
  const entries = configured === undefined ? listed : [...listed, configured.entry]
  if (o.pairs === true && entries.length < 2)
    return fail("compare needs two or more policies, e.g. --policies round-robin,total-tokens")
  if (o.frontEnds > 1 && o.engine !== "vllm")
    return fail("--front-ends counts vLLM API servers; add --engine vllm to run every policy behind them")
  // a report that cannot be written is refused before the replays, not after them
  if (o.report !== undefined) {
    const bad = checkOutputPath("--report", o.report)
    if (bad) return fail(bad.message)
  }
  const trace = readTraceFileNoting(o.trace, o.format, `--trace ${o.trace}`, o.limit)
  const rate = meanArrivalRate(trace)
  if (rate === undefined) return fail(`${o.trace}: the trace's arrivals span no time: it has no rate`)
  if (trace.length / o.windows < 20)
    return fail(
      `--windows ${o.windows}: ${trace.length} requests leave fewer than 20 per window (use fewer windows)`
    )
  const setup: GoodputSetup = {
    trace: o.trace,
    format: o.format,
    limit: o.limit,
    windows: o.windows,
    model: o.model,
    gpu: o.gpu,
    tp: o.tp,
    dp: o.dp,
    frontEnds: o.frontEnds,
    seed: o.seed,
    slo: slo.slo,
    start: o.start,
    precision: o.precision
  }
  const policies = entries.map((e) => ({
    name: e.name,
    engine: engineOf(e, o.engine),
    config: e === configured?.entry ? configured.config : undefined
  }))
  const progress = await startProgress({
    // a search per subject and window, and a curve per curved subject and window
    total:
      o.windows *
      [...new Set(policies.map((p) => p.engine))].reduce((n, engine) => {
        const own = policies.filter((p) => p.engine === engine).length
        return n + own + 2 + (o.curves ? Math.min(own, o.curvePolicies ?? Number.POSITIVE_INFINITY) + 2 : 0)
      }, 0),
    unit: "window searches",
    mode: progressMode({
      quiet: o.quiet === true || o.json === true,
      isTTY: process.stderr.isTTY === true,
      progress: o.progress
    }),
    stream: process.stderr,
    now: () => performance.now() / 1000
  })
  const t0 = performance.now()
  let boards: ReadonlyArray<EngineBoard>
  try {
    boards = await runLeaderboard({
      setup,
      policies,
      traceRequestsPerSecond: rate,
      confidence: o.confidence,
      curve: o.curves,
      curvePolicies: o.curvePolicies,
      warmStart: o.warmStart,
      jobs: o.jobs,
      onProgress: (done, _total, phase) => progress.update(done, phase)
    })
  } finally {
    progress.stop()
  }
  const seconds = (performance.now() - t0) / 1000
  const engineNote =
    o.engine === undefined
      ? "each policy on its own engine (vLLM's on vllm, TensorRT-LLM's on trtllm, the rest on sglang), ranked per engine"
      : `every policy on the ${o.engine} engine (--engine)`
  // what token-keyed policies routed on: the trace's ids or ids synthesised for it
  const tokenIds = traceTokenIds(trace)
  const head = {
    trace: o.trace,
    requests: trace.length,
    tokenIds: { ...tokenIds, description: describeTokenIds(tokenIds) },
    traceRequestsPerSecond: rate,
    model: o.model,
    gpu: o.gpu,
    dp: o.dp,
    frontEnds: o.frontEnds,
    seed: o.seed,
    engines: engineNote,
    slo: { ...slo.slo, description: describeSlo(slo.slo) },
    method: {
      windows: o.windows,
      confidence: o.confidence,
      precision: o.precision,
      description: METHOD(o.windows, o.confidence, o.precision, o.warmStart !== false)
    },
    wallSeconds: seconds
  }
  if (o.report !== undefined) {
    const { renderGoodputReport } = await import("../goodput/report.js")
    writeFileSync(
      o.report,
      await renderGoodputReport({
        title: `goodput on ${o.trace}`,
        context: [
          `${o.model} on ${o.gpu}, DP ${o.dp}; ${trace.length} requests (${rate.toPrecision(4)} requests/s)`,
          `SLO: ${describeSlo(slo.slo)}`,
          describeTokenIds(tokenIds),
          `Method: ${METHOD(o.windows, o.confidence, o.precision, o.warmStart !== false)}`
        ],
        table: boardHtmlTable(boards),
        charts: o.curves ? boards.map((b, i) => curveChart(b, slo.slo.attainment, `curves-${i}`)) : []
      })
    )
  }
  if (o.json === true) {
    process.stdout.write(`${JSON.stringify(boardJson(boards, { ...head, tp: o.tp }))}\n`)
    return
  }
  const color = process.stdout.isTTY === true
  const lines = [
    `goodput of ${o.model} on ${o.gpu}, DP ${o.dp}, ${trace.length} requests from ${escapeLines(o.trace)} (${rate.toPrecision(4)} requests/s)`,
    `SLO: ${describeSlo(slo.slo)}${slo.slo.source ? `\n  source: ${escapeLines(slo.slo.source)}` : ""}`,
    `method: ${METHOD(o.windows, o.confidence, o.precision, o.warmStart !== false)}`,
    `engines: ${engineNote}`,
    describeTokenIds(tokenIds),
    ...boards.flatMap((b) => [
      "",
      b.rows.every((r) => r.goodput.requestsPerSecond === 0)
        ? `${b.engine} engine: the SLO is met at no rate on any window, not even by the balance bound (the ceiling), so no policy can be ranked: loosen it (loadledger simulate --trace ${o.trace} shows each policy's TTFT and TPOT; --slo ttft=...,tpot=...)`
        : `${b.engine} engine: best ${b.best}`,
      boardTable(b, color),
      ...(o.pairs === true
        ? ["", `${b.engine} engine, every pair (paired over the same windows):`, pairsTable(b, color)]
        : [])
    ]),
    "",
    HOW_TO_READ,
    `${policies.length} policies x ${o.windows} windows in ${seconds.toFixed(1)} s${o.report ? `; report: ${o.report}` : ""}`
  ]
  process.stdout.write(`${lines.join("\n")}\n`)
}

/**
 * Registers `loadledger goodput --trace FILE [--policies a,b] [--slo PRESET|ttft=…,tpot=…]
 * [--windows 10] [--jobs N] [--report FILE] [--json]`.
 *
 * @example
 * ```ts
 * import { Command } from "commander"
 * import { register } from "./goodput.js"
 * const program = new Command()
 * register(program)
 * program.commands[0]!.name() // => "goodput"
 * program.commands[0]!.options.slice(0, 3).map((o) => o.long) // => ["--policies", "--policy", "--trace"]
 * ```
 *
 * @since 0.5.0
 */
export const register = (program: Command): void => {
  const cmd = program.command("goodput")
  cmd
    .description(
      "rank routing policies by goodput under a latency SLO, with confidence intervals, paired verdicts and a ceiling"
    )
    .addHelpText(
      "after",
      `\nGoodput is the largest arrival rate at which the SLO is met. The trace is cut into --windows
disjoint windows; on each, every policy's goodput is found by bisection (a hopeless probe stops as
soon as more requests missed than the target allows). The estimate is the mean over windows with a
t interval; each policy is compared with the best on the same windows (paired), and called better
or worse only when the interval excludes no difference (0%). The balance bound (an idealised group no placement
can beat) is the ceiling; the clairvoyant policy (knows output lengths) a reference.
${SLO_HELP}`
    )
  addPolicyFlags(cmd, {
    main: "policies",
    description: "comma-separated policies, or all (default: the demo's five references)",
    fallback: DEFAULT_POLICIES
  })
  addGoodputFlags(cmd)
    .addHelpText("after", examplesHelp("goodput"))
    .action(async (opts: GoodputCommandOptions) => {
      await runGoodput(opts)
    })
}
