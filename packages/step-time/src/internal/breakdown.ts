/** The error cells and breakdowns behind `ErrorBreakdown.ts`, shared with leave-one-model-out (`Evaluation.ts`). */
import type { CalibrationParameters, CalibrationSample } from "../Calibration.js"
import { predict, sampleModel } from "../Calibration.js"
import type { ErrorBreakdown, ErrorCell } from "../ErrorBreakdownTypes.js"
import { unspecifiedStack } from "./layout.js"
import { mean, median } from "./summary.js"

export const cell = (errs: ReadonlyArray<number>): ErrorCell => {
  const abs = errs.map(Math.abs)
  return { rows: errs.length, mape: mean(abs), medianApe: median(abs), bias: mean(errs) }
}

/** The power-of-two bucket of a batch size (`batchBucket`). */
export const bucketOf = (b: number): string => {
  const lo = 2 ** Math.floor(Math.log2(Math.max(1, b)))
  return lo === 1 ? "1" : `${lo}-${2 * lo - 1}`
}

const keyOf = (s: CalibrationSample) => sampleModel(s) ?? s.kind ?? "step"

// signed percentage errors, one per row, each under its own parameters
export const breakdownOf = (
  rows: ReadonlyArray<{ readonly s: CalibrationSample; readonly e: number }>
): ErrorBreakdown => {
  const groups = (key: (s: CalibrationSample) => string) => {
    const m = new Map<string, Array<number>>()
    for (const { s, e } of rows) {
      const k = key(s)
      m.set(k, [...(m.get(k) ?? []), e])
    }
    return Object.fromEntries([...m].map(([k, v]) => [k, cell(v)]))
  }
  return {
    overall: cell(rows.map((r) => r.e)),
    byModel: groups(keyOf),
    byPhase: groups((s) => `${keyOf(s)}/${s.phase ?? "step"}`),
    byBatch: groups((s) => `${keyOf(s)}/${s.phase ?? "step"}/${bucketOf(s.batchSize ?? 1)}`),
    byGpu: {
      ...groups((s) => `${keyOf(s)}/${s.gpu.name}`),
      ...groups((s) => `${keyOf(s)}/${s.gpu.name}/${s.phase ?? "step"}`)
    },
    bySource: {
      ...groups((s) => `${keyOf(s)}/${s.source ?? unspecifiedStack}`),
      ...groups((s) => `${keyOf(s)}/${s.source ?? unspecifiedStack}/${s.phase ?? "step"}`)
    }
  }
}

export const signed = (s: CalibrationSample, p: CalibrationParameters) =>
  (100 * (predict(s, p) - s.measuredSeconds)) / s.measuredSeconds
