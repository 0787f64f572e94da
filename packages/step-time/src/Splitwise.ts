/**
 * Calibration samples from splitwise performance profiles (`perf_model_*.csv`).
 *
 * @since 0.1.0
 */
import { parse } from "csv-parse/sync"
import { Result } from "effect"
import type { CalibrationError, StepSample } from "./Calibration.js"
import { type GpuSpec, gpus as gpuPresets } from "./Hardware.js"
import { type ModelSpec, withTp } from "./Model.js"

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
 * Turn a splitwise profile CSV into calibration samples, two per row: a decode step (`token_time`,
 * ms: `batch_size` decodes at the mean context `prompt_size + token_size / 2`) and a prefill step
 * (`prompt_time`, ms: `batch_size` extends of `prompt_size` tokens). `hardware` names a GPU preset,
 * `tensor_parallel` the TP size of the single engine (one DP rank).
 *
 * **When to use**: to calibrate on the splitwise data (github.com/Mutinifni/splitwise-sim,
 * `data/perf_model.csv` layout, MIT) or any CSV with the same columns. Rows can be filtered by
 * `gpu` (hardware column) and `tp`. Fails with the row and column of the first bad value, or an
 * unknown hardware name; never throws.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { models, splitwiseSamples } from "@loadledger/step-time"
 * const csv = "model,hardware,prompt_size,batch_size,token_size,prompt_time,token_time,tensor_parallel\n" +
 *   "llama2-70b,h100-80gb,512,4,128,132.7,31.6,8\n"
 * const r = splitwiseSamples(csv, { model: models["llama2-70b"]! })
 * Result.isSuccess(r) && r.success.map((s) => s.phase).join(",") // => "decode,prefill"
 * ```
 *
 * @category calibration
 * @since 0.1.0
 */
export const splitwiseSamples = (
  csvText: string,
  options: {
    readonly model: ModelSpec
    readonly gpu?: string | undefined
    readonly tp?: number | undefined
    readonly gpus?: Record<string, GpuSpec> | undefined
  }
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
    if (options.gpu !== undefined && hardware !== options.gpu) continue
    if (options.tp !== undefined && tp !== options.tp) continue
    const gpu = table[hardware]
    if (gpu === undefined)
      return Result.fail({
        _tag: "CalibrationError",
        field: "hardware",
        row,
        message: `unknown GPU ${hardware}`
      })
    const model = withTp(options.model, tp)
    const batch = num("batch_size")
    const prompt = num("prompt_size")
    const context = prompt + num("token_size") / 2
    const group = hardware
    const configuration = `${hardware} tp${tp} batch ${batch} prompt ${prompt} tokens ${num("token_size")}`
    out.push({
      model,
      gpu,
      group,
      phase: "decode",
      batchSize: batch,
      source: "splitwise",
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
      source: "splitwise",
      configuration: `${configuration} prefill`,
      ranks: [{ decode: [], extend: Array.from({ length: batch }, () => ({ prefix: 0, tokens: prompt })) }],
      measuredSeconds: num("prompt_time") / 1000
    })
  }
  return Result.succeed(out)
}
