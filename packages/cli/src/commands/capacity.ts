/**
 * `loadledger capacity`: the largest arrival rate a simulated DP group keeps up with on a trace,
 * and the rates at given shares of it (how issue 16's compare rates are found).
 *
 * @since 0.3.0
 */

import { availableParallelism } from "node:os"
import { findPolicy, policyEntries } from "@loadledger/policies"
import type { EngineName } from "@loadledger/sim"
import {
  type CapacityOptions,
  type CapacityProbe,
  engineNames,
  findCapacity,
  type TraceFormat
} from "@loadledger/sim"
import { type Command, Option } from "commander"
import { searchOnThreads } from "../capacity/search.js"
import { fail, nonNegativeInt, positiveInt, positiveNumber, rankCount } from "../internal/args.js"
import { examplesHelp } from "../internal/examples.js"
import { unknownName } from "../internal/names.js"
import { addPolicyFlags, engineOf } from "../internal/policyFlags.js"
import { readTraceFileNoting, simConfigFor, traceFormatOption } from "../internal/simSetup.js"
import { escapeLines } from "../internal/terminalText.js"

/**
 * Options of `loadledger capacity`, as parsed.
 *
 * @category capacity
 * @since 0.3.0
 */
export interface CapacityCommandOptions {
  readonly trace: string
  readonly policy: string
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
  readonly start: number
  readonly precision: number
  readonly tolerance: number
  /** Shares of capacity to print rates for, comma-separated (default "0.7,0.9"). */
  readonly at: string
  readonly json?: boolean | undefined
  readonly quiet?: boolean | undefined
  /** Replays at a time, on worker threads (default: one per core; 1 runs them in this thread). */
  readonly jobs?: number | undefined
}

const fixed = (x: number | undefined, digits: number) => (x === undefined ? "-" : x.toFixed(digits))

const probeLine = (p: CapacityProbe): string =>
  `${p.rate.toPrecision(4).padEnd(8)} ${`${(p.backlog * 100).toFixed(2)}%`.padStart(7)}  ${(p.keepsUp ? "yes" : "no").padEnd(7)} ${fixed(p.result.ttftSeconds.p50, 2).padStart(8)} / ${fixed(p.result.ttftSeconds.p99, 2).padEnd(8)} ${fixed(p.result.itlSeconds.p99 === undefined ? undefined : p.result.itlSeconds.p99 * 1000, 0).padStart(6)}  ${(p.result.syncWaitShare * 100).toFixed(1).padStart(5)}%  ${String(p.result.requests.rejected).padStart(8)}`

/** Parse `--at`: shares of capacity in (0, 1], comma-separated; throws a one-line Error. */
const parseShares = (text: string): ReadonlyArray<number> => {
  const shares = text.split(",").map((s) => Number(s.trim()))
  if (shares.length === 0 || shares.some((s) => !(s > 0 && s <= 1)))
    return fail(`--at must be comma-separated shares in (0, 1], got "${text}"`)
  return shares
}

/**
 * Run `capacity` with parsed options: read the trace, search, print each probe (rate, the backlog
 * at the last arrival as a share of the arrival span, kept up, TTFT p50 / p99, ITL p99, sync wait,
 * requests rejected) and the capacity with the rates at `--at` shares of it (or all of it as JSON).
 * A probe that rejected requests did not keep up; a policy whose rejections do not fall when the
 * rate halves has no capacity (`findCapacity`'s error names the counts). Throws an `Error` with a
 * one-line message on bad input or when no capacity is found (the CLI prints it and exits 1).
 *
 * @example
 * ```ts
 * import { runCapacity } from "./capacity.js"
 * const o = { trace: "examples/traces/mooncake/conversation_trace.jsonl", policy: "total-tokens", dp: 2, model: "glm-5.3", gpu: "h200", frontEnds: 1, seed: 0, start: 1, precision: 0.01, tolerance: 0.02, at: "0.7,0.9" }
 * await runCapacity({ ...o, policy: "no-such-policy" }).catch((e: Error) => e.message)
 * // => 'unknown policy "no-such-policy"; loadledger list policies names all 68'
 * await runCapacity({ ...o, at: "70" }).catch((e: Error) => e.message)
 * // => '--at must be comma-separated shares in (0, 1], got "70"'
 * ```
 *
 * @category capacity
 * @since 0.3.0
 */
export const runCapacity = async (o: CapacityCommandOptions): Promise<void> => {
  const entry = findPolicy(o.policy)
  if (entry === undefined)
    return fail(
      unknownName(
        "policy",
        o.policy,
        policyEntries().map((e) => e.name),
        "policies"
      )
    )
  const shares = parseShares(o.at)
  const engine = engineOf(entry, o.engine)
  if (engine !== "vllm" && o.frontEnds > 1)
    return fail(
      `--front-ends counts vLLM API servers; ${engine === "sglang" ? "SGLang" : "TensorRT-LLM"} has one front end (add --engine vllm)`
    )
  if (!(o.tolerance < 1))
    return fail(`--tolerance must be below 1 (a share of the arrival span), got ${o.tolerance}`)
  const config = simConfigFor({ ...o, engine })
  const trace = readTraceFileNoting(o.trace, o.format, `--trace ${o.trace}`, o.limit)
  const head = "rate     backlog  kept up TTFT p50 / p99 s   ITL p99 ms  sync   rejected"
  const verbose = o.json !== true
  // the header with the first probe: a search that cannot start prints only its error
  let printed = false
  const header = () => {
    if (printed) return
    printed = true
    process.stdout.write(
      `capacity of ${o.model} on ${o.gpu}, DP ${o.dp}, ${engine} x${o.frontEnds}, ${entry.name}, ${trace.length} requests from ${escapeLines(o.trace)}\n${head}\n`
    )
  }
  const options: CapacityOptions = {
    start: o.start,
    precision: o.precision,
    tolerance: o.tolerance,
    onProbe: (p) => {
      if (verbose) {
        header()
        process.stdout.write(`${probeLine(p)}\n`)
      } else if (o.quiet !== true)
        process.stderr.write(`probe ${p.rate.toPrecision(4)}x: ${p.keepsUp ? "kept up" : "fell behind"}\n`)
    }
  }
  const jobs = o.jobs ?? availableParallelism()
  const found =
    jobs <= 1
      ? findCapacity(config, trace, entry, options)
      : await searchOnThreads(
          {
            trace: o.trace,
            format: o.format,
            limit: o.limit,
            policy: o.policy,
            model: o.model,
            gpu: o.gpu,
            tp: o.tp,
            dp: o.dp,
            engine,
            frontEnds: o.frontEnds,
            seed: o.seed,
            tolerance: o.tolerance
          },
          trace,
          entry.name,
          options,
          jobs
        )
  if (found._tag === "CapacityError") return fail(found.message)
  const at = shares.map((share) => ({ share, rate: share * found.rate }))
  if (!verbose) {
    const probes = found.probes.map((p) => ({
      rate: p.rate,
      keepsUp: p.keepsUp,
      backlog: p.backlog,
      ttftSeconds: p.result.ttftSeconds,
      itlSeconds: p.result.itlSeconds,
      syncWaitShare: p.result.syncWaitShare,
      rejected: p.result.requests.rejected
    }))
    // what was asked, less how it was run (the JSON is the same for any --jobs)
    const { json: _json, quiet: _quiet, jobs: _jobs, ...asked } = o
    const out = {
      ...asked,
      engine,
      rate: found.rate,
      failedRate: found.failedRate,
      requestsPerSecond: found.requestsPerSecond,
      at,
      probes
    }
    process.stdout.write(`${JSON.stringify(out)}\n`)
    return
  }
  process.stdout.write(
    `capacity: ${found.rate.toPrecision(4)}x (${found.requestsPerSecond.toPrecision(4)} requests/s; ${found.failedRate.toPrecision(4)}x falls behind)\n${at.map((a) => `${Math.round(a.share * 100)}% of capacity: ${a.rate.toPrecision(3)}x`).join("\n")}\n${GOODPUT_HINT}\n`
  )
}

/** Where `capacity` points for a verdict between policies. */
const GOODPUT_HINT =
  "to rank policies by the rate they serve within a latency SLO, with intervals: loadledger goodput --trace <file> [--slo mlperf-deepseek-r1]"

/**
 * Registers `loadledger capacity --trace FILE [--policy total-tokens] [--dp 8] [--model glm-5.3]
 * [--gpu h200] [--engine sglang|vllm] [--front-ends 1] [--at 0.7,0.9] [--jobs N] [--json]`.
 *
 * @example
 * ```ts
 * import { Command } from "commander"
 * import { register } from "./capacity.js"
 * const program = new Command()
 * register(program)
 * program.commands[0]!.name() // => "capacity"
 * program.commands[0]!.options.slice(0, 3).map((o) => o.long) // => ["--trace", "--policy", "--policies"]
 * ```
 *
 * @since 0.3.0
 */
export const register = (program: Command): void => {
  const cmd = program.command("capacity")
  cmd
    .description(
      "find the largest arrival rate a simulated DP group keeps up with on a trace, and the rates at shares of it"
    )
    .addHelpText(
      "after",
      "\nA run keeps up when it serves every request (none rejected) and its last request starts within\ntolerance x the trace's arrival span of the last arrival (the backlog column).\nThe search doubles or halves from --start, then bisects to --precision; every probe replays the\nwhole trace. Rates multiply the trace's own arrival rate, as simulate's --rate-scale does. A\npolicy whose rejections do not fall when the rate halves has no capacity. The trace needs at\nleast 100 requests.\nCapacity asks when a group falls behind; to compare routing policies by the rate each serves\nwithin a latency SLO (with confidence intervals and a ceiling), use loadledger goodput."
    )
    .requiredOption(
      "--trace <file>",
      "trace file: Mooncake JSONL, Azure CSV (2023 or 2024), BurstGPT CSV, or generic CSV/JSONL"
    )
  addPolicyFlags(cmd, {
    main: "policy",
    description: "routing policy (loadledger list policies)",
    fallback: "total-tokens"
  })
  cmd
    .option("--dp <n>", "data-parallel ranks", rankCount("--dp"), 8)
    .option("--model <name>", "step-time model preset", "glm-5.3")
    .option("--gpu <name>", "GPU preset", "h200")
    .option(
      "--tp <n>",
      "tensor-parallel GPUs per DP rank: 1, 2, 4 or 8 (default: the model preset's)",
      positiveInt("--tp")
    )
    .addOption(
      new Option("--engine <engine>", "engine model (default: the policy's own)").choices([...engineNames])
    )
    .option(
      "--front-ends <n>",
      "front ends routing on their own (vLLM API servers)",
      positiveInt("--front-ends"),
      1
    )
    .option("--seed <n>", "seed", nonNegativeInt("--seed"), 0)
    .addOption(traceFormatOption())
    .option("--limit <n>", "use only the first N requests", positiveInt("--limit"))
    .option("--start <x>", "first rate multiplier probed", positiveNumber("--start"), 1)
    .option(
      "--precision <x>",
      "stop when the failing rate is within 1 + x of the kept-up one",
      positiveNumber("--precision"),
      0.01
    )
    .option(
      "--tolerance <x>",
      "a run keeps up when its last request starts within x times the arrival span of the last arrival",
      positiveNumber("--tolerance"),
      0.02
    )
    .option("--at <shares>", "shares of capacity to print rates for", "0.7,0.9")
    .option(
      "--jobs <n>",
      "replays at a time on worker threads, the next probes run speculatively (default: one per core; 1 = in this thread); the same result for any n",
      positiveInt("--jobs")
    )
    .option("--json", "print the result as JSON")
    .option("--quiet", "with --json, no probe lines on stderr")
    .addHelpText("after", examplesHelp("capacity"))
    .action(async (opts: CapacityCommandOptions) => {
      await runCapacity(opts)
    })
}
