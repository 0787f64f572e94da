/**
 * `loadledger tune`: search the weights of one own policy's named terms for the highest goodput
 * on the user's trace under an SLO (Nelder-Mead, `fmin`), tuned on the first half of the trace and
 * judged on the second, and print the chosen configuration as the JSON `simulate`, `goodput` and
 * `serve` take as `--policy-config`.
 *
 * @since 0.6.0
 */
import { existsSync, writeFileSync } from "node:fs"
import { defaultPolicyConfig, ownPolicyConfigs, type PolicyConfig } from "@loadledger/policies"
import { describeSlo, type EngineName, engineNames, meanArrivalRate, type TraceFormat } from "@loadledger/sim"
import { type Command, Option } from "commander"
import { fail, nonNegativeInt, positiveInt, positiveNumber, rankCount } from "../internal/args.js"
import { examplesHelp } from "../internal/examples.js"
import { gpuPreset, modelPreset, readTraceFileNoting, traceFormatOption } from "../internal/simSetup.js"
import { readSloFlag } from "../internal/sloFlag.js"
import { tuneConfig } from "../tune/run.js"
import { tuneReport } from "../tune/text.js"
import { DEFAULT_SLO } from "./goodputFlags.js"
import { readPolicyConfig } from "./policyConfigFile.js"
import { progressLine } from "./progress.js"
import { checkModelFit, checkOutputPath } from "./simulateArgs.js"

/**
 * The own configuration `tune` starts from when `--from` is not given: the shipped default
 * (`defaultPolicyConfig`).
 *
 * @example
 * ```ts
 * import { DEFAULT_FROM } from "./tune.js"
 * DEFAULT_FROM // => "loadledger-default"
 * ```
 */
export const DEFAULT_FROM = "loadledger-default"

/**
 * Options of `loadledger tune`, as parsed.
 *
 * @category tune
 * @since 0.6.0
 */
export interface TuneCommandOptions {
  readonly trace: string
  readonly slo: string
  /** An own configuration's name (`ownPolicyConfigs`) or a JSON file (`PolicyConfig`). */
  readonly from: string
  readonly name?: string | undefined
  readonly budget: number
  readonly windows: number
  readonly dp: number
  readonly model: string
  readonly gpu: string
  readonly tp?: number | undefined
  readonly engine?: EngineName | undefined
  readonly frontEnds: number
  readonly seed: number
  readonly format?: TraceFormat | undefined
  readonly limit?: number | undefined
  readonly precision: number
  readonly confidence: number
  readonly out?: string | undefined
  readonly quiet?: boolean | undefined
  readonly progress?: boolean | undefined
}

/** `--from`: the shipped default, a registered own configuration by name, or a JSON file. */
const startConfig = (from: string): PolicyConfig => {
  if (from === defaultPolicyConfig.name) return defaultPolicyConfig
  const own = ownPolicyConfigs[from]
  if (own !== undefined) return own
  if (!existsSync(from))
    return fail(
      `--from: "${from}" is neither an own configuration (${[defaultPolicyConfig.name, ...Object.keys(ownPolicyConfigs)].join(", ")}) nor a file`
    )
  const read = readPolicyConfig(from)
  if ("_tag" in read) return fail(read.message.replace("--policy-config", "--from"))
  return read.config as PolicyConfig
}

/**
 * Run `tune` with parsed options: check them, read the trace, tune, write the configuration
 * (stdout, or `--out FILE` with the report on stdout) and the report (stderr when the
 * configuration goes to stdout). Throws an `Error` with a one-line message on bad input.
 *
 * @example
 * ```ts
 * import { runTune } from "./tune.js"
 * const o = { trace: "examples/traces/mooncake/conversation_trace.jsonl", slo: "ttft=10s,tpot=100ms", from: "ledger-scored", budget: 2, windows: 2, dp: 2, model: "glm-5.3", gpu: "h200", frontEnds: 1, seed: 0, precision: 0.2, confidence: 0.95 }
 * await runTune({ ...o, from: "cache-affinity" }).catch((e: Error) => e.message)
 * // => "--from: a cache-affinity configuration has no weighted terms to tune (it decides by rules)"
 * await runTune({ ...o, frontEnds: 4 }).catch((e: Error) => e.message)
 * // => "--front-ends counts vLLM API servers; add --engine vllm"
 * ```
 *
 * @category tune
 * @since 0.6.0
 */
export const runTune = async (o: TuneCommandOptions): Promise<void> => {
  const slo = readSloFlag(o.slo, "--slo")
  modelPreset(o.model, o.tp)
  gpuPreset(o.gpu)
  const noFit = checkModelFit(o.model, o.gpu, o.tp)
  if (noFit !== undefined) return fail(noFit.message)
  if (o.frontEnds > 1 && o.engine !== "vllm")
    return fail("--front-ends counts vLLM API servers; add --engine vllm")
  if (!(o.windows >= 2)) return fail(`--windows must be an integer >= 2 (per half), got ${o.windows}`)
  if (!(o.confidence > 0 && o.confidence < 1))
    return fail(`--confidence must be in (0, 1), e.g. 0.95, got ${o.confidence}`)
  const from = startConfig(o.from)
  const { tunableWeights } = await import("../tune/weights.js")
  const weights = tunableWeights(from, o.frontEnds)
  if (typeof weights === "string") return fail(`--from: ${weights}`)
  if (o.out !== undefined) {
    const bad = checkOutputPath("--out", o.out)
    if (bad) return fail(bad.message)
  }
  const trace = readTraceFileNoting(o.trace, o.format, `--trace ${o.trace}`, o.limit)
  const rate = meanArrivalRate(trace)
  if (rate === undefined) return fail(`${o.trace}: the trace's arrivals span no time: it has no rate`)
  if (trace.length / (2 * o.windows) < 20)
    return fail(
      `--windows ${o.windows}: ${trace.length} requests leave fewer than 20 per window in two halves of ${o.windows} windows (use fewer windows)`
    )
  const engine: EngineName = o.engine ?? "sglang"
  const name = o.name ?? `${from.name ?? o.from}-tuned`
  const show = o.quiet !== true && (process.stderr.isTTY === true || o.progress === true)
  const t0 = performance.now()
  const outcome = await tuneConfig({
    setup: {
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
      slo,
      start: 1,
      precision: o.precision
    },
    engine,
    from,
    name,
    budget: o.budget,
    traceRequestsPerSecond: rate,
    confidence: o.confidence,
    onEvaluation: (done, budget, best) => {
      if (!show) return
      const line = progressLine({
        done,
        total: budget,
        unit: "evaluations",
        elapsedSeconds: (performance.now() - t0) / 1000,
        label: `best ${best.toFixed(3)} req/s on the first half`
      })
      process.stderr.write(process.stderr.isTTY === true ? `\r\x1b[2K${line}` : `${line}\n`)
    }
  })
  if (show && process.stderr.isTTY === true) process.stderr.write("\r\x1b[2K")
  const json = `${JSON.stringify(outcome.config, null, 2)}\n`
  const report = tuneReport(outcome, {
    trace: o.trace,
    requests: trace.length,
    from: o.from,
    engine,
    frontEnds: o.frontEnds,
    slo: describeSlo(slo),
    windows: o.windows,
    seconds: (performance.now() - t0) / 1000,
    out: o.out
  })
  if (o.out !== undefined) {
    writeFileSync(o.out, json)
    process.stdout.write(report)
  } else {
    process.stdout.write(json)
    if (o.quiet !== true) process.stderr.write(report)
  }
}

/**
 * Registers `loadledger tune --trace FILE [--slo S] [--from NAME|FILE] [--engine E]
 * [--front-ends N] [--budget N] [--out FILE]`.
 *
 * @example
 * ```ts
 * import { Command } from "commander"
 * import { register } from "./tune.js"
 * const program = new Command()
 * register(program)
 * program.commands[0]!.name() // => "tune"
 * program.commands[0]!.options.slice(0, 4).map((o) => o.long) // => ["--trace", "--slo", "--from", "--budget"]
 * ```
 *
 * @since 0.6.0
 */
export const register = (program: Command): void => {
  program
    .command("tune")
    .description(
      "tune an own policy's term weights for the highest goodput on a trace under an SLO; print the configuration"
    )
    .requiredOption(
      "--trace <file>",
      "trace file: Mooncake JSONL, Azure CSV (2023 or 2024), BurstGPT CSV, or generic CSV/JSONL"
    )
    .option("--slo <slo>", "SLO preset or ttft=…,tpot=…[,attain=…][,criterion=joint|p99]", DEFAULT_SLO)
    .option(
      "--from <name|file>",
      "own configuration to start from: loadledger-default, another own policy's name, or a JSON file",
      DEFAULT_FROM
    )
    .option(
      "--budget <n>",
      "evaluations (each a goodput search on every first-half window)",
      positiveInt("--budget"),
      24
    )
    .option("--windows <n>", "windows per half of the trace", positiveInt("--windows"), 4)
    .option("--name <name>", "the tuned configuration's name (default: <from>-tuned)")
    .option("--out <file>", "write the configuration here (default: stdout, the report on stderr)")
    .option("--dp <n>", "data-parallel ranks", rankCount("--dp"), 8)
    .option("--model <name>", "step-time model preset (loadledger list models)", "glm-5.3")
    .option("--gpu <name>", "GPU preset (loadledger list gpus)", "h200")
    .option("--tp <n>", "tensor-parallel GPUs per DP rank (default: the model preset's)", positiveInt("--tp"))
    .addOption(new Option("--engine <engine>", "engine model (default: sglang)").choices([...engineNames]))
    .option("--front-ends <n>", "vLLM API servers (with --engine vllm)", positiveInt("--front-ends"), 1)
    .option("--seed <n>", "seed", nonNegativeInt("--seed"), 0)
    .addOption(traceFormatOption())
    .option("--limit <n>", "use only the first N requests", positiveInt("--limit"))
    .option(
      "--precision <x>",
      "each goodput bisection stops within 1 + x",
      positiveNumber("--precision"),
      0.02
    )
    .option("--confidence <x>", "confidence of every interval", positiveNumber("--confidence"), 0.95)
    .option("--quiet", "no progress and no report on stderr")
    .option("--progress", "progress on a non-terminal stderr too")
    .addHelpText(
      "after",
      `\nThe trace is cut into 2 x --windows windows of consecutive requests. The first half (by arrival)
tunes: each evaluation is the mean goodput over its windows (the largest rate at which the SLO is met,
as loadledger goodput finds it) of one point of the weights, searched by Nelder-Mead (fmin) from
--from's weights. The second half is held out: the report gives the default's (--from's) and the
tuned configuration's goodput there, their paired difference and the balance bound.
Run the result: loadledger goodput --trace T --policy-config tuned.json ; loadledger serve --policy-config tuned.json ...
${examplesHelp("tune")}`
    )
    .action(async (opts: TuneCommandOptions) => {
      await runTune(opts)
    })
}
