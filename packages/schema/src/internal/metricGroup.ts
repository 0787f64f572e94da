/**
 * Group the samples of an exposition by rank (the engine of `decodeVllmMetrics`,
 * `decodeSglangMetrics` and the ledger's metrics projection).
 */
import * as Result from "effect/Result"
import { type DecodeError, decodeError } from "../DecodeError.js"
import type { DecodedMetrics } from "../MetricsRecords.js"
import { familyOf, isRuntimeSeries } from "./metricNames.js"
import { numberProblem } from "./numbers.js"
import type { Exposition, Sample } from "./prometheus.js"

const rankOf = (s: Sample, label: string): Result.Result<number, DecodeError> => {
  const v = s.labels[label]
  if (v === undefined) return Result.succeed(0)
  if (!/^\d{1,9}$/.test(v))
    return Result.fail(
      decodeError("InvalidField", `${s.name}: label ${label}="${v}" is not a rank`, { line: s.line })
    )
  return Result.succeed(Number(v))
}

/**
 * Group the samples of modelled series by rank. Every rank named by the rank label of any runtime
 * series (gauge, counter or histogram) gets a record, so no engine is lost; series not modelled
 * are listed in `unmodelled`. `strict` (the public decoders) makes a negative or above-2^53 load an
 * `InvalidField` error; the ledger passes `false` and marks the rank `unknown` instead.
 */
export const groupExposition = (
  expo: Exposition,
  names: ReadonlyMap<string, string>,
  label: string,
  keyName: string,
  strict: boolean
): Result.Result<DecodedMetrics<Record<string, number>>, DecodeError> => {
  const byRank = new Map<number, Record<string, number>>()
  const record = (rank: number) => {
    let rec = byRank.get(rank)
    if (rec === undefined) {
      rec = Object.create(null) as Record<string, number>
      rec[keyName] = rank
      byRank.set(rank, rec)
    }
    return rec
  }
  const firstLine = new Map<string, number>()
  const unmodelled = new Map<
    string,
    { name: string; type?: string | undefined; samples: number; line: number }
  >()
  const unmodelledSample = (name: string, line: number, samples: number, ranks: Iterable<string>) => {
    const fam = familyOf(name, expo.declared)
    const u = unmodelled.get(fam) ?? { name: fam, type: expo.declared.get(fam)?.type, samples: 0, line }
    u.samples += samples
    if (line < u.line) u.line = line
    unmodelled.set(fam, u)
    if (isRuntimeSeries(name)) for (const v of ranks) if (/^\d{1,9}$/.test(v)) record(Number(v))
  }
  for (const s of expo.samples) {
    const field = names.get(s.name)
    if (field === undefined) {
      const v = s.labels[label]
      unmodelledSample(s.name, s.line, 1, v === undefined ? [] : [v])
      continue
    }
    const problem = numberProblem(s.value)
    if (problem === "invalid" || (problem === "negative" && strict))
      return Result.fail(
        decodeError(
          "InvalidField",
          `${s.name}: value ${s.value} is ${problem === "negative" ? "negative" : "not a finite number within ±2^53"}`,
          { line: s.line }
        )
      )
    const r = rankOf(s, label)
    if (Result.isFailure(r)) return Result.fail(r.failure)
    const rank = r.success
    const k = `${field}@${rank}`
    const prev = firstLine.get(k)
    if (prev !== undefined)
      return Result.fail(
        decodeError(
          "AmbiguousSeries",
          `ambiguous series: ${s.name} for ${label} ${rank} already reported on line ${prev} (a per-rank gauge without a distinguishing ${label} label?)`,
          { line: s.line }
        )
      )
    firstLine.set(k, s.line)
    record(rank)[field] = s.value
  }
  // samples the parse did not keep (not modelled): counted by name, their rank labels collected
  for (const o of expo.others.values()) unmodelledSample(o.name, o.line, o.samples, o.ranks.get(label) ?? [])
  const sampled = new Set(expo.samples.map((s) => familyOf(s.name, expo.declared)))
  for (const name of expo.others.keys()) sampled.add(familyOf(name, expo.declared))
  const declaredWithoutSamples = [...expo.declared.keys()]
    .filter((n) => names.has(n) && !sampled.has(n))
    .sort()
  const records = [...byRank.entries()].sort((a, b) => a[0] - b[0]).map(([, v]) => ({ ...v }))
  return Result.succeed({
    records,
    declaredWithoutSamples,
    unmodelledSeries: [...unmodelled.values()].sort((a, b) => a.line - b.line)
  })
}
