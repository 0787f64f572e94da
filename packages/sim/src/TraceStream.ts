/**
 * Traces read as streams: a file (or any source of text) read line by line into requests, for
 * traces too large to hold (a week of Azure's 2024 traffic is millions of rows). `simulate` takes
 * the stream and reads it lazily, so a replay holds only the requests in flight.
 *
 * @since 0.6.0
 */
import { closeSync, openSync, readSync, statSync } from "node:fs"
import { StringDecoder } from "node:string_decoder"
import {
  Kept,
  type Row,
  readAzure,
  readBurstGpt,
  readGenericCsv,
  readJsonl,
  traceError
} from "./internal/traceFormats.js"
import {
  detectTraceFormat,
  isTraceError,
  type TraceError,
  type TraceFormat,
  type TraceRequest
} from "./Trace.js"

/**
 * What `simulate` must know of a trace before it starts, which an array has and a stream states:
 * its request count (the SLO's allowed misses, the progress total) and its last arrival (the load
 * samples' spacing, `lastArrivalSeconds` of the result). An iterable without them is read once
 * first to find them.
 *
 * @category models
 * @since 0.6.0
 */
export interface TraceShape {
  readonly count: number
  readonly lastArrivalSeconds: number
}

/**
 * A trace read lazily: each `[Symbol.iterator]()` reads the source again from its start, one block of
 * lines at a time, holding no request it has handed on. `count` and `lastArrivalSeconds` come from a
 * first pass that checked every row (as `parseTrace` does), so `simulate` starts without reading it
 * again. A source that changed since that pass throws when read (the one error left to a pass).
 *
 * @category models
 * @since 0.6.0
 */
export interface TraceStream extends Iterable<TraceRequest>, TraceShape {
  readonly format: TraceFormat
}

/** Options of a streamed trace: `limit` keeps the first `limit` requests, `rateScale` as `scaleTrace`. */
export interface TraceStreamOptions {
  readonly limit?: number | undefined
  readonly rateScale?: number | undefined
}

const BLOCK_LINES = 4096
const TIME_FIELD: Record<TraceFormat, string> = {
  mooncake: "timestamp",
  "generic-jsonl": "arrival_seconds",
  azure: "TIMESTAMP",
  burstgpt: "Timestamp",
  "generic-csv": "arrival_seconds"
}

/** A block's rows, numbered across the file and checked for arrival order. */
class BlockRows extends Kept {
  got: Array<TraceRequest> = []
  error: TraceError | undefined = undefined
  constructor(
    private readonly state: { index: number; last: number },
    private readonly offset: number,
    private readonly field: string
  ) {
    super()
  }
  override add(row: Row, line: number): void {
    if (this.error !== undefined) return
    if (row.arrivalSeconds < this.state.last) {
      this.error = traceError(
        `${this.field} is earlier than the row before it: a streamed trace must be in arrival order (a stream cannot be sorted; read the file whole with parseTrace, which sorts it)`,
        line + this.offset,
        this.field
      )
      return
    }
    this.state.last = row.arrivalSeconds
    this.got.push({ requestId: String(this.state.index++), ...row })
  }
}

/** The lines of `chunks`, without their "\n" (a "\r" before it is kept: the CSV reader takes it). */
function* linesOf(chunks: Iterable<string>): Generator<string> {
  let rest = ""
  for (const chunk of chunks) {
    let start = 0
    for (let nl = chunk.indexOf("\n"); nl >= 0; nl = chunk.indexOf("\n", start)) {
      yield rest + chunk.slice(start, nl)
      rest = ""
      start = nl + 1
    }
    rest += chunk.slice(start)
  }
  if (rest !== "") yield rest
}

/**
 * The rows of `chunks`, block by block, or the first `TraceError` (last); `format` detected from
 * the first block when absent. Each block runs through `parseTrace`'s reader for the format (a CSV
 * block after the first is given the header line), so rows are checked, and line numbers given, as
 * `parseTrace` does.
 */
function* blocksOf(
  chunks: Iterable<string>,
  given: TraceFormat | undefined
): Generator<{ format: TraceFormat; rows: Array<TraceRequest> } | TraceError> {
  const state = { index: 0, last: Number.NEGATIVE_INFINITY }
  let format = given
  let header: string | undefined
  let t0: number | undefined
  let block: Array<string> = []
  let firstLine = 1 // the file's line number of block[0]
  const lines = linesOf(chunks)
  for (let done = false; !done; ) {
    block = []
    for (let n = lines.next(); ; n = lines.next()) {
      if (n.done) {
        done = true
        break
      }
      block.push(n.value)
      if (block.length === BLOCK_LINES) break
    }
    if (block.length === 0 && firstLine > 1) return
    const body = block.join("\n")
    if (format === undefined) {
      const f = detectTraceFormat(body)
      if (isTraceError(f)) return yield f
      format = f
    }
    const csv = format === "azure" || format === "burstgpt" || format === "generic-csv"
    const first = header === undefined
    if (csv && first) header = block.find((l) => l.trim() !== "")
    const text = csv && !first ? `${header}\n${body}` : body
    // a CSV block after the first has the header as its line 1
    const offset = firstLine - (csv && !first ? 2 : 1)
    const sink = new BlockRows(state, offset, TIME_FIELD[format])
    const bad =
      format === "mooncake" || format === "generic-jsonl"
        ? readJsonl(text, format === "generic-jsonl", sink)
        : format === "azure"
          ? readAzure(text, sink)
          : format === "burstgpt"
            ? readBurstGpt(text, sink)
            : readGenericCsv(text, sink)
    const error =
      sink.error ?? (bad && { ...bad, line: bad.line === undefined ? undefined : bad.line + offset })
    if (error) return yield error
    // Azure and BurstGPT arrivals count from the earliest row: in a sorted stream, the first
    if (format === "azure" || format === "burstgpt") {
      t0 ??= sink.got[0]?.arrivalSeconds
      for (let i = 0; i < sink.got.length; i++) {
        const r = sink.got[i]!
        sink.got[i] = { ...r, arrivalSeconds: r.arrivalSeconds - t0! }
      }
    }
    yield { format, rows: sink.got }
    firstLine += block.length
    if (block.length === 0) return
  }
}

/**
 * Read a trace as a stream from `chunks`, a function giving the source's text in chunks of any
 * size, afresh each time it is called. The rows are checked in a first pass, as `parseTrace` checks
 * them (the same `TraceError`s with line numbers), and must be in arrival order: a row earlier than
 * the one before it is a `TraceError` naming its line and time field (a stream cannot be sorted;
 * `parseTrace` sorts). `requestId` is the row index, arrivals as `parseTrace` gives them, so a sorted
 * file gives the same requests both ways. `options.limit` keeps the first `limit` requests (every
 * row is still checked in the first pass; a replay stops reading after them); `options.rateScale`
 * divides arrivals as `scaleTrace` does.
 *
 * **When to use**: for a trace too large to hold; `streamTraceFile` reads a file.
 *
 * @example
 * ```ts
 * import { simulate, streamTrace, isTraceError } from "@loadledger/sim"
 * const text = "arrival_seconds,input_length,output_length\n0,10,1\n1,20,1\n"
 * const s = streamTrace(() => [text], "generic-csv")
 * isTraceError(s) ? s.message : [s.count, s.lastArrivalSeconds, [...s].map((r) => r.inputLength)]
 * // => [2, 1, [10, 20]]
 * const late = streamTrace(() => ["arrival_seconds,input_length,output_length\n2,10,1\n1,20,1\n"])
 * isTraceError(late) && late.line // => 3
 * ```
 *
 * @category readers
 * @since 0.6.0
 */
export const streamTrace = (
  chunks: () => Iterable<string>,
  format?: TraceFormat,
  options: TraceStreamOptions = {}
): TraceStream | TraceError => {
  const { limit, rateScale } = options
  if (limit !== undefined && !(Number.isSafeInteger(limit) && limit >= 1))
    return traceError(`limit must be an integer >= 1, got ${limit}`, undefined, "limit")
  if (rateScale !== undefined && !(Number.isFinite(rateScale) && rateScale > 0))
    return traceError(`rateScale must be a number > 0, got ${rateScale}`, undefined, "rateScale")
  const cap = limit ?? Number.POSITIVE_INFINITY
  const k = rateScale ?? 1
  let count = 0
  let last = 0
  let found: TraceFormat | undefined = format
  for (const b of blocksOf(chunks(), format)) {
    if (isTraceError(b)) return b
    found = b.format
    for (const r of b.rows)
      if (count < cap) {
        count++
        last = r.arrivalSeconds
      }
  }
  return {
    format: found ?? "generic-csv",
    count,
    lastArrivalSeconds: k === 1 ? last : last / k,
    *[Symbol.iterator]() {
      let given = 0
      for (const b of blocksOf(chunks(), found)) {
        if (isTraceError(b)) throw new Error(`the trace changed since it was first read: ${b.message}`)
        for (const r of b.rows) {
          if (given++ >= cap) return
          yield k === 1 ? r : { ...r, arrivalSeconds: r.arrivalSeconds / k }
        }
      }
    }
  }
}

/** The text of the file at `path` in chunks of 1 MiB (UTF-8, split characters joined). */
function* fileChunks(path: string): Generator<string> {
  const fd = openSync(path, "r")
  try {
    const buf = Buffer.allocUnsafe(1 << 20)
    const utf8 = new StringDecoder("utf8")
    for (let n = readSync(fd, buf, 0, buf.length, null); n > 0; n = readSync(fd, buf, 0, buf.length, null))
      yield utf8.write(buf.subarray(0, n))
    const tail = utf8.end()
    if (tail !== "") yield tail
  } finally {
    closeSync(fd)
  }
}

/**
 * `streamTrace` over the file at `path`: read 1 MiB at a time, never whole. A file that cannot be
 * read is a `TraceError` with `field` "path" (not found, a directory, or the system's code).
 *
 * @example
 * ```ts
 * import { streamTraceFile, isTraceError } from "@loadledger/sim"
 * const s = streamTraceFile("examples/traces/mooncake/conversation_trace.jsonl")
 * isTraceError(s) ? s.message : [s.format, s.count > 1000]
 * // => ["mooncake", true]
 * const none = streamTraceFile("no/such/trace.csv")
 * isTraceError(none) && none.message // => "trace file not found: no/such/trace.csv"
 * ```
 *
 * @category readers
 * @since 0.6.0
 */
export const streamTraceFile = (
  path: string,
  format?: TraceFormat,
  options: TraceStreamOptions = {}
): TraceStream | TraceError => {
  try {
    if (statSync(path).isDirectory()) throw Object.assign(new Error("EISDIR"), { code: "EISDIR" })
    return streamTrace(() => fileChunks(path), format, options)
  } catch (e) {
    const code = (e as { code?: string }).code
    return traceError(
      code === "ENOENT"
        ? `trace file not found: ${path}`
        : code === "EISDIR"
          ? `${path} is a directory, not a file`
          : `cannot read trace ${path}: ${code ?? e}`,
      undefined,
      "path"
    )
  }
}
