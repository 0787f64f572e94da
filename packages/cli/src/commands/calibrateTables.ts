/**
 * The `calibrate` command's terminal tables (cli-table3): the `--evaluate` error breakdown and the
 * leave-one-model-out summary and detail.
 *
 * @since 0.1.0
 */
import type { ErrorBreakdown, HeldOutModel } from "@loadledger/step-time"
import Table from "cli-table3"

const pct = (v: number | undefined) => (v === undefined ? "" : v.toFixed(1))

/**
 * The `--evaluate` table: one row per model, `model/phase` and `model/phase/batch` key of an
 * {@link ErrorBreakdown}, sorted, with rows, MAPE, median and signed error in percent.
 *
 * @example
 * ```ts
 * import { breakdownTable } from "./calibrateTables.js"
 * const c = { rows: 2, mape: 5, medianApe: 4, bias: -1 }
 * const t = breakdownTable({ overall: c, byModel: { m: c }, byPhase: {}, byBatch: {}, byGpu: {}, bySource: {} })
 * t.split("\n")[3] // => "│ m                 │ 2    │ 5.0    │ 4.0      │ -1.0   │"
 * ```
 *
 * @since 0.1.0
 */
export const breakdownTable = (e: ErrorBreakdown): string => {
  const t = new Table({
    head: ["model/phase/batch", "rows", "MAPE %", "median %", "bias %"],
    style: { head: [], border: [], compact: true }
  })
  const keys = [...Object.keys(e.byModel), ...Object.keys(e.byPhase), ...Object.keys(e.byBatch)].sort()
  for (const k of keys) {
    const c = e.byModel[k] ?? e.byPhase[k] ?? e.byBatch[k]!
    t.push([k, c.rows, pct(c.mape), pct(c.medianApe), pct(c.bias)])
  }
  return t.toString()
}

const target = (decode: number | undefined, overall: number) =>
  (decode ?? 0) <= 10 && overall <= 15 ? "yes" : "no"

/**
 * The `--leave-one-model-out` table: per held-out model its rows (and those below the physical
 * floor), decode / prefill / overall MAPE, bias, whether issue 17's target is met (decode <= 10%,
 * overall <= 15%) and per GPU the decode / prefill MAPE with its notes (prior only, stacks whose
 * overheads came from the priors).
 *
 * @example
 * ```ts
 * import { lomoTable } from "./calibrateTables.js"
 * const c = { rows: 4, mape: 8, medianApe: 7, bias: 2 }
 * const none = { byModel: {}, byBatch: {}, byGpu: {}, bySource: {} }
 * const m = { model: "llama2-70b", excludedRows: 1, byGpu: {},
 *   errors: { ...none, overall: c, byPhase: { "llama2-70b/decode": c } } }
 * lomoTable([m]).split("\n")[3]!.split("│").map((s) => s.trim()).slice(1, 8)
 * // => ["llama2-70b", "4 (+1 below floor)", "8.0", "", "8.0", "2.0", "yes"]
 * ```
 *
 * @since 0.1.0
 */
export const lomoTable = (r: ReadonlyArray<HeldOutModel>): string => {
  const t = new Table({
    head: [
      "held-out model",
      "rows",
      "decode MAPE %",
      "prefill MAPE %",
      "overall MAPE %",
      "bias %",
      "target met",
      "per GPU: decode / prefill MAPE %"
    ],
    style: { head: [], border: [], compact: true }
  })
  for (const m of r) {
    const ph = (p: string) => m.errors.byPhase[`${m.model}/${p}`]?.mape
    t.push([
      m.model,
      `${m.errors.overall.rows}${m.excludedRows > 0 ? ` (+${m.excludedRows} below floor)` : ""}`,
      pct(ph("decode")),
      pct(ph("prefill")),
      pct(m.errors.overall.mape),
      pct(m.errors.overall.bias),
      target(ph("decode"), m.errors.overall.mape),
      Object.entries(m.byGpu)
        .map(([g, c]) => {
          const gp = (p: string) => pct(m.errors.byGpu[`${m.model}/${g}/${p}`]?.mape) || "-"
          const notes = [
            ...(c.priorOnly ? ["prior only"] : []),
            ...c.unfittedStacks.map((k) => `${k} overheads from priors`)
          ]
          return `${g} ${gp("decode")} / ${gp("prefill")}${notes.length > 0 ? ` (${notes.join(", ")})` : ""}`
        })
        .join("; ")
    ])
  }
  return t.toString()
}

/**
 * The `--leave-one-model-out --evaluate` detail: every held-out model's errors per GPU, per
 * source and per phase (the `byGpu` and `bySource` keys of its breakdown), sorted.
 *
 * @example
 * ```ts
 * import { lomoDetail } from "./calibrateTables.js"
 * const c = { rows: 4, mape: 8, medianApe: 7, bias: 2 }
 * const errors = { overall: c, byModel: {}, byPhase: {}, byBatch: {}, byGpu: { "m/h100": c }, bySource: {} }
 * lomoDetail([{ model: "m", excludedRows: 0, byGpu: {}, errors }]).split("\n")[3]!.split("│")[1]!.trim()
 * // => "m/h100"
 * ```
 *
 * @since 0.1.0
 */
export const lomoDetail = (r: ReadonlyArray<HeldOutModel>): string => {
  const t = new Table({
    head: ["held-out model/gpu|source/phase", "rows", "MAPE %", "median %", "bias %"],
    style: { head: [], border: [], compact: true }
  })
  for (const m of r)
    for (const [k, c] of [...Object.entries(m.errors.byGpu), ...Object.entries(m.errors.bySource)].sort(
      ([a], [b]) => a.localeCompare(b)
    ))
      t.push([k, c.rows, pct(c.mape), pct(c.medianApe), pct(c.bias)])
  return t.toString()
}
