/**
 * Calibration samples from splitwise performance profiles (`perf_model_*.csv`).
 *
 * @since 0.1.0
 */
import { parse } from "csv-parse/sync"
import * as Result from "effect/Result"
import type { CalibrationError, StepSample } from "./Calibration.js"
import { type GpuSpec, gpus as gpuPresets } from "./Hardware.js"
import { type ModelSpec, withTp } from "./Model.js"
import { models as modelPresets } from "./ModelPresets.js"

const required = [
  "hardware",
  "prompt_size",
  "batch_size",
  "token_size",
  "prompt_time",
  "token_time",
  "tensor_parallel"
]

/**
 * Options of {@link splitwiseSamples}.
 *
 * - `models`: the specs the `model` column names (default: the {@link models} presets).
 * - `model`: keep only the rows of this model (whose `model` column is `model.name`; every row
 *   when the file has no `model` column), with this spec.
 * - `gpu`, `tp`: keep only rows of this `hardware` / `tensor_parallel`.
 * - `gpus`: the specs the `hardware` column names (default: the {@link gpus} presets).
 * - `source`: the stack that measured the rows (default `splitwise`): rows of one source share
 *   their overheads in {@link fit}, so name your own stack's measurements differently.
 * - `cudaGraph`: whether the stack replayed decode steps from a CUDA graph (default false: in
 *   splitwise's profiles Llama-2-70B's decode on A100 takes 44-45 ms at TP 4 and at TP 8 although
 *   the weights read per GPU halve, a launch-bound step; only {@link fitShape} reads it).
 *
 * @category calibration
 * @since 0.2.0
 */
export interface SplitwiseOptions {
  readonly model?: ModelSpec | undefined
  readonly models?: Readonly<Record<string, ModelSpec>> | undefined
  readonly gpu?: string | undefined
  readonly tp?: number | undefined
  readonly gpus?: Record<string, GpuSpec> | undefined
  readonly source?: string | undefined
  readonly cudaGraph?: boolean | undefined
}

/**
 * Turn a splitwise profile CSV into calibration samples, two per row: a decode step (`token_time`,
 * ms: `batch_size` decodes at the mean context `prompt_size + token_size / 2`) and a prefill step
 * (`prompt_time`, ms: `batch_size` extends of `prompt_size` tokens). `model` names a model spec
 * (any model of `options.models`, default the presets: splitwise's file holds `llama2-70b` and
 * `bloom-176b`), `hardware` a GPU preset, `tensor_parallel` the TP size of the single engine
 * (one DP rank).
 *
 * **When to use**: to calibrate on the splitwise data (github.com/Mutinifni/splitwise-sim,
 * `data/perf_model.csv` layout, MIT) or any CSV with the same columns, with any models. Rows can
 * be filtered by `model`, `gpu` (hardware column) and `tp` ({@link SplitwiseOptions}). Fails
 * with the row and column of the first bad value, an unknown hardware name, or a model no spec
 * is given for (`field: "model"`, naming it); never throws.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { models, splitwiseSamples } from "@loadledger/step-time"
 * const csv = "model,hardware,prompt_size,batch_size,token_size,prompt_time,token_time,tensor_parallel\n" +
 *   "llama2-70b,h100-80gb,512,4,128,132.7,31.6,8\n"
 * const r = splitwiseSamples(csv, { model: models["llama2-70b"]! })
 * Result.isSuccess(r) && r.success.map((s) => s.phase).join(",") // => "decode,prefill"
 * // without `model`, each row's model column picks its spec; a name with no spec is an error
 * const two = csv + "bloom-176b,h100-80gb,512,4,128,180.1,40.2,8\n"
 * const all = splitwiseSamples(two, {})
 * Result.isSuccess(all) && all.success.map((s) => s.model.name).join(",") // => "llama2-70b,llama2-70b,bloom-176b,bloom-176b"
 * const unknown = splitwiseSamples(csv.replace("llama2-70b,h100", "opt-66b,h100"), {})
 * Result.isFailure(unknown) && unknown.failure.message // => "no model spec for opt-66b: not in options.models (default: the presets)"
 * ```
 *
 * @category calibration
 * @since 0.1.0
 */
export const splitwiseSamples = (
  csvText: string,
  options: SplitwiseOptions
): Result.Result<ReadonlyArray<StepSample>, CalibrationError> => {
  let records: Array<Record<string, string>>
  try {
    records = parse(csvText, { columns: true, skip_empty_lines: true, trim: true })
  } catch (e) {
    return Result.fail({
      _tag: "CalibrationError",
      field: "csv",
      message: e instanceof Error ? e.message : String(e)
    })
  }
  const table = options.gpus ?? gpuPresets
  const specs = options.models ?? modelPresets
  const source = options.source ?? "splitwise"
  const out: Array<StepSample> = []
  for (let i = 0; i < records.length; i++) {
    const rec = records[i]!
    const row = i + 2 // 1-based line number, after the header
    for (const c of required)
      if (rec[c] === undefined)
        return Result.fail({ _tag: "CalibrationError", field: c, row, message: `missing column ${c}` })
    const num = (c: string) => Number(rec[c])
    for (const c of required.slice(1)) {
      const v = num(c)
      if (!Number.isFinite(v) || v <= 0)
        return Result.fail({
          _tag: "CalibrationError",
          field: c,
          row,
          message: `${c} must be a positive number`
        })
    }
    const hardware = rec["hardware"]!
    const tp = num("tensor_parallel")
    const modelName = rec["model"]
    if (options.gpu !== undefined && hardware !== options.gpu) continue
    if (options.tp !== undefined && tp !== options.tp) continue
    if (options.model !== undefined && modelName !== undefined && modelName !== options.model.name) continue
    const spec =
      options.model ??
      (modelName === undefined ? undefined : Object.hasOwn(specs, modelName) ? specs[modelName] : undefined)
    if (spec === undefined)
      return Result.fail({
        _tag: "CalibrationError",
        field: "model",
        row,
        message:
          modelName === undefined
            ? "missing column model (or pass options.model)"
            : `no model spec for ${modelName}: not in options.models (default: the presets)`
      })
    const gpu = table[hardware]
    if (gpu === undefined)
      return Result.fail({
        _tag: "CalibrationError",
        field: "hardware",
        row,
        message: `unknown GPU ${hardware}`
      })
    const model = withTp(spec, tp)
    const batch = num("batch_size")
    const prompt = num("prompt_size")
    const context = prompt + num("token_size") / 2
    const group = hardware
    const configuration = `${spec.name} ${hardware} tp${tp} batch ${batch} prompt ${prompt} tokens ${num("token_size")}`
    out.push({
      model,
      gpu,
      group,
      phase: "decode",
      batchSize: batch,
      source,
      cudaGraph: options.cudaGraph ?? false,
      configuration: `${configuration} decode`,
      ranks: [{ decode: new Array<number>(batch).fill(context), extend: [] }],
      measuredSeconds: num("token_time") / 1000
    })
    out.push({
      model,
      gpu,
      group,
      phase: "prefill",
      batchSize: batch,
      source,
      configuration: `${configuration} prefill`,
      ranks: [{ decode: [], extend: Array.from({ length: batch }, () => ({ prefix: 0, tokens: prompt })) }],
      measuredSeconds: num("prompt_time") / 1000
    })
  }
  return Result.succeed(out)
}
