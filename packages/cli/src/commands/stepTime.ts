/**
 * `loadledger step-time`: models one lockstep DP step (per-rank attention, MoE, collectives, sync wait) for a model and GPU (preset name or JSON spec), and resolves those names for the other commands.
 *
 * @since 0.1.0
 */
import { existsSync, readFileSync } from "node:fs"
import { basename } from "node:path"
import {
  type Efficiencies,
  type GpuSpec,
  gpus,
  type ModelSpec,
  modelFromHfConfig,
  modelFromJson,
  models,
  ranksFromJson,
  stepTime
} from "@loadledger/step-time"
import Table from "cli-table3"
import type { Command } from "commander"
import * as Result from "effect/Result"
import { examplesHelp } from "../internal/examples.js"

/** Read an argument that is either inline JSON or the path of a JSON file. */
const readJsonArg = (what: string, arg: string): unknown => {
  const text = existsSync(arg) ? readFileSync(arg, "utf8") : arg
  try {
    return JSON.parse(text)
  } catch (e) {
    throw new Error(
      `${what}: not JSON and not a readable file (${e instanceof Error ? e.message : String(e)})`
    )
  }
}

/**
 * A model preset by name, or a JSON file: a loadledger model spec (see `modelFromJson`) or a
 * Hugging Face `config.json` (see `modelFromHfConfig`; FP8 weights when `quantization_config`
 * says `fp8`, else BF16; BF16 KV cache). Throws a one-line error naming the bad field or listing
 * the presets.
 *
 * @example
 * ```ts
 * import { resolveModel } from "./stepTime.js"
 * resolveModel("glm-5.3").name // => "glm-5.3"
 * const thrown = (f: () => unknown) => { try { f() } catch (e) { return (e as Error).message } }
 * thrown(() => resolveModel("gpt-9"))?.startsWith("unknown model gpt-9 (presets: glm-5.3-dense,") // => true
 * ```
 *
 * @since 0.1.0
 */
export const resolveModel = (nameOrFile: string): ModelSpec => {
  const preset = models[nameOrFile]
  if (preset !== undefined) return preset
  if (!existsSync(nameOrFile))
    throw new Error(
      `unknown model ${nameOrFile} (presets: ${Object.keys(models).join(", ")}; or a JSON spec file)`
    )
  const doc = readJsonArg("--model", nameOrFile)
  // a Hugging Face config.json (has hidden_size) or a loadledger model spec
  const hf =
    typeof doc === "object" && doc !== null && "hidden_size" in doc
      ? (doc as Record<string, unknown>)
      : undefined
  const quant = hf?.["quantization_config"] as Record<string, unknown> | undefined
  const r =
    hf === undefined
      ? modelFromJson(doc)
      : modelFromHfConfig(hf, {
          name: basename(nameOrFile).replace(/\.json$/, ""),
          weightBytesPerParam:
            typeof quant?.["quant_method"] === "string" && quant["quant_method"] === "fp8" ? 1 : 2
        })
  if (Result.isFailure(r)) throw new Error(`${nameOrFile}: ${r.failure.path}: ${r.failure.message}`)
  return r.success
}

/**
 * A GPU preset by name. Throws a one-line error listing the presets.
 *
 * @example
 * ```ts
 * import { resolveGpu } from "./stepTime.js"
 * resolveGpu("h200").name // => "h200"
 * const thrown = (f: () => unknown) => { try { f() } catch (e) { return (e as Error).message } }
 * thrown(() => resolveGpu("tpu"))?.startsWith("unknown GPU tpu (presets: ") // => true
 * ```
 *
 * @since 0.1.0
 */
export const resolveGpu = (name: string): GpuSpec => {
  const g = gpus[name]
  if (g === undefined) throw new Error(`unknown GPU ${name} (presets: ${Object.keys(gpus).join(", ")})`)
  return g
}

const ms = (s: number) => (s * 1000).toFixed(3)

/**
 * Registers `loadledger step-time --model NAME|FILE --gpu NAME --ranks JSON|FILE [--params JSON|FILE]
 * [--json]`: the modelled lockstep step for one batch per DP rank. `--ranks` is an array over
 * ranks, each an array of decode context lengths or `{ "decode": [...], "extend": [{ "prefix",
 * "tokens" }] }`; `--params` overrides efficiencies (e.g. the `params` printed by `calibrate`).
 * Prints a table, or with `--json` the full result (`stepSeconds`, `moeSeconds`, `commSeconds`,
 * `tokenImbalanceRatio`, `pairsImbalanceRatio`, `cudaGraph`, `ranks[]`).
 *
 * @example
 * ```ts
 * import { Command } from "commander"
 * import { register } from "./stepTime.js"
 * const program = new Command()
 * register(program)
 * const stepTime = program.commands[0]!
 * stepTime.name() // => "step-time"
 * stepTime.options.map((o) => o.long) // => ["--model", "--gpu", "--ranks", "--params", "--json"]
 * ```
 *
 * @since 0.1.0
 */
export const register = (program: Command): void => {
  program
    .command("step-time")
    .description("model one lockstep DP step: per-rank attention, MoE, collectives and sync wait")
    .requiredOption(
      "--model <name|file>",
      `model preset (${Object.keys(models).join(", ")}), JSON spec or HF config.json`
    )
    .requiredOption("--gpu <name>", `GPU preset (${Object.keys(gpus).join(", ")})`)
    .requiredOption("--ranks <json|file>", "per-rank batches: [[L, ...], {decode, extend}, ...]")
    .option("--params <json|file>", "efficiency overrides (JSON object, e.g. calibrate's params)")
    .option("--json", "print JSON")
    .addHelpText("after", examplesHelp("step-time"))
    .action((opts: { model: string; gpu: string; ranks: string; params?: string; json?: boolean }) => {
      const model = resolveModel(opts.model)
      const gpu = resolveGpu(opts.gpu)
      const ranks = ranksFromJson(readJsonArg("--ranks", opts.ranks))
      if (Result.isFailure(ranks))
        throw new Error(
          `--ranks: ${ranks.failure.path === "" ? "" : `${ranks.failure.path}: `}${ranks.failure.message}`
        )
      let params: Partial<Efficiencies> | undefined
      if (opts.params !== undefined) {
        const p = readJsonArg("--params", opts.params)
        if (typeof p !== "object" || p === null || Array.isArray(p))
          throw new Error("--params: expected a JSON object")
        const o = p as Record<string, unknown>
        const src =
          typeof o["params"] === "object" && o["params"] !== null
            ? (o["params"] as Record<string, unknown>)
            : o
        for (const [k, v] of Object.entries(src))
          if (typeof v !== "number" || !Number.isFinite(v) || v < 0)
            throw new Error(`--params: ${k}: expected a number >= 0`)
        params = src as Partial<Efficiencies>
      }
      const r = stepTime({ model, gpu, params }, ranks.success)
      if (opts.json) {
        process.stdout.write(`${JSON.stringify({ model: model.name, gpu: gpu.name, ...r }, null, 2)}\n`)
        return
      }
      process.stdout.write(
        `${model.name} on ${gpu.name}, ${r.ranks.length} DP ranks, ${model.numLayers} layers\n` +
          `step ${ms(r.stepSeconds)} ms = attention ${ms(r.attentionSeconds)} + MoE/MLP ${ms(r.moeSeconds)} + ` +
          `collectives ${ms(r.commSeconds)} + LM head ${ms(r.lmHeadSeconds)} + overhead ${ms(r.overheadSeconds)}\n` +
          `token imbalance ${r.tokenImbalanceRatio.toFixed(2)} (max/mean), attention pairs ` +
          `${r.pairsImbalanceRatio.toFixed(2)}, idle ranks ${r.idleRanks}, CUDA graph ${r.cudaGraph ? "yes" : "no (eager)"}\n`
      )
      const table = new Table({
        head: [
          "rank",
          "tokens",
          "attention pairs",
          "KV read GB",
          "local ms",
          "sync wait ms",
          "imbalance pairs",
          "idle"
        ],
        style: { head: [], border: [], compact: true }
      })
      for (const k of r.ranks)
        table.push([
          k.dpRank,
          k.tokens,
          k.attentionPairs.toLocaleString("en-US"),
          (k.kvBytesRead / 1e9).toFixed(2),
          ms(k.localSeconds),
          ms(k.syncWaitSeconds),
          k.imbalancePairs.toLocaleString("en-US"),
          k.idle ? "yes" : ""
        ])
      process.stdout.write(`${table.toString()}\n`)
    })
}
