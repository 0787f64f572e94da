/**
 * `loadledger calibrate --shape`: the shape-aware fit ({@link fitShape}) of the profiles, each
 * fitted parameter with its 95% interval and identification status per GPU, and the held-out
 * report by (model, phase, GPU): leave-one-model-out and leave-one-GPU-out MAPE per cell.
 *
 * @since 0.7.0
 */
import {
  type CalibrationSample,
  fitShape,
  type HeldOutCell,
  heldOutCells,
  type ShapeFitResult
} from "@loadledger/step-time"
import Table from "cli-table3"
import * as Result from "effect/Result"

/**
 * What `calibrate --shape` computes: the fit, and the held-out cells of both fold kinds.
 *
 * @category calibrate
 * @since 0.7.0
 */
export interface ShapeReport {
  readonly fit: ShapeFitResult
  readonly leaveOneModelOut: ReadonlyArray<HeldOutCell>
  readonly leaveOneGpuOut: ReadonlyArray<HeldOutCell>
}

const orThrow = <A>(r: Result.Result<A, { readonly field: string; readonly message: string }>): A => {
  if (Result.isFailure(r)) throw new Error(`${r.failure.field}: ${r.failure.message}`)
  return r.success
}

/**
 * Fit the shape-aware model to `samples` (intervals from a seeded bootstrap of `bootstrap` refits,
 * else the covariance) and cross-validate it by model and by GPU. Throws an `Error` naming the
 * field when a fit fails (the command prints it).
 *
 * @example
 * ```ts
 * import { defaultShapeParameters, gpus, models, shapeSampleSeconds, withTp } from "@loadledger/step-time"
 * import { shapeReport } from "./calibrateShape.js"
 * const gpu = gpus["a100-80gb"]!
 * const rows = [2, 4].flatMap((tp) => [16, 1024].map((tokens) => {
 *   const row = { kind: "layer" as const, model: withTp(models["llama2-70b"]!, tp), gpu, tokens, source: "vidur", measuredSeconds: 1 }
 *   return { ...row, measuredSeconds: shapeSampleSeconds(defaultShapeParameters, row) }
 * }))
 * const r = shapeReport(rows)
 * r.leaveOneModelOut.map((c) => c.fold) // => ["llama2-70b"]
 * r.fit.gpus["a100-80gb"]!.rows // => 4
 * ```
 *
 * @category calibrate
 * @since 0.7.0
 */
export const shapeReport = (samples: ReadonlyArray<CalibrationSample>, bootstrap?: number): ShapeReport => ({
  fit: orThrow(
    fitShape(samples, bootstrap === undefined ? undefined : { bootstrap: { samples: bootstrap, seed: 1 } })
  ),
  leaveOneModelOut: orThrow(heldOutCells(samples, { by: "model", kind: "shape" })),
  leaveOneGpuOut: orThrow(heldOutCells(samples, { by: "gpu", kind: "shape" }))
})

const fmt = (x: number): string => {
  const a = Math.abs(x)
  if (a === 0) return "0"
  return a >= 1e-3 && a < 1e4 ? x.toPrecision(3) : x.toExponential(2)
}

const statusText = (s: string) => (s === "not identified" ? "NOT IDENTIFIED" : s)

const cellTable = (title: string, cells: ReadonlyArray<HeldOutCell>): string => {
  const t = new Table({
    head: ["held out", "model", "phase", "gpu", "rows", "MAPE %", "bias %", "target <= 10%"],
    style: { head: [], border: [], compact: true }
  })
  for (const c of cells)
    t.push([
      c.fold,
      c.model,
      `${c.source} ${c.phase}`,
      c.gpu,
      c.rows,
      c.mape.toFixed(1),
      c.bias.toFixed(1),
      c.mape <= 10 ? "ok" : `MISS by ${(c.mape - 10).toFixed(1)}`
    ])
  return `${title}:\n${t.toString()}`
}

/**
 * The terminal text of a {@link ShapeReport}: per GPU, every parameter (per stack for the
 * overheads) with its value, 95% interval and status (`NOT IDENTIFIED` spelled out, with the
 * unseparable sets), then the two held-out tables, each cell marked against the 10% target.
 *
 * @example
 * ```ts
 * import { defaultShapeParameters, gpus, models, shapeSampleSeconds, withTp } from "@loadledger/step-time"
 * import { shapeReport, shapeText } from "./calibrateShape.js"
 * const gpu = gpus["a100-80gb"]!
 * const rows = [2, 4].flatMap((tp) => [16, 1024].map((tokens) => {
 *   const row = { kind: "layer" as const, model: withTp(models["llama2-70b"]!, tp), gpu, tokens, source: "vidur", measuredSeconds: 1 }
 *   return { ...row, measuredSeconds: shapeSampleSeconds(defaultShapeParameters, row) }
 * }))
 * const text = shapeText(shapeReport(rows))
 * text.split("\n")[0] // => "a100-80gb: 4 rows, shape-aware fit (95% intervals: covariance)"
 * text.includes("leave-one-model-out (by model, phase, GPU):") // => true
 * ```
 *
 * @category calibrate
 * @since 0.7.0
 */
export const shapeText = (r: ShapeReport): string => {
  const out: Array<string> = []
  for (const g of Object.values(r.fit.gpus)) {
    out.push(`${g.gpu}: ${g.rows} rows, shape-aware fit (95% intervals: ${r.fit.intervals})`)
    const t = new Table({
      head: ["parameter", "value", "95% interval", "status"],
      style: { head: [], border: [], compact: true }
    })
    for (const e of g.estimates)
      if (e.status !== "unused")
        t.push([e.label, fmt(e.value), `${fmt(e.low)} .. ${fmt(e.high)}`, statusText(e.status)])
    out.push(t.toString())
    const unused = g.estimates.filter((e) => e.status === "unused").map((e) => e.label)
    if (unused.length > 0) out.push(`  unused (no row depends on them): ${unused.join(", ")}`)
    for (const set of g.unseparable) out.push(`  NOT IDENTIFIED apart: ${set.join(" + ")}`)
  }
  out.push(cellTable("leave-one-model-out (by model, phase, GPU)", r.leaveOneModelOut))
  out.push(cellTable("leave-one-GPU-out (by model, phase, GPU)", r.leaveOneGpuOut))
  return out.join("\n")
}
