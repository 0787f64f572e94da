import {
  type CalibrationSample,
  crossValidate,
  type Efficiencies,
  fit,
  type MapeReport,
  mape,
  splitwiseSamples
} from "@loadledger/step-time"
import Table from "cli-table3"
import type { Command } from "commander"
import { Result } from "effect"
import { readText } from "../internal/readInput.js"
import { resolveGpu, resolveModel } from "./stepTime.js"

interface Opts {
  readonly profile: string
  readonly model: string
  readonly gpu?: string
  readonly tp?: string
  readonly evaluate?: string
  readonly evaluateModel?: string
  readonly folds: string
  readonly json?: boolean
}

const positiveInt = (flag: string, v: string): number => {
  const n = Number(v)
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag}: expected a positive integer, got ${v}`)
  return n
}

const load = (file: string, modelName: string, gpu: string | undefined, tp: number | undefined) => {
  const text = readText(file)
  const r = splitwiseSamples(text, { model: resolveModel(modelName), gpu, tp })
  if (Result.isFailure(r))
    throw new Error(
      `${file}${r.failure.row === undefined ? "" : `:${r.failure.row}`}: ${r.failure.field}: ${r.failure.message}`
    )
  if (r.success.length === 0)
    throw new Error(`${file}: no rows match${gpu ? ` --gpu ${gpu}` : ""}${tp ? ` --tp ${tp}` : ""}`)
  return r.success
}

const byHardware = (samples: ReadonlyArray<CalibrationSample>) => {
  const m = new Map<string, Array<CalibrationSample>>()
  for (const s of samples) {
    const k = s.group ?? s.gpu.name
    m.set(k, [...(m.get(k) ?? []), s])
  }
  return m
}

/**
 * Registers `loadledger calibrate --profile CSV --model NAME [--gpu NAME --tp N] [--evaluate CSV
 * --evaluate-model NAME] [--folds K] [--json]`: fits the step-time efficiencies and overheads per
 * hardware by least squares on a splitwise-format profile, and prints the fitted parameters, the
 * in-sample MAPE, the K-fold held-out MAPE (decode and prefill; each measured configuration and
 * its repeats held out together), and, with `--evaluate`, the MAPE
 * of those parameters on another profile predicted with `--evaluate-model` (cross-model through
 * the physical features).
 *
 * @since 0.1.0
 */
export const register = (program: Command): void => {
  program
    .command("calibrate")
    .description("fit step-time efficiencies/overheads to a measured profile and report MAPE")
    .requiredOption("--profile <csv>", "splitwise-format profile (model,hardware,prompt_size,batch_size,...)")
    .requiredOption("--model <name|file>", "model preset or JSON spec the profile was measured on")
    .option("--gpu <name>", "only rows of this hardware")
    .option("--tp <n>", "only rows with this tensor_parallel")
    .option("--evaluate <csv>", "a second profile to predict with the fitted parameters")
    .option("--evaluate-model <name|file>", "model of the --evaluate profile (default: --model)")
    .option("--folds <k>", "cross-validation folds", "5")
    .option("--json", "print JSON")
    .action((opts: Opts) => {
      const tp = opts.tp === undefined ? undefined : positiveInt("--tp", opts.tp)
      const folds = positiveInt("--folds", opts.folds)
      if (folds < 2) throw new Error("--folds: expected at least 2")
      if (opts.gpu !== undefined) resolveGpu(opts.gpu)
      if (opts.evaluateModel !== undefined && opts.evaluate === undefined)
        throw new Error("--evaluate-model needs --evaluate CSV")
      const profile = load(opts.profile, opts.model, opts.gpu, tp)
      const evaluate =
        opts.evaluate === undefined
          ? undefined
          : byHardware(load(opts.evaluate, opts.evaluateModel ?? opts.model, opts.gpu, tp))
      const out: Array<{
        gpu: string
        rows: number
        params: Efficiencies
        fit: MapeReport
        crossValidated: MapeReport
        evaluate?: MapeReport | undefined
      }> = []
      for (const [hw, samples] of byHardware(profile)) {
        const f = fit(samples)
        if (Result.isFailure(f)) throw new Error(`${hw}: ${f.failure.field}: ${f.failure.message}`)
        const cv = crossValidate(samples, folds, { holdOut: "configuration" })
        if (Result.isFailure(cv)) throw new Error(`${hw}: ${cv.failure.field}: ${cv.failure.message}`)
        const ev = evaluate?.get(hw)
        out.push({
          gpu: hw,
          rows: samples.length,
          params: f.success.params,
          fit: mape(samples, f.success.params),
          crossValidated: cv.success,
          evaluate: ev === undefined ? undefined : mape(ev, f.success.params)
        })
      }
      const unmatched =
        evaluate === undefined ? [] : [...evaluate.keys()].filter((k) => !out.some((o) => o.gpu === k))
      if (opts.json) {
        process.stdout.write(
          `${JSON.stringify(
            {
              model: resolveModel(opts.model).name,
              evaluateModel:
                opts.evaluate === undefined ? undefined : resolveModel(opts.evaluateModel ?? opts.model).name,
              folds,
              hardware: out,
              evaluateUncalibratedHardware: unmatched
            },
            null,
            2
          )}\n`
        )
        return
      }
      for (const o of out) {
        const p = o.params
        process.stdout.write(
          `${o.gpu}: ${o.rows} samples\n` +
            `  memoryEfficiency ${p.memoryEfficiency.toFixed(3)}  computeEfficiency ${p.computeEfficiency.toFixed(3)}  ` +
            `linkEfficiency ${p.linkEfficiency.toFixed(3)}\n` +
            `  collectiveLatency ${(p.collectiveLatencySeconds * 1e6).toFixed(2)} us/peer  perLayer ` +
            `${(p.perLayerOverheadSeconds * 1e6).toFixed(2)} us  perRequest ${(p.perRequestSecondsPerLayer * 1e6).toFixed(3)} us/layer  ` +
            `fixed ${(p.fixedOverheadSeconds * 1e3).toFixed(3)} ms  eager ${(p.eagerOverheadSecondsPerLayer * 1e6).toFixed(2)} us/layer\n`
        )
        const table = new Table({
          head: [
            "phase",
            "rows",
            "fit MAPE %",
            `held-out MAPE % (${folds}-fold)`,
            "held-out median %",
            ...(o.evaluate ? ["evaluate MAPE %"] : [])
          ],
          style: { head: [], border: [], compact: true }
        })
        for (const phase of ["decode", "prefill"]) {
          const key = `${o.gpu}/${phase}`
          const f = o.fit.byGroup[key]
          if (f === undefined) continue
          const cv = o.crossValidated.byGroup[key]
          const ev = o.evaluate?.byGroup[key]
          table.push([
            phase,
            f.rows,
            f.mape.toFixed(2),
            cv === undefined ? "" : cv.mape.toFixed(2),
            cv === undefined ? "" : cv.medianApe.toFixed(2),
            ...(o.evaluate ? [ev === undefined ? "" : `${ev.mape.toFixed(2)} (${ev.rows} rows)`] : [])
          ])
        }
        process.stdout.write(`${table.toString()}\n`)
      }
      if (unmatched.length > 0)
        process.stdout.write(`not evaluated (no calibration for this hardware): ${unmatched.join(", ")}\n`)
    })
}
