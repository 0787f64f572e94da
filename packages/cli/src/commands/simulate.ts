/**
 * `loadledger simulate`: replays a request trace through routing policies on a simulated lockstep DP group and prints the comparison table (or JSON), optionally an HTML report.
 *
 * @since 0.1.0
 */
import type { EngineName } from "@loadledger/sim"
import {
  type CoordinatorRows,
  engineNames,
  isTraceError,
  type PolicyResult,
  scaleTrace,
  simulate,
  streamTraceFile,
  type TraceFormat
} from "@loadledger/sim"
import { type Command, Option } from "commander"
import { addFaultFlags, type FaultFlagOptions, faultConfig } from "../diagnose/faultFlags.js"
import { fail, nonNegativeInt, positiveInt, positiveNumber, rankCount } from "../internal/args.js"
import { engineFlagProblem } from "../internal/engineFlags.js"
import { examplesHelp } from "../internal/examples.js"
import { addPolicyFlags, DEFAULT_POLICIES, engineOf } from "../internal/policyFlags.js"
import {
  gpuPreset,
  modelPreset,
  readTraceFileNoting,
  simConfigFor,
  traceFormatOption
} from "../internal/simSetup.js"
import { readPolicyConfig } from "./policyConfigFile.js"
import { progressMode, startProgress } from "./progress.js"
import {
  checkModelFit,
  checkOutputPath,
  isArgError,
  parsePolicyList,
  simulateHelpText
} from "./simulateArgs.js"
import type { SimulateOptions } from "./simulateOptions.js"
import { printSimulateResults } from "./simulateOutput.js"
import { simulateExitCode } from "./simulateTable.js"

/**
 * Options of `loadledger simulate`, as parsed (defined in `simulateOptions.ts`).
 *
 * @category simulate
 * @since 0.1.0
 */
export type { SimulateOptions } from "./simulateOptions.js"

/**
 * Run `simulate` with parsed options: read and check the trace, resolve the policies, model and GPU,
 * run each policy on the same arrivals, print the table (or JSON), write the HTML report. Throws an
 * `Error` with a one-line message on bad input (the CLI prints it and exits 1), e.g. a model preset
 * that leaves no KV pool on the GPU preset without `--kv-pool-tokens` (`checkModelFit`: the message
 * names what would fit). With `--json` each result carries, besides the `PolicyResult` fields and
 * its `engine`, the table's status cell: `outcome` (`outcomeLabel`: `ok F/T`, `behind F/T`,
 * `incomplete F/T, R rejected`, ...) and `keptUp` (`runOutcome`'s, the same value the cell is
 * written from; absent when it cannot tell, e.g. fewer than 100 requests). Where the policies' token
 * ids came from (the trace's, or synthesised from its block hashes or request ids: `traceTokenIds`)
 * is the line under the header (`describeTokenIds`), and `tokenIds` in the JSON.
 *
 * @example
 * ```ts
 * import { runSimulate } from "./simulate.js"
 * const o = { trace: "examples/traces/mooncake/conversation_trace.jsonl", dp: 2, model: "glm-5.3", gpu: "h200", seed: 0, frontEnds: 1 }
 * await runSimulate({ ...o, policies: "no-such-policy" }).catch((e: Error) => e.message.slice(0, 40))
 * // => 'unknown policy "no-such-policy"; loadled'
 * await runSimulate({ ...o, policies: "round-robin", model: "gpt-9" }).catch((e: Error) => e.message.slice(0, 30))
 * // => 'unknown model "gpt-9"; known: '
 * await runSimulate({ ...o, policies: "round-robin", model: "llama2-70b", gpu: "h200" }).catch((e: Error) => e.message.slice(0, 57))
 * // => "llama2-70b does not fit on one h200 at tensor parallel 1:"
 * ```
 *
 * @category simulate
 * @since 0.1.0
 */
export const runSimulate = async (o: SimulateOptions): Promise<void> => {
  // every argument and output path first: a typo must not cost a simulation
  const listed = parsePolicyList(o.policies)
  if (isArgError(listed)) return fail(listed.message)
  const configured = o.policyConfig === undefined ? undefined : readPolicyConfig(o.policyConfig)
  if (isArgError(configured)) return fail(configured.message)
  const entries = configured === undefined ? listed : [...listed, configured.entry]
  // a preset pair with no room for a KV pool: what would fit, and the GPU presets it fits on
  const noFit = o.kvPoolTokens === undefined ? checkModelFit(o.model, o.gpu, o.tp) : undefined
  if (noFit !== undefined) return fail(noFit.message)
  const base = {
    ...simConfigFor({ ...o, engine: "sglang" }),
    maxConcurrency: o.maxConcurrency,
    ...faultConfig(o, { model: modelPreset(o.model, o.tp), gpu: gpuPreset(o.gpu) }),
    // the report's heat map marks each rank's kind from the loads of the step log
    ...(o.report !== undefined ? { recordSteps: "loads" as const } : {})
  } // the engine is set per policy below
  const lacking = engineFlagProblem(
    entries.map((e) => ({ policy: e.name, engine: engineOf(e, o.engine), config: base }))
  )
  const sglang = entries.filter((e) => engineOf(e, o.engine) === "sglang")
  if (o.coordinatorRows !== undefined && o.coordinatorRows !== "extended" && sglang.length > 0)
    return fail(
      `--coordinator-rows ${o.coordinatorRows} applies to vLLM runs only, and ${sglang.map((e) => e.name).join(", ")} would run on SGLang: add --engine vllm`
    )
  if (lacking !== undefined) return fail(lacking)
  if (o.report !== undefined) {
    const bad = checkOutputPath("--report", o.report)
    if (bad) return fail(bad.message)
  }
  // one policy, one pass: a file in arrival order is streamed (only the requests in flight are
  // held; the same result). Several policies, a --limit (the whole read holds only `limit` rows, and
  // a stream would check the file in one pass and replay it in another), or a file to sort (or with
  // an error: its message comes from the whole read), read it whole
  const streamed =
    entries.length === 1 && o.limit === undefined
      ? streamTraceFile(o.trace, o.format, { limit: o.limit, rateScale: o.rateScale })
      : undefined
  const trace =
    streamed !== undefined && !isTraceError(streamed) && streamed.count > 0
      ? streamed
      : scaleTrace(readTraceFileNoting(o.trace, o.format, `--trace ${o.trace}`, o.limit), {
          rateScale: o.rateScale,
          limit: o.limit
        })
  const requests = Array.isArray(trace) ? trace.length : (trace as { count: number }).count
  const progress = await startProgress({
    total: requests * entries.length,
    unit: "requests",
    mode: progressMode({
      quiet: o.quiet === true,
      isTTY: process.stderr.isTTY === true,
      progress: o.progress
    }),
    stream: process.stderr,
    now: () => performance.now() / 1000
  })
  const rows: Array<{ engine: EngineName; result: PolicyResult }> = []
  let before = 0 // requests done (finished or rejected) by the policies already run
  entries.forEach((entry, k) => {
    const engine = engineOf(entry, o.engine)
    progress.update(before, `policy ${k + 1}/${entries.length} ${entry.name}`)
    const result = simulate({ ...base, engine }, trace, entry, {
      onProgress: (done) => progress.update(before + done)
    })
    before += result.requests.finished + result.requests.rejected
    rows.push({ engine, result })
  })
  progress.update(before) // a deadlocked run leaves its unfinished requests out of the count
  progress.stop()

  await printSimulateResults(o, rows, trace, requests, base.kvPoolTokens)
  // 0 every request finished, 2 requests rejected or unfinished, 3 a run stalled (simulateExitCode)
  process.exitCode = simulateExitCode(rows.map((r) => r.result))
}

/**
 * Registers `loadledger simulate --trace FILE --policies LIST [--dp 8] [--model glm-5.3] [--gpu h200]
 * [--engine sglang|vllm|trtllm] [--rate-scale X] [--limit N] [--json] [--report out.html]`. `--policy LIST`
 * (the name `capacity` takes) is `--policies` under another name; giving both is a usage error.
 *
 * @example
 * ```ts
 * import { Command } from "commander"
 * import { register } from "./simulate.js"
 * const program = new Command()
 * register(program)
 * const simulate = program.commands[0]!
 * simulate.name() // => "simulate"
 * simulate.options.slice(0, 6).map((o) => o.long)
 * // => ["--trace", "--policies", "--policy", "--dp", "--model", "--gpu"]
 * ```
 *
 * @since 0.1.0
 */
export const register = (program: Command): void => {
  const simulate = program
    .command("simulate")
    .description("replay a request trace through routing policies on a simulated lockstep DP group")
    .addHelpText(
      "after",
      "\nExit codes: 0 every request of every policy finished; 1 bad input; 2 requests were rejected or\nleft unfinished (the status column counts them); 3 a run stalled (NoProgress or Deadlock)."
    )
    .requiredOption(
      "--trace <file>",
      "trace file: Mooncake JSONL, Azure CSV (2023 or 2024), BurstGPT CSV, or generic CSV/JSONL"
    )
  addPolicyFlags(simulate, {
    main: "policies",
    description:
      "comma-separated policy names, each once, or all (listed below; default: the demo's five references)",
    fallback: DEFAULT_POLICIES
  })
  simulate
    .option("--dp <n>", "data-parallel ranks", rankCount("--dp"), 8)
    .option("--model <name>", "step-time model preset (listed below)", "glm-5.3")
    .option("--gpu <name>", "GPU preset (listed below)", "h200")
    .option(
      "--tp <n>",
      "tensor-parallel GPUs per DP rank: 1, 2, 4 or 8 (default: the model preset's)",
      positiveInt("--tp")
    )
    .addOption(
      new Option("--engine <engine>", "engine model for every policy (default: each policy's own)").choices([
        ...engineNames
      ])
    )
    .option(
      "--rate-scale <x>",
      "multiply the arrival rate (2 = twice as fast)",
      positiveNumber("--rate-scale")
    )
    .option("--limit <n>", "use only the first N requests", positiveInt("--limit"))
    .option("--json", "print the results as JSON")
    .option("--report <file>", "write a self-contained HTML report with charts")
    .option("--seed <n>", "seed (random bootstrap rooms)", nonNegativeInt("--seed"), 0)
    .option("--front-ends <n>", "vLLM API-server processes", positiveInt("--front-ends"), 1)
    .addOption(traceFormatOption())
    .option(
      "--kv-pool-tokens <n>",
      "KV pool per rank in tokens (default: from model and GPU)",
      positiveInt("--kv-pool-tokens")
    )
    .option(
      "--chunked-prefill <n>",
      "prefill token budget per step (default: 8192)",
      positiveInt("--chunked-prefill")
    )
    .option("--max-running <n>", "max running requests per rank (default: 64)", positiveInt("--max-running"))
    .option(
      "--max-concurrency <n>",
      "closed loop: at most N requests in flight, each next one sent when one finishes (default: the trace's arrivals)",
      positiveInt("--max-concurrency")
    )
    .option(
      "--prefill-interval <k>",
      "admit prefills every k group steps, with vLLM's saturation guard (--prefill-schedule-interval) (default: 1)",
      positiveInt("--prefill-interval")
    )
    .option("--async-scheduling", "vLLM's async scheduling: a step is scheduled while the previous one runs")
    .option(
      "--no-dummy-batches",
      "forward veto: a rank with an empty batch stalls the group instead of running a dummy forward"
    )
    .option(
      "--max-request-tokens <n>",
      "engine request limit, input + output tokens (default: the KV pool)",
      positiveInt("--max-request-tokens")
    )
    .option(
      "--stall-steps <n>",
      "no-progress bound: empty-batch step attempts before the run stops naming the rank (default: 16)",
      positiveInt("--stall-steps")
    )
    .addOption(
      new Option(
        "--coordinator-rows <rows>",
        "what vLLM front ends are handed per rank: vLLM's [waiting, running, kv] plus tokens and time (extended), exactly vLLM's row (vllm), or [waiting, running] (vllm-counts) (default: extended)"
      ).choices(["extended", "vllm", "vllm-counts"])
    )
    .option(
      "--policy-config <file>",
      "also run the own policy this JSON configuration describes (PolicyConfig)"
    )
  addFaultFlags(simulate)
  simulate
    .option("--quiet", "no progress on stderr")
    .option("--progress", "progress on a non-terminal stderr too (a line every 2 s; a terminal gets a bar)")
    .addHelpText("after", () => simulateHelpText())
    .addHelpText("after", examplesHelp("simulate"))
    .action(async (opts: SimulateOptions) => {
      await runSimulate(opts)
    })
}
