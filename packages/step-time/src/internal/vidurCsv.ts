/** CSV helpers shared by the Vidur readers. */
import { parse } from "csv-parse/sync"
import * as Result from "effect/Result"
import type { CalibrationError } from "../Calibration.js"
import { type GpuSpec, gpus as gpuPresets } from "../Hardware.js"
import { vidurGpus } from "../VidurGpus.js"

type Rec = Record<string, string>
export const err = (field: string, message: string, row?: number): CalibrationError => ({
  _tag: "CalibrationError",
  field,
  message,
  ...(row === undefined ? {} : { row })
})

export const read = (
  csvText: string,
  required: ReadonlyArray<string>
): Result.Result<{ header: ReadonlyArray<string>; records: ReadonlyArray<Rec> }, CalibrationError> => {
  let records: Array<Rec>
  let header: Array<string> = []
  try {
    records = parse(csvText, {
      // Vidur's network files start with pandas' unnamed index column
      columns: (h: Array<string>) => {
        header = h.map((c, i) => (c === "" ? `_index${i}` : c))
        return header
      },
      skip_empty_lines: true,
      trim: true
    })
  } catch (e) {
    return Result.fail(err("csv", e instanceof Error ? e.message : String(e)))
  }
  for (const c of required) if (!header.includes(c)) return Result.fail(err(c, `missing column ${c}`, 1))
  return Result.succeed({ header, records })
}

export const number = (rec: Rec, c: string, row: number): Result.Result<number, CalibrationError> => {
  const v = Number(rec[c])
  return rec[c] === undefined || rec[c] === "" || !Number.isFinite(v) || v < 0
    ? Result.fail(err(c, `${c} must be a non-negative number`, row))
    : Result.succeed(v)
}

export const resolveGpu = (g: GpuSpec | string): Result.Result<GpuSpec, CalibrationError> => {
  if (typeof g !== "string") return Result.succeed(g)
  const spec = gpuPresets[vidurGpus[g] ?? g]
  return spec === undefined ? Result.fail(err("gpu", `unknown GPU ${g}`)) : Result.succeed(spec)
}

export const boolean = (v: string | undefined) => v === "True" || v === "true" || v === "1"
