/**
 * What `simulate`, `capacity` and `sweep` share: the `--format` option, reading a trace file into
 * requests (with a one-line error) and the simulator config for a model, GPU, DP size, engine and
 * front-end count.
 *
 * @since 0.2.0
 */

import { readFileSync } from "node:fs"
import type { EngineName } from "@loadledger/sim"
import {
  type CoordinatorRows,
  checkKvPool,
  isTraceError,
  modelSimConfig,
  parseTrace,
  type SimConfig,
  type TraceFormat,
  type TraceRequest
} from "@loadledger/sim"
import { gpus, type ModelSpec, models, withTp } from "@loadledger/step-time/core"
import { Option } from "commander"
import { unknownName } from "./names.js"
import { escapeLines } from "./terminalText.js"

// every TraceFormat once, in the help's order (the compiler checks the list both ways)
const traceFormats = Object.keys({
  mooncake: true,
  azure: true,
  burstgpt: true,
  "generic-jsonl": true,
  "generic-csv": true
} satisfies Record<TraceFormat, true>)

/** The `--format` option of a command that reads a trace: one of the trace formats, detected when absent. */
export const traceFormatOption = (): Option =>
  new Option("--format <format>", "trace format (default: detected)").choices(traceFormats)

/**
 * Read and parse a trace file; throws an `Error` with a one-line message naming the file and line
 * (`what` names the path where the error says it is a directory, e.g. `--trace x`). With `limit`,
 * only the first `limit` requests by arrival are kept while reading (`parseTrace`).
 */
export const readTraceFile = (
  path: string,
  format?: TraceFormat,
  what = path,
  limit?: number
): ReadonlyArray<TraceRequest> => {
  let text: string
  try {
    text = readFileSync(path, "utf8")
  } catch (e) {
    const code = (e as { code?: string }).code
    throw new Error(
      code === "ENOENT"
        ? `trace file not found: ${path}`
        : code === "EISDIR"
          ? `${what} is a directory, not a file`
          : `cannot read trace ${path}: ${code ?? e}`
    )
  }
  const parsed = parseTrace(text, format, { limit })
  if (isTraceError(parsed))
    throw new Error(
      `${path}${parsed.line === undefined ? "" : ` line ${parsed.line}`}: ${parsed.message}${parsed.field && !parsed.message.includes(parsed.field) ? ` (${parsed.field})` : ""}`
    )
  if (parsed.length === 0) throw new Error(`${path}: the trace has no requests`)
  return parsed
}

/**
 * The rule for a trace whose rows are not in arrival order, the same on every path (a file read
 * whole, or one `simulate` would stream: the stream refuses the row, and the command then reads
 * the file whole): the requests are replayed sorted by arrival (stable: ties keep file order), and
 * this notice says so, naming the first data row that goes back in time (1 = the first row after
 * any header). `rows` are `parseTrace`'s (sorted, `requestId` the row index); `undefined` when the
 * file was in order.
 *
 * @example
 * ```ts
 * import { unsortedNotice } from "./simSetup.js"
 * const r = (id: number, t: number) => ({ requestId: `${id}`, arrivalSeconds: t, inputLength: 1, outputLength: 1 })
 * unsortedNotice("t.csv", [r(0, 1), r(2, 1.5), r(1, 2)]) // => undefined
 * unsortedNotice("t.csv", [r(1, 0.5), r(0, 1), r(2, 2)])
 * // => "loadledger: t.csv is not in arrival order (data row 2 is earlier than the row before it): replaying it sorted by arrival"
 * ```
 *
 * @category simulate
 * @since 0.6.0
 */
export const unsortedNotice = (path: string, rows: ReadonlyArray<TraceRequest>): string | undefined => {
  const byRow = rows
    .map((r) => ({ row: Number(r.requestId), t: r.arrivalSeconds }))
    .sort((a, b) => a.row - b.row)
  for (let k = 1; k < byRow.length; k++)
    if (byRow[k]!.t < byRow[k - 1]!.t)
      return `loadledger: ${path} is not in arrival order (data row ${byRow[k]!.row + 1} is earlier than the row before it): replaying it sorted by arrival`
  return undefined
}

/** {@link readTraceFile}, then the {@link unsortedNotice} on stderr when the file was out of order. */
export const readTraceFileNoting = (
  path: string,
  format?: TraceFormat,
  what = path,
  limit?: number
): ReadonlyArray<TraceRequest> => {
  const rows = readTraceFile(path, format, what, limit)
  const notice = unsortedNotice(path, rows)
  if (notice !== undefined) process.stderr.write(`${escapeLines(notice)}\n`)
  return rows
}

/**
 * The tensor-parallel sizes `--tp` takes: one node's NVLink domain, where the step-time model
 * prices TP (the sizes `checkKvPool` of @loadledger/sim tries).
 */
export const TP_SIZES: ReadonlyArray<number> = [1, 2, 4, 8]

/**
 * A model preset by name, at tensor parallel `tp` when given (else the preset's own); throws a
 * one-line `Error` for an unknown name (with a did-you-mean) or a TP size the model cannot be split
 * into: one of {@link TP_SIZES} that divides its attention heads and divides, or is a multiple of,
 * its KV heads (the rule SGLang and vLLM apply to `--tp`).
 *
 * @example
 * ```ts
 * import { modelPreset } from "./simSetup.js"
 * modelPreset("llama2-70b", 2).tp // => 2
 * (() => { try { modelPreset("llama2-70", undefined) } catch (e) { return (e as Error).message } })()
 * // => 'unknown model "llama2-70" (did you mean "llama2-70b"?); known: glm-5.3-dense, deepseek-v3, llama2-70b, bloom-176b, glm-5.3, glm-5.3-dsa'
 * (() => { try { modelPreset("llama2-70b", 3) } catch (e) { return (e as Error).message } })()
 * // => "--tp 3: the step-time model prices tensor parallel 1, 2, 4 or 8 (one node's NVLink domain)"
 * ```
 *
 * @category simulate
 * @since 0.6.0
 */
export const modelPreset = (name: string, tp: number | undefined): ModelSpec => {
  const m = models[name]
  if (m === undefined) throw new Error(unknownName("model", name, Object.keys(models), "models"))
  if (tp === undefined) return m
  if (!TP_SIZES.includes(tp))
    throw new Error(
      `--tp ${tp}: the step-time model prices tensor parallel 1, 2, 4 or 8 (one node's NVLink domain)`
    )
  const a = m.attention
  const kvHeads = a.kind === "mla" ? undefined : (a.kvHeads ?? a.numHeads)
  if (a.numHeads % tp !== 0 || (kvHeads !== undefined && kvHeads % tp !== 0 && tp % kvHeads !== 0))
    throw new Error(
      `--tp ${tp}: ${name} has ${a.numHeads} attention heads${kvHeads === undefined ? "" : ` and ${kvHeads} KV heads`}, which tensor parallel ${tp} cannot split`
    )
  return withTp(m, tp)
}

/** A GPU preset by name; throws a one-line `Error` with a did-you-mean for an unknown one. */
export const gpuPreset = (name: string) => {
  const g = gpus[name]
  if (g === undefined) throw new Error(unknownName("GPU", name, Object.keys(gpus), "gpus"))
  return g
}

/**
 * The GPU presets on which a model preset, at its own tensor-parallel size, leaves room for a KV
 * pool (`checkKvPool` of @loadledger/sim), in the presets' order; `[]` for an unknown model.
 *
 * @example
 * ```ts
 * import { gpusFitting } from "./simSetup.js"
 * gpusFitting("llama2-70b") // => ["b200", "gb200"]
 * gpusFitting("glm-5.3") // => ["h200", "b200", "gb200"]
 * ```
 *
 * @category simulate
 * @since 0.4.0
 */
export const gpusFitting = (model: string, tp?: number): ReadonlyArray<string> => {
  const m = models[model]
  if (m === undefined) return []
  const at = tp === undefined ? m : withTp(m, tp)
  return Object.keys(gpus).filter((g) => checkKvPool(at, gpus[g]!) === undefined)
}

/**
 * Why a model preset leaves no KV pool on a GPU preset (`checkKvPool` of @loadledger/sim: what the
 * weights take, the smallest tensor-parallel size with room) and the GPU presets it fits on at its
 * preset TP; `undefined` when it fits or a name is unknown. Used by `capacity` and `sweep`.
 */
export const noKvPoolMessage = (model: string, gpu: string, tp?: number): string | undefined => {
  const preset = models[model]
  const m = preset === undefined || tp === undefined ? preset : withTp(preset, tp)
  const g = gpus[gpu]
  const no = m === undefined || g === undefined ? undefined : checkKvPool(m, g)
  if (m === undefined || no === undefined) return undefined
  const fits = gpusFitting(model, tp)
  return `${no.message}; ${model} fits at tensor parallel ${m.tp} on ${fits.length === 0 ? "no GPU preset" : fits.join(", ")}`
}

/** The simulator config for a model/GPU preset pair; throws on unknown names or no room for a KV pool. */
export const simConfigFor = (o: {
  readonly model: string
  readonly gpu: string
  readonly dp: number
  readonly engine: EngineName
  readonly frontEnds: number
  readonly seed: number
  /** Tensor-parallel size per DP rank (default: the model preset's); see {@link modelPreset}. */
  readonly tp?: number | undefined
  readonly kvPoolTokens?: number | undefined
  readonly chunkedPrefill?: number | undefined
  readonly maxRunning?: number | undefined
  readonly prefillInterval?: number | undefined
  readonly asyncScheduling?: boolean | undefined
  readonly dummyBatches?: boolean | undefined
  readonly maxRequestTokens?: number | undefined
  readonly stallSteps?: number | undefined
  readonly coordinatorRows?: CoordinatorRows | undefined
}): SimConfig => {
  const model = modelPreset(o.model, o.tp)
  const gpu = gpuPreset(o.gpu)
  const derived = modelSimConfig(model, gpu)
  const kvPoolTokens = o.kvPoolTokens ?? derived.kvPoolTokens
  if (!(kvPoolTokens > 0))
    throw new Error(
      noKvPoolMessage(o.model, o.gpu, o.tp) ??
        `${o.model} does not fit on one ${o.gpu}: no room for a KV pool`
    )
  return {
    ...derived,
    dpSize: o.dp,
    engine: o.engine,
    kvPoolTokens,
    chunkedPrefillTokens: o.chunkedPrefill,
    maxRunningRequests: o.maxRunning,
    frontEnds: o.frontEnds,
    seed: o.seed,
    prefillIntervalSteps: o.prefillInterval,
    asyncScheduling: o.asyncScheduling,
    dummyBatches: o.dummyBatches,
    maxRequestTokens: o.maxRequestTokens,
    stallSteps: o.stallSteps,
    coordinatorRows: o.coordinatorRows
  }
}
