/**
 * `loadledger calibrate`: fits the step-time model's efficiencies and overheads to measured profiles (Splitwise or Vidur CSV), with cross-validation, and reports the held-out error (text or JSON).
 *
 * @since 0.1.0
 */
import {
  type CalibrationSample,
  crossValidate,
  type Efficiencies,
  type ErrorBreakdown,
  errorBreakdown,
  fit,
  type HeldOutModel,
  type IdentifiabilityReport,
  identifiability,
  leaveOneModelOut,
  type MapeReport,
  mape,
  thinSamples
} from "@loadledger/step-time"
import Table from "cli-table3"
import type { Command } from "commander"
import * as Result from "effect/Result"
import { examplesHelp } from "../internal/examples.js"
import { loadProfile } from "./calibrateLoad.js"
import { shapeReport, shapeText } from "./calibrateShape.js"
import { breakdownTable, lomoDetail, lomoTable } from "./calibrateTables.js"
import { resolveGpu } from "./stepTime.js"

interface Opts {
  readonly profile: ReadonlyArray<string>
  readonly model?: string
  readonly gpu?: string
  readonly tp?: string
  readonly evaluate?: ReadonlyArray<string> | true
  readonly evaluateModel?: string
  readonly leaveOneModelOut?: boolean
  readonly thin?: boolean
  readonly priors: boolean
  readonly folds: string
  readonly json?: boolean
  readonly shape?: boolean
  readonly bootstrap?: string
}

const positiveInt = (flag: string, v: string): number => {
  const n = Number(v)
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag}: expected a positive integer, got ${v}`)
  return n
}

const byHardware = (samples: ReadonlyArray<CalibrationSample>) => {
  const m = new Map<string, Array<CalibrationSample>>()
  for (const s of samples) {
    const k = s.gpu.name
    m.set(k, [...(m.get(k) ?? []), s])
  }
  return m
}

const us = (s: number, digits = 2) => (s * 1e6).toFixed(digits)

/**
 * Registers `loadledger calibrate --profile CSV... [--model NAME|FILE] [--gpu NAME --tp N]
 * [--evaluate [CSV...] --evaluate-model NAME] [--leave-one-model-out] [--no-priors] [--thin]
 * [--folds K] [--json]`: reads splitwise step profiles (any models, each row's `model` column
 * naming a preset; `--model` keeps one model's rows) and Vidur per-operator (`mlp.csv`,
 * `attention.csv`) and network (`all_reduce.csv`, `send_recv.csv`) profiles (format recognised
 * by header), fits the step-time parameters per hardware jointly over every model and TP degree
 * given (MAP under physical priors; `--no-priors` for plain least squares; efficiencies per GPU,
 * overheads per measurement stack: splitwise steps, Vidur kernels), and prints the parameters,
 * the identifiability check, in-sample MAPE and K-fold held-out MAPE per phase (configurations
 * held out whole). `--evaluate CSV...` predicts other profiles with those parameters and reports
 * error per model, phase and batch size (`--evaluate` alone: the same breakdown of the fitted
 * profiles); `--leave-one-model-out` refits without each model in turn and prints the held-out
 * model's error per phase and GPU against issue 17's target (decode <= 10%, overall <= 15%),
 * with `--evaluate` also per GPU, source and phase.
 *
 * @example
 * ```ts
 * import { Command } from "commander"
 * import { register } from "./calibrate.js"
 * const program = new Command()
 * register(program)
 * const calibrate = program.commands[0]!
 * calibrate.name() // => "calibrate"
 * calibrate.options.some((o) => o.long === "--leave-one-model-out") // => true
 * ```
 *
 * @since 0.1.0
 */
export const register = (program: Command): void => {
  program
    .command("calibrate")
    .description("fit step-time efficiencies/overheads to measured profiles and report held-out error")
    .requiredOption("--profile <csv...>", "splitwise step profiles and/or Vidur mlp/attention/network CSVs")
    .option(
      "--model <name|file>",
      "splitwise: keep only this model's rows (preset or JSON spec); Vidur: names rows the file name does not (default: every model, by preset)"
    )
    .option("--gpu <name>", "only rows of this hardware (Vidur files: the GPU they were measured on)")
    .option("--tp <n>", "only rows with this tensor-parallel degree")
    .option(
      "--evaluate [csv...]",
      "profiles to predict with the fitted parameters (alone: break the fitted profiles' error down per model, phase, GPU, batch)"
    )
    .option("--evaluate-model <name|file>", "model of splitwise --evaluate profiles (default: --model)")
    .option("--leave-one-model-out", "cross-validate holding out each model in turn")
    .option("--no-priors", "plain least squares (no physical priors)")
    .option("--thin", "thin every profile to a geometric grid (thinSamples) before fitting")
    .option("--folds <k>", "cross-validation folds", "5")
    .option("--json", "print JSON")
    .option(
      "--shape",
      "the shape-aware fit: each parameter's 95% interval and identification, and the held-out report by (model, phase, GPU)"
    )
    .option(
      "--bootstrap <n>",
      "with --shape: intervals from n seeded bootstrap refits (default: the fit's covariance)"
    )
    .addHelpText("after", examplesHelp("calibrate"))
    .action((opts: Opts) => {
      const tp = opts.tp === undefined ? undefined : positiveInt("--tp", opts.tp)
      const folds = positiveInt("--folds", opts.folds)
      if (folds < 2) throw new Error("--folds: expected at least 2")
      if (opts.gpu !== undefined && !["a100", "h100", "a40", "a100_dgx"].includes(opts.gpu))
        resolveGpu(opts.gpu)
      if (opts.evaluateModel !== undefined && (opts.evaluate === undefined || opts.evaluate === true))
        throw new Error("--evaluate-model needs --evaluate CSV")
      const fitOptions = opts.priors ? {} : { priors: "none" as const }
      const loaded = opts.profile.flatMap((f) => loadProfile(f, { model: opts.model, gpu: opts.gpu, tp }))
      const profile = opts.thin ? thinSamples(loaded) : loaded
      if (opts.shape === true) {
        const report = shapeReport(
          profile,
          opts.bootstrap === undefined ? undefined : positiveInt("--bootstrap", opts.bootstrap)
        )
        process.stdout.write(
          opts.json === true ? `${JSON.stringify(report, null, 2)}\n` : `${shapeText(report)}\n`
        )
        return
      }
      const evaluate =
        opts.evaluate === undefined
          ? undefined
          : opts.evaluate === true
            ? byHardware(profile)
            : byHardware(
                opts.evaluate.flatMap((f) =>
                  loadProfile(f, { model: opts.evaluateModel ?? opts.model, gpu: opts.gpu, tp })
                )
              )
      const out: Array<{
        gpu: string
        rows: number
        params: Efficiencies
        stacks: Readonly<Record<string, Efficiencies>>
        identifiability: IdentifiabilityReport
        fit: MapeReport
        crossValidated: MapeReport
        evaluate?: MapeReport | undefined
        evaluateErrors?: ErrorBreakdown | undefined
      }> = []
      for (const [hw, samples] of byHardware(profile)) {
        const f = fit(samples, fitOptions)
        if (Result.isFailure(f)) throw new Error(`${hw}: ${f.failure.field}: ${f.failure.message}`)
        const cv = crossValidate(samples, folds, { ...fitOptions, holdOut: "configuration" })
        if (Result.isFailure(cv)) throw new Error(`${hw}: ${cv.failure.field}: ${cv.failure.message}`)
        const ev = evaluate?.get(hw)
        out.push({
          gpu: hw,
          rows: samples.length,
          params: f.success.params,
          stacks: f.success.stacks,
          identifiability: identifiability(samples, f.success),
          fit: mape(samples, f.success),
          crossValidated: cv.success,
          evaluate: ev === undefined ? undefined : mape(ev, f.success),
          evaluateErrors: ev === undefined ? undefined : errorBreakdown(ev, f.success)
        })
      }
      const unmatched =
        evaluate === undefined ? [] : [...evaluate.keys()].filter((k) => !out.some((o) => o.gpu === k))
      let lomo: ReadonlyArray<HeldOutModel> | undefined
      if (opts.leaveOneModelOut) {
        const r = leaveOneModelOut(profile, fitOptions)
        if (Result.isFailure(r)) throw new Error(`${r.failure.field}: ${r.failure.message}`)
        lomo = r.success
      }
      if (opts.json) {
        process.stdout.write(
          `${JSON.stringify(
            {
              model: opts.model,
              evaluateModel:
                opts.evaluate === undefined || opts.evaluate === true
                  ? undefined
                  : (opts.evaluateModel ?? opts.model),
              folds,
              priors: opts.priors,
              hardware: out,
              evaluateUncalibratedHardware: unmatched,
              leaveOneModelOut: lomo
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
            `linkEfficiency ${p.linkEfficiency.toFixed(3)}  collectiveLatency ${us(p.collectiveLatencySeconds)} us/peer\n` +
            Object.entries(o.stacks)
              .map(
                ([k, q]) =>
                  `  ${k}: perLayer ${us(q.perLayerOverheadSeconds)} us  perRequest ${us(q.perRequestSecondsPerLayer, 3)} us/layer  ` +
                  `${us(q.perRequestOverheadSeconds, 1)} us/step  fixed ${(q.fixedOverheadSeconds * 1e3).toFixed(3)} ms  ` +
                  `eager ${us(q.eagerOverheadSecondsPerLayer)} us/layer\n`
              )
              .join("") +
            `  identifiability: ${o.identifiability.ok ? "ok" : "NOT IDENTIFIED"} (condition number ${o.identifiability.conditionNumber.toPrecision(3)})\n` +
            o.identifiability.messages.map((m) => `    - ${m}\n`).join("")
        )
        const table = new Table({
          head: ["phase", "rows", "fit MAPE %", `held-out MAPE % (${folds}-fold)`, "held-out median %"],
          style: { head: [], border: [], compact: true }
        })
        for (const key of Object.keys(o.fit.byGroup).sort()) {
          const f = o.fit.byGroup[key]!
          const cv = o.crossValidated.byGroup[key]
          table.push([
            key,
            f.rows,
            f.mape.toFixed(2),
            cv === undefined ? "" : cv.mape.toFixed(2),
            cv === undefined ? "" : cv.medianApe.toFixed(2)
          ])
        }
        process.stdout.write(`${table.toString()}\n`)
        if (o.evaluateErrors !== undefined)
          process.stdout.write(
            `  evaluate (${o.evaluateErrors.overall.rows} rows):\n${breakdownTable(o.evaluateErrors)}\n`
          )
      }
      if (unmatched.length > 0)
        process.stdout.write(`not evaluated (no calibration for this hardware): ${unmatched.join(", ")}\n`)
      if (lomo !== undefined) {
        process.stdout.write(
          `leave-one-model-out (target: decode <= 10%, overall <= 15% MAPE):\n${lomoTable(lomo)}\n`
        )
        if (opts.evaluate === true) process.stdout.write(`${lomoDetail(lomo)}\n`)
      }
    })
}
