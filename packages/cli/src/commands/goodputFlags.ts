/**
 * The flags `goodput` and `compare` share (everything but the policy list and the help text), and
 * the method line both print.
 *
 * @since 0.6.0
 */
import { engineNames, SLO_PRESETS } from "@loadledger/sim"
import { type Command, Option } from "commander"
import { nonNegativeInt, positiveInt, positiveNumber, rankCount } from "../internal/args.js"
import { traceFormatOption } from "../internal/simSetup.js"

/**
 * The SLO `goodput` and `compare` judge by when none is given.
 *
 * @example
 * ```ts
 * import { DEFAULT_SLO } from "./goodputFlags.js"
 * DEFAULT_SLO // => "mlperf-deepseek-r1"
 * ```
 */
export const DEFAULT_SLO = "mlperf-deepseek-r1"

/**
 * How the goodputs were found, in one sentence (the table's `method:` line and the JSON's).
 *
 * @example
 * ```ts
 * import { methodText } from "./goodputFlags.js"
 * methodText(10, 0.95, 0.01, true).startsWith("10 disjoint windows of consecutive requests") // => true
 * ```
 */
export const methodText = (windows: number, confidence: number, precision: number, warm: boolean): string =>
  `${windows} disjoint windows of consecutive requests, each replayed from an idle group; per window the largest rate multiplier passing the SLO, bracketed ${warm ? "in 5% steps from the engine's first policy's goodput on that window" : "by doubling or halving"}, then bisection to ${precision * 100}%; goodput = mean over windows with a Student t ${Math.round(confidence * 100)}% interval; paired comparisons: t interval of the per-window log ratios (each interval on its own, not adjusted for the number of comparisons)`

/**
 * The help paragraph on SLOs: the presets and the text form.
 *
 * @example
 * ```ts
 * import { SLO_HELP } from "./goodputFlags.js"
 * SLO_HELP.includes("mlperf-deepseek-r1") // => true
 * ```
 */
export const SLO_HELP = `SLO presets (MLPerf Inference's p99 bounds, DistServe's joint 90%; each cites its source;
loadledger list slo shows their bounds): ${Object.keys(SLO_PRESETS).join(", ")};
or ttft=2s,tpot=100ms[,attain=0.9][,itl=…][,criterion=joint|p99] (every time with its unit: s, ms, us).
vLLM's benchmark --goodput ttft:2000 tpot:100 is --slo ttft=2000ms,tpot=100ms (joint).`

/**
 * Add the shared flags to `cmd`: `--trace`, `--slo`, the group (`--dp`, `--model`, `--gpu`, `--tp`,
 * `--engine`, `--front-ends`), the method (`--windows`, `--precision`, `--confidence`, `--start`,
 * `--jobs`, curves, warm start) and the outputs.
 *
 * @example
 * ```ts
 * import { Command } from "commander"
 * import { addGoodputFlags } from "./goodputFlags.js"
 * addGoodputFlags(new Command("x")).options.slice(0, 2).map((o) => o.long) // => ["--trace", "--slo"]
 * ```
 */
export const addGoodputFlags = (cmd: Command): Command =>
  cmd
    .requiredOption(
      "--trace <file>",
      "trace file: Mooncake JSONL, Azure CSV (2023 or 2024), BurstGPT CSV, or generic CSV/JSONL"
    )
    .option("--slo <slo>", "SLO preset or ttft=…,tpot=…[,attain=…][,criterion=joint|p99]", DEFAULT_SLO)
    .option("--dp <n>", "data-parallel ranks", rankCount("--dp"), 8)
    .option("--model <name>", "step-time model preset (loadledger list models)", "glm-5.3")
    .option("--gpu <name>", "GPU preset (loadledger list gpus)", "h200")
    .option(
      "--tp <n>",
      "tensor-parallel GPUs per DP rank: 1, 2, 4 or 8 (default: the model preset's)",
      positiveInt("--tp")
    )
    .addOption(
      new Option(
        "--engine <engine>",
        "run every policy on this engine (default: each on its own, ranked per engine)"
      ).choices([...engineNames])
    )
    .option("--front-ends <n>", "vLLM API servers (with --engine vllm)", positiveInt("--front-ends"), 1)
    .option("--seed <n>", "seed", nonNegativeInt("--seed"), 0)
    .addOption(traceFormatOption())
    .option("--limit <n>", "use only the first N requests", positiveInt("--limit"))
    .option("--windows <n>", "replications: disjoint windows of the trace", positiveInt("--windows"), 10)
    .option("--precision <x>", "bisection stops within 1 + x", positiveNumber("--precision"), 0.01)
    .option("--confidence <x>", "confidence of every interval", positiveNumber("--confidence"), 0.95)
    .option("--start <x>", "first rate multiplier probed on each window", positiveNumber("--start"), 1)
    .option(
      "--jobs <n>",
      "worker threads (default: one per core; 1 runs in this thread)",
      positiveInt("--jobs")
    )
    .option(
      "--curve-policies <n>",
      "attainment curves for the N best policies of each engine and the references ('all': every policy)",
      (v: string) => (v === "all" ? Number.POSITIVE_INFINITY : positiveInt("--curve-policies")(v)),
      5
    )
    .option("--no-curves", "skip the attainment curves")
    .option(
      "--no-warm-start",
      "search every policy from --start by doubling (default: from the engine's first policy's goodput on the same window, in 5% steps)"
    )
    .option("--report <file>", "write an HTML report with the attainment curves")
    .option("--json", "print the leaderboard as JSON")
    .option("--quiet", "no progress on stderr")
    .option("--progress", "progress on a non-terminal stderr too")
