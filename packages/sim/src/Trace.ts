/**
 * Request traces: the request record, format detection and `parseTrace` for Mooncake JSONL, the
 * Azure LLM inference CSV and loadledger's generic CSV/JSONL (each format's reader is in
 * `internal/traceFormats.ts`), plus rate scaling and cutting.
 *
 * @since 0.1.0
 */
import {
  fromEarliest,
  Kept,
  readAzure,
  readBurstGpt,
  readGenericCsv,
  readJsonl,
  traceError
} from "./internal/traceFormats.js"
import type { TraceError, TraceRequest } from "./TraceRecord.js"

/**
 * The request record and a reader's error, defined in the leaf `TraceRecord.ts` (below the format
 * readers) and exported here with the rest of the trace API.
 *
 * @category models
 * @since 0.1.0
 */
export type { TraceError, TraceRequest } from "./TraceRecord.js"

/**
 * The trace formats the readers understand.
 *
 * - `mooncake`: JSONL, `{"timestamp": ms, "input_length", "output_length", "hash_ids": [..]}`
 *   (kvcache-ai/Mooncake `FAST25-release/traces/`, commit 3cca71d).
 * - `azure`: CSV `TIMESTAMP,ContextTokens,GeneratedTokens`, wall-clock timestamps with any number
 *   of fractional digits and an optional UTC offset (`Z`, `+00:00`, `-0500`; none is UTC), arrivals
 *   counted from the earliest row (Azure/AzurePublicDataset: the 2023 traces
 *   `data/AzureLLMInferenceTrace_{code,conv}.csv`, commit 7909210, `2023-11-16 18:15:46.6805900`;
 *   the 2024 week-long traces `AzureLLMInferenceTrace_{code,conv}_1week.csv`,
 *   `2024-05-10 00:00:00.009930+00:00`).
 * - `burstgpt`: CSV `Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type` in any
 *   column order, `Timestamp` in seconds, arrivals counted from the earliest row; a row with 0
 *   response tokens (a failed request) is kept (the simulator runs every request to at least one
 *   output token, the one its prefill produces, as for any row with output 0); a `SessionID` column, where
 *   present, gives `sessionId` (HPMLL/BurstGPT README "Schema" and `data/BurstGPT_*.csv`,
 *   commit 5d93d82).
 * - `generic-jsonl`: JSONL `{"arrival_seconds", "input_length", "output_length", "hash_ids"?,
 *   "dp_rank"?, "bootstrap_room"?, "session_id"?, "token_ids"?}` (`session_id` a string or an
 *   integer; `token_ids` an array of at most `input_length` token ids, integers `0..2^32-1`).
 * - `generic-csv`: CSV with header `arrival_seconds,input_length,output_length` and optional
 *   `hash_ids` (ids separated by spaces), `dp_rank`, `bootstrap_room`, `session_id`, `token_ids`
 *   (ids separated by spaces) columns.
 *
 * @category models
 * @since 0.1.0
 */
export type TraceFormat = "mooncake" | "azure" | "burstgpt" | "generic-jsonl" | "generic-csv"

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
  if (/\bRequest tokens\b/.test(first)) return "burstgpt"
  if (/\barrival_seconds\b/.test(first)) return "generic-csv"
  return traceError(
    "unrecognised trace: expected Mooncake or generic JSONL, Azure, BurstGPT or generic CSV",
    1
  )
}

/**
 * Read a trace from its text. Requests come back sorted by arrival (stable), with `requestId` the
 * row index in the file. A malformed row gives a `TraceError` with its line number; every row is
 * checked, kept or not. `options.limit` keeps only the first `limit` requests by arrival (ties by
 * row order; the same requests as `scaleTrace`'s `limit` after a full read) while holding at most
 * `limit` of them at a time: the 3.86M-row BurstGPT file read for `--limit 1000` took 3.2 GB and 31 s
 * read whole (a `limit` that is not an integer >= 1 is a `TraceError` naming `limit`).
 *
 * **When to use**: before `simulate`; the CLI reads the file and calls this.
 *
 * @example
 * ```ts
 * import { parseTrace } from "@loadledger/sim"
 * const t = parseTrace('{"timestamp": 1500, "input_length": 900, "output_length": 20, "hash_ids": [0, 1]}\n')
 * Array.isArray(t) && t[0]?.arrivalSeconds // => 1.5
 * const csv = "arrival_seconds,input_length,output_length\n3,10,1\n1,20,1\n2,30,1\n"
 * const first2 = parseTrace(csv, "generic-csv", { limit: 2 })
 * Array.isArray(first2) && first2.map((r) => r.requestId) // => ["1", "2"]
 * ```
 *
 * @category readers
 * @since 0.1.0
 */
export const parseTrace = (
  text: string,
  format?: TraceFormat,
  options: { readonly limit?: number | undefined } = {}
): ReadonlyArray<TraceRequest> | TraceError => {
  // the options first: a bad limit is the caller's, whatever the text holds
  const { limit } = options
  if (limit !== undefined && !(Number.isSafeInteger(limit) && limit >= 1))
    return traceError(`limit must be an integer >= 1, got ${limit}`, undefined, "limit")
  const f = format ?? detectTraceFormat(text)
  if (typeof f !== "string") return f
  const keep = new Kept(limit)
  const bad =
    f === "mooncake"
      ? readJsonl(text, false, keep)
      : f === "generic-jsonl"
        ? readJsonl(text, true, keep)
        : f === "azure"
          ? readAzure(text, keep)
          : f === "burstgpt"
            ? readBurstGpt(text, keep)
            : readGenericCsv(text, keep)
  if (bad !== undefined) return bad
  const rows = keep.sorted()
  // Azure and BurstGPT timestamps are wall-clock or day times: counted from the earliest row
  return f === "azure" || f === "burstgpt" ? fromEarliest(rows) : rows
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
