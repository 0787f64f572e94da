/**
 * Reads the calibration samples of `loadledger calibrate` from one profile file, its format recognised by its header (Splitwise step rows of any models, Vidur `mlp.csv`, `attention.csv` or a network file).
 *
 * @since 0.1.0
 */
import {
  type CalibrationSample,
  splitwiseSamples,
  vidurAttentionSamples,
  vidurCollectiveSamples,
  vidurFileInfo,
  vidurMlpSamples
} from "@loadledger/step-time"
import * as Result from "effect/Result"
import { readText } from "../internal/readInput.js"
import { resolveModel } from "./stepTime.js"

/**
 * Read one calibration profile, recognising its format by its header: splitwise step rows
 * (`hardware`, `prompt_time`, ...: each row's `model` column names a preset, any number of
 * models per file; `--model NAME|FILE` keeps only that model's rows, with that spec, which is
 * how a model with no preset is read), Vidur `mlp.csv` (`time_stats.mlp_up_proj.*`),
 * `attention.csv` (`time_stats.attn_prefill.*`) or a network file (`collective`). Vidur's GPU and
 * model come from the file's path (`vidurFileInfo`), or `--gpu` / `--model`. Throws a one-line
 * error naming the file (and line/column for bad values, or the model with no spec).
 *
 * @example
 * ```ts
 * import { loadProfile } from "./calibrateLoad.js"
 * // a Vidur network profile: the GPU comes from the file name
 * const rows = loadProfile("fixtures/calibration/vidur/a100_dgx_all_reduce.csv", {})
 * rows.length // => 2982
 * rows[0]?.source // => "vidur"
 * rows[0]?.configuration // => "all_reduce 2 gpus 2048 B"
 * ```
 *
 * @since 0.2.0
 */
export const loadProfile = (
  file: string,
  opts: {
    readonly model?: string | undefined
    readonly gpu?: string | undefined
    readonly tp?: number | undefined
  }
): ReadonlyArray<CalibrationSample> => {
  const text = readText(file)
  const header = text.slice(0, text.indexOf("\n") >= 0 ? text.indexOf("\n") : text.length)
  const cols = header.split(",").map((c) => c.trim())
  const info = vidurFileInfo(file)
  const fail = (r: { field: string; message: string; row?: number | undefined }): never => {
    throw new Error(`${file}${r.row === undefined ? "" : `:${r.row}`}: ${r.field}: ${r.message}`)
  }
  const vidurGpu = () =>
    opts.gpu ??
    info?.gpu ??
    fail({ field: "gpu", message: "cannot tell the GPU from the file name; pass --gpu" })
  let rows: ReadonlyArray<CalibrationSample>
  if (cols.some((c) => c.startsWith("time_stats.mlp_up_proj."))) {
    const r = vidurMlpSamples(text, { gpu: vidurGpu(), model: info?.model ?? opts.model })
    rows = Result.isFailure(r)
      ? fail(r.failure)
      : r.success.filter((s) => opts.tp === undefined || s.model.tp === opts.tp)
  } else if (cols.some((c) => c.startsWith("time_stats.attn_prefill."))) {
    const r = vidurAttentionSamples(text, { gpu: vidurGpu(), model: info?.model ?? opts.model })
    rows = Result.isFailure(r)
      ? fail(r.failure)
      : r.success.filter((s) => opts.tp === undefined || s.model.tp === opts.tp)
  } else if (cols.includes("collective")) {
    const r = vidurCollectiveSamples(text, { gpu: vidurGpu() })
    rows = Result.isFailure(r) ? fail(r.failure) : r.success
  } else {
    const model = opts.model === undefined ? undefined : resolveModel(opts.model)
    const r = splitwiseSamples(text, { model, gpu: opts.gpu, tp: opts.tp })
    rows = Result.isFailure(r)
      ? fail(
          r.failure.field === "model"
            ? { ...r.failure, message: `${r.failure.message}; pass --model with its JSON spec` }
            : r.failure
        )
      : r.success
    if (rows.length === 0 && model !== undefined)
      throw new Error(
        `${file}: no rows match --model ${model.name}${opts.gpu ? ` --gpu ${opts.gpu}` : ""}${opts.tp ? ` --tp ${opts.tp}` : ""} (--model keeps the rows whose model column names it)`
      )
  }
  if (rows.length === 0)
    throw new Error(
      `${file}: no rows match${opts.gpu ? ` --gpu ${opts.gpu}` : ""}${opts.tp ? ` --tp ${opts.tp}` : ""}`
    )
  return rows
}
