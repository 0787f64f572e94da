/**
 * What `simulate`, `capacity` and `sweep` share: the `--format` option, reading a trace file into
 * requests (with a one-line error) and the simulator config for a model, GPU, DP size, engine and
 * front-end count.
 *
 * @since 0.2.0
 */
import { readFileSync } from "node:fs"
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
import { gpus, models } from "@loadledger/step-time/core"
import { Option } from "commander"

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
 * The GPU presets on which a model preset, at its own tensor-parallel size, leaves room for a KV
 * pool (`checkKvPool` of @loadledger/sim), in the presets' order; `[]` for an unknown model.
 *
 * @example
 * ```ts
 * import { gpusFitting } from "./simSetup.js"
 * gpusFitting("llama2-70b") // => ["b200"]
 * gpusFitting("glm-5.3") // => ["h200", "b200"]
 * ```
 *
 * @category simulate
 * @since 0.4.0
 */
export const gpusFitting = (model: string): ReadonlyArray<string> => {
  const m = models[model]
  return m === undefined ? [] : Object.keys(gpus).filter((g) => checkKvPool(m, gpus[g]!) === undefined)
}

/**
 * Why a model preset leaves no KV pool on a GPU preset (`checkKvPool` of @loadledger/sim: what the
 * weights take, the smallest tensor-parallel size with room) and the GPU presets it fits on at its
 * preset TP; `undefined` when it fits or a name is unknown. Used by `capacity` and `sweep`.
 */
export const noKvPoolMessage = (model: string, gpu: string): string | undefined => {
  const m = models[model]
  const g = gpus[gpu]
  const no = m === undefined || g === undefined ? undefined : checkKvPool(m, g)
  if (m === undefined || no === undefined) return undefined
  const fits = gpusFitting(model)
  return `${no.message}; ${model} fits at its preset tensor parallel ${m.tp} on ${fits.length === 0 ? "no GPU preset" : fits.join(", ")}`
}

/** The simulator config for a model/GPU preset pair; throws on unknown names or no room for a KV pool. */
export const simConfigFor = (o: {
  readonly model: string
  readonly gpu: string
  readonly dp: number
  readonly engine: "sglang" | "vllm"
  readonly frontEnds: number
  readonly seed: number
  readonly kvPoolTokens?: number | undefined
  readonly chunkedPrefill?: number | undefined
  readonly maxRunning?: number | undefined
  readonly prefillInterval?: number | undefined
  readonly dummyBatches?: boolean | undefined
  readonly maxRequestTokens?: number | undefined
  readonly stallSteps?: number | undefined
  readonly coordinatorRows?: CoordinatorRows | undefined
}): SimConfig => {
  const model = models[o.model]
  if (model === undefined)
    throw new Error(`unknown model "${o.model}"; known: ${Object.keys(models).join(", ")}`)
  const gpu = gpus[o.gpu]
  if (gpu === undefined) throw new Error(`unknown GPU "${o.gpu}"; known: ${Object.keys(gpus).join(", ")}`)
  const derived = modelSimConfig(model, gpu)
  const kvPoolTokens = o.kvPoolTokens ?? derived.kvPoolTokens
  if (!(kvPoolTokens > 0))
    throw new Error(
      noKvPoolMessage(o.model, o.gpu) ?? `${o.model} does not fit on one ${o.gpu}: no room for a KV pool`
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
    dummyBatches: o.dummyBatches,
    maxRequestTokens: o.maxRequestTokens,
    stallSteps: o.stallSteps,
    coordinatorRows: o.coordinatorRows
  }
}
