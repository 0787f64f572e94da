/**
 * Request traces: the readers for Mooncake JSONL, the Azure LLM inference CSV and loadledger's
 * generic CSV/JSONL, plus rate scaling and cutting.
 *
 * @since 0.1.0
 */
import { isTokenCount } from "@loadledger/policies"
import { parse } from "csv-parse/sync"

/**
 * One request of a trace. `arrivalSeconds` counts from the trace start; lengths are tokens;
 * `hashIds` holds one id per 512-token prompt block (equal leading ids = a shareable prefix), absent
 * when the trace has no prefix information. `dpRank` pins the request to a rank; `bootstrapRoom` is
 * SGLang's PD bootstrap room (decimal string); `sessionId` names the conversation or agent session
 * the request belongs to, absent when the trace does not say (Mooncake and Azure traces do not).
 * The simulator hands `hashIds` (as decimal strings) and `sessionId` to the policy as
 * `RouteRequest.prefixHashes` / `sessionId`.
 *
 * @category models
 * @since 0.1.0
 */
export interface TraceRequest {
  readonly requestId: string
  readonly arrivalSeconds: number
  readonly inputLength: number
  readonly outputLength: number
  readonly hashIds?: ReadonlyArray<number> | undefined
  readonly dpRank?: number | undefined
  readonly bootstrapRoom?: string | undefined
  readonly sessionId?: string | undefined
}

/**
 * A trace that could not be read. `line` is the 1-based line of the file at fault (the header is
 * line 1 in a CSV), `field` the column or key.
 *
 * @category errors
 * @since 0.1.0
 */
export interface TraceError {
  readonly _tag: "TraceError"
  readonly message: string
  readonly line?: number | undefined
  readonly field?: string | undefined
}

/**
 * The trace formats the readers understand.
 *
 * - `mooncake`: JSONL, `{"timestamp": ms, "input_length", "output_length", "hash_ids": [..]}`
 *   (kvcache-ai/Mooncake `FAST25-release/traces/`, commit 3cca71d).
 * - `azure`: CSV `TIMESTAMP,ContextTokens,GeneratedTokens`, wall-clock timestamps
 *   (Azure/AzurePublicDataset `data/AzureLLMInferenceTrace_*.csv`, commit 7909210).
 * - `generic-jsonl`: JSONL `{"arrival_seconds", "input_length", "output_length", "hash_ids"?,
 *   "dp_rank"?, "bootstrap_room"?, "session_id"?}` (`session_id` a string or an integer).
 * - `generic-csv`: CSV with header `arrival_seconds,input_length,output_length` and optional
 *   `hash_ids` (ids separated by spaces), `dp_rank`, `bootstrap_room`, `session_id` columns.
 *
 * @category models
 * @since 0.1.0
 */
export type TraceFormat = "mooncake" | "azure" | "generic-jsonl" | "generic-csv"

const traceError = (message: string, line?: number, field?: string): TraceError => ({
  _tag: "TraceError",
  message,
  line,
  field
})

/**
 * True when a reader result is an error.
 *
 * @example
 * ```ts
 * import { isTraceError, parseTrace } from "@loadledger/sim"
 * isTraceError(parseTrace("not a trace")) // => true
 * ```
 *
 * @category guards
 * @since 0.1.0
 */
export const isTraceError = (u: unknown): u is TraceError =>
  typeof u === "object" && u !== null && (u as { _tag?: unknown })._tag === "TraceError"

// token counts and ranks: the policies' one rule (a safe non-negative integer), checked here where a
// request enters the simulator; the loop and the policies trust the type
const nonNegInt = (v: unknown): v is number => typeof v === "number" && isTokenCount(v)
const intFromText = (s: string): number | undefined => (/^\s*\d+\s*$/.test(s) ? Number(s) : undefined)

/**
 * Guess a trace's format from its first non-empty line.
 *
 * @example
 * ```ts
 * import { detectTraceFormat } from "@loadledger/sim"
 * detectTraceFormat('{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [0]}')
 * // => "mooncake"
 * ```
 *
 * @category readers
 * @since 0.1.0
 */
export const detectTraceFormat = (text: string): TraceFormat | TraceError => {
  const first =
    text
      .split("\n", 8)
      .find((l) => l.trim() !== "")
      ?.trim() ?? ""
  if (first.startsWith("{")) {
    if (first.includes('"arrival_seconds"')) return "generic-jsonl"
    if (first.includes('"timestamp"')) return "mooncake"
    return traceError("unrecognised JSONL trace: expected a timestamp or arrival_seconds key", 1)
  }
  if (/\bContextTokens\b/.test(first)) return "azure"
  if (/\barrival_seconds\b/.test(first)) return "generic-csv"
  return traceError("unrecognised trace: expected Mooncake or generic JSONL, Azure or generic CSV", 1)
}

const checkLengths = (line: number, input: unknown, output: unknown, inKey: string, outKey: string) => {
  if (!nonNegInt(input) || input < 1) return traceError(`${inKey} must be a positive integer`, line, inKey)
  if (!nonNegInt(output)) return traceError(`${outKey} must be a non-negative integer`, line, outKey)
  return undefined
}

const readJsonl = (text: string, generic: boolean): ReadonlyArray<TraceRequest> | TraceError => {
  const out: Array<TraceRequest> = []
  const lines = text.split("\n")
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.trim()
    if (raw === "") continue
    const line = i + 1
    let o: Record<string, unknown>
    try {
      o = JSON.parse(raw)
    } catch {
      return traceError("malformed JSON", line)
    }
    if (typeof o !== "object" || o === null || Array.isArray(o)) return traceError("not a JSON object", line)
    const tKey = generic ? "arrival_seconds" : "timestamp"
    const t = o[tKey]
    if (typeof t !== "number" || !Number.isFinite(t) || t < 0)
      return traceError(`${tKey} must be a non-negative number`, line, tKey)
    const bad = checkLengths(line, o["input_length"], o["output_length"], "input_length", "output_length")
    if (bad) return bad
    const h = o["hash_ids"]
    if (h !== undefined && (!Array.isArray(h) || !h.every((x) => Number.isInteger(x))))
      return traceError("hash_ids must be an array of integers", line, "hash_ids")
    const dpRank = o["dp_rank"]
    if (dpRank !== undefined && !nonNegInt(dpRank))
      return traceError("dp_rank must be a non-negative integer", line, "dp_rank")
    const room = o["bootstrap_room"]
    if (room !== undefined && typeof room !== "string" && !Number.isInteger(room))
      return traceError("bootstrap_room must be a decimal string or an integer", line, "bootstrap_room")
    const session = o["session_id"]
    if (
      session !== undefined &&
      ((typeof session !== "string" && !Number.isInteger(session)) || session === "")
    )
      return traceError("session_id must be a non-empty string or an integer", line, "session_id")
    out.push({
      requestId: String(out.length),
      arrivalSeconds: generic ? t : t / 1000,
      inputLength: o["input_length"] as number,
      outputLength: o["output_length"] as number,
      hashIds: h as ReadonlyArray<number> | undefined,
      dpRank: dpRank as number | undefined,
      bootstrapRoom: room === undefined ? undefined : String(room),
      sessionId: session === undefined ? undefined : String(session)
    })
  }
  return out
}

const csvRows = (text: string): ReadonlyArray<{ line: number; row: Record<string, string> }> | TraceError => {
  try {
    const rows = parse(text, {
      columns: true,
      skip_empty_lines: true,
      trim: true,
      info: true,
      bom: true
    }) as unknown as ReadonlyArray<{ info: { lines: number }; record: Record<string, string> }>
    return rows.map((r) => ({ line: r.info.lines, row: r.record }))
  } catch (e) {
    const line = (e as { lines?: number }).lines
    return traceError(`malformed CSV: ${(e as Error).message}`, line)
  }
}

// "2023-11-16 18:15:46.6805900" -> seconds since the epoch (UTC), keeping every fractional digit.
const azureSeconds = (s: string): number | undefined => {
  const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(\.\d+)?$/.exec(s)
  if (!m) return undefined
  const whole = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) / 1000
  return whole + (m[7] ? Number(`0${m[7]}`) : 0)
}

const readAzure = (text: string): ReadonlyArray<TraceRequest> | TraceError => {
  const rows = csvRows(text)
  if (!Array.isArray(rows)) return rows as TraceError
  const out: Array<TraceRequest> = []
  let t0: number | undefined
  for (const { line, row } of rows) {
    const t = azureSeconds(row["TIMESTAMP"] ?? "")
    if (t === undefined)
      return traceError("TIMESTAMP must look like 2023-11-16 18:15:46.6805900", line, "TIMESTAMP")
    t0 ??= t
    const input = intFromText(row["ContextTokens"] ?? "")
    const output = intFromText(row["GeneratedTokens"] ?? "")
    const bad = checkLengths(line, input, output, "ContextTokens", "GeneratedTokens")
    if (bad) return bad
    if (t < t0) return traceError("TIMESTAMP goes back before the first row", line, "TIMESTAMP")
    out.push({
      requestId: String(out.length),
      arrivalSeconds: t - t0,
      inputLength: input!,
      outputLength: output!
    })
  }
  return out
}

const readGenericCsv = (text: string): ReadonlyArray<TraceRequest> | TraceError => {
  const rows = csvRows(text)
  if (!Array.isArray(rows)) return rows as TraceError
  const out: Array<TraceRequest> = []
  for (const { line, row } of rows) {
    const t = Number(row["arrival_seconds"])
    if (row["arrival_seconds"] === undefined || row["arrival_seconds"] === "" || !Number.isFinite(t) || t < 0)
      return traceError("arrival_seconds must be a non-negative number", line, "arrival_seconds")
    const input = intFromText(row["input_length"] ?? "")
    const output = intFromText(row["output_length"] ?? "")
    const bad = checkLengths(line, input, output, "input_length", "output_length")
    if (bad) return bad
    const hashText = row["hash_ids"]?.trim()
    const hashIds = hashText ? hashText.split(/\s+/).map(Number) : undefined
    if (hashIds && !hashIds.every((x: number) => Number.isInteger(x)))
      return traceError("hash_ids must be integers separated by spaces", line, "hash_ids")
    const rankText = row["dp_rank"]?.trim()
    const dpRank = rankText ? intFromText(rankText) : undefined
    if (rankText && dpRank === undefined)
      return traceError("dp_rank must be a non-negative integer", line, "dp_rank")
    const room = row["bootstrap_room"]?.trim()
    const session = row["session_id"]?.trim()
    out.push({
      requestId: String(out.length),
      arrivalSeconds: t,
      inputLength: input!,
      outputLength: output!,
      hashIds,
      dpRank,
      bootstrapRoom: room ? room : undefined,
      sessionId: session ? session : undefined
    })
  }
  return out
}

/**
 * Read a trace from its text. Requests come back sorted by arrival (stable), with `requestId` the
 * row index in the file. A malformed row gives a `TraceError` with its line number.
 *
 * **When to use**: before `simulate`; the CLI reads the file and calls this.
 *
 * @example
 * ```ts
 * import { parseTrace } from "@loadledger/sim"
 * const t = parseTrace('{"timestamp": 1500, "input_length": 900, "output_length": 20, "hash_ids": [0, 1]}\n')
 * Array.isArray(t) && t[0]?.arrivalSeconds // => 1.5
 * ```
 *
 * @category readers
 * @since 0.1.0
 */
export const parseTrace = (text: string, format?: TraceFormat): ReadonlyArray<TraceRequest> | TraceError => {
  const f = format ?? detectTraceFormat(text)
  if (typeof f !== "string") return f
  const rows =
    f === "mooncake"
      ? readJsonl(text, false)
      : f === "generic-jsonl"
        ? readJsonl(text, true)
        : f === "azure"
          ? readAzure(text)
          : readGenericCsv(text)
  if (!Array.isArray(rows)) return rows as TraceError
  return rows
    .map((r, i) => [r, i] as const)
    .sort((a, b) => a[0].arrivalSeconds - b[0].arrivalSeconds || a[1] - b[1])
    .map(([r]) => r)
}

/**
 * Scale the arrival rate by `rateScale` (2 = twice as many requests per second: arrival times are
 * divided by 2) and keep the first `limit` requests.
 *
 * @example
 * ```ts
 * import { scaleTrace } from "@loadledger/sim"
 * const t = scaleTrace([{ requestId: "0", arrivalSeconds: 4, inputLength: 10, outputLength: 1 }], { rateScale: 2 })
 * t[0]?.arrivalSeconds // => 2
 * ```
 *
 * @category readers
 * @since 0.1.0
 */
export const scaleTrace = (
  trace: ReadonlyArray<TraceRequest>,
  options: { readonly rateScale?: number | undefined; readonly limit?: number | undefined }
): ReadonlyArray<TraceRequest> => {
  const cut = options.limit === undefined ? trace : trace.slice(0, options.limit)
  const k = options.rateScale ?? 1
  return k === 1 ? cut : cut.map((r) => ({ ...r, arrivalSeconds: r.arrivalSeconds / k }))
}
