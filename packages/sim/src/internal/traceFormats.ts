/**
 * The trace format readers behind `parseTrace` (Mooncake and generic JSONL, Azure, BurstGPT and
 * generic CSV): each row's fields checked where a request enters the simulator, a `TraceError` with
 * the line number for the first bad one. Rows go to a `Kept` as they are read, which holds every row
 * or only the first `limit` by arrival: a multi-million-row file read for a few thousand requests
 * never holds all its rows.
 */
import { isTokenCount, isTokenId } from "@loadledger/policies"
import { parse } from "csv-parse/sync"
import { Heap } from "heap-js"
import type { TraceError, TraceRequest } from "../TraceRecord.js"

export const traceError = (message: string, line?: number, field?: string): TraceError => ({
  _tag: "TraceError",
  message,
  line,
  field
})

// token counts and ranks: the policies' one rule (a safe non-negative integer), checked here where a
// request enters the simulator; the loop and the policies trust the type
const nonNegInt = (v: unknown): v is number => typeof v === "number" && isTokenCount(v)
const intFromText = (s: string): number | undefined => (/^\s*\d+\s*$/.test(s) ? Number(s) : undefined)
// a CSV cell holding seconds: a finite number >= 0, else undefined
const secondsFromText = (s: string | undefined): number | undefined => {
  const t = Number(s)
  return s === undefined || s.trim() === "" || !Number.isFinite(t) || t < 0 ? undefined : t
}

/** A request as a reader makes it; `Kept` numbers it (`requestId`: its row index in the file). */
export type Row = Omit<TraceRequest, "requestId">

/** (arrival, row index): later first, so a max-heap's top is the latest row kept. */
type Numbered = { readonly request: TraceRequest; readonly index: number }
const latestFirst = (a: Numbered, b: Numbered): number =>
  b.request.arrivalSeconds - a.request.arrivalSeconds || b.index - a.index

/**
 * The rows of a trace, in file order, or with `limit` only the first `limit` by arrival (ties by
 * row order): a max-heap (`heap-js`) on (arrival, row index) holding at most `limit` rows; a row
 * later than the latest kept is dropped at once (every row after the first `limit` of a sorted file).
 */
export class Kept {
  private readonly rows: Array<Numbered> = []
  private readonly heap = new Heap<Numbered>(latestFirst)
  private rowsRead = 0
  constructor(private readonly limit: number = Number.POSITIVE_INFINITY) {}

  /** Row `row`, read from line `line` of the file (the streaming reader checks its order). */
  add(row: Row, _line: number): void {
    const index = this.rowsRead++
    const n: Numbered = { request: { requestId: String(index), ...row }, index }
    if (this.limit === Number.POSITIVE_INFINITY) {
      this.rows.push(n)
      return
    }
    const top = this.heap.peek()
    if (this.heap.length < this.limit) this.heap.push(n)
    else if (top !== undefined && latestFirst(n, top) > 0) this.heap.pushpop(n)
  }

  /** The rows kept, sorted by arrival (stable: ties by row order). */
  sorted(): Array<TraceRequest> {
    const kept = this.limit === Number.POSITIVE_INFINITY ? this.rows : this.heap.toArray()
    return kept.sort((a, b) => latestFirst(b, a)).map((n) => n.request)
  }
}

// a generic trace's `token_ids`: token ids (u32), no more of them than the prompt has tokens
const checkTokenIds = (line: number, ids: unknown, input: number): TraceError | undefined => {
  if (ids === undefined) return undefined
  if (!Array.isArray(ids) || !ids.every(isTokenId))
    return traceError("token_ids must be token ids (integers 0..4294967295)", line, "token_ids")
  if (ids.length > input)
    return traceError(`token_ids has ${ids.length} ids, more than input_length ${input}`, line, "token_ids")
  return undefined
}

const checkLengths = (line: number, input: unknown, output: unknown, inKey: string, outKey: string) => {
  if (!nonNegInt(input) || input < 1) return traceError(`${inKey} must be a positive integer`, line, inKey)
  if (!nonNegInt(output)) return traceError(`${outKey} must be a non-negative integer`, line, outKey)
  return undefined
}

export const readJsonl = (text: string, generic: boolean, keep: Kept): TraceError | undefined => {
  // line by line without splitting the whole text (a trace of millions of lines)
  for (let start = 0, line = 1; start < text.length; line++) {
    const nl = text.indexOf("\n", start)
    const end = nl < 0 ? text.length : nl
    const raw = text.slice(start, end).trim()
    start = end + 1
    if (raw === "") continue
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
    const tokenIds = generic ? o["token_ids"] : undefined
    const badIds = checkTokenIds(line, tokenIds, o["input_length"] as number)
    if (badIds) return badIds
    keep.add(
      {
        arrivalSeconds: generic ? t : t / 1000,
        inputLength: o["input_length"] as number,
        outputLength: o["output_length"] as number,
        hashIds: h as ReadonlyArray<number> | undefined,
        dpRank: dpRank as number | undefined,
        bootstrapRoom: room === undefined ? undefined : String(room),
        sessionId: session === undefined ? undefined : String(session),
        ...(tokenIds === undefined ? {} : { tokenIds: tokenIds as ReadonlyArray<number> })
      },
      line
    )
  }
  return undefined
}

// each row of a CSV with a header, to `row` as it is parsed (none kept here: `row` returns a
// TraceError to stop); a header without one of the `required` columns is an error on line 1
// naming it (not a bad value on every row)
const eachCsvRow = (
  text: string,
  required: ReadonlyArray<string>,
  row: (line: number, record: Record<string, string>) => TraceError | undefined
): TraceError | undefined => {
  const missingIn = (h: ReadonlyArray<string>): TraceError | undefined => {
    const missing = required.find((c) => !h.includes(c))
    return missing === undefined
      ? undefined
      : traceError(`missing column ${missing} (header: ${h.join(",")})`, 1, missing)
  }
  let header: ReadonlyArray<string> | undefined
  let stop: TraceError | undefined
  try {
    parse(text, {
      columns: (h: Array<string>) => {
        header = h
        stop = missingIn(h)
        if (stop !== undefined) throw stop
        return h
      },
      skip_empty_lines: true,
      trim: true,
      bom: true,
      // any line ending, mixed within a file too (the default takes the first line's for every line)
      record_delimiter: ["\r\n", "\n", "\r"],
      // each record handed on and dropped (returning nothing keeps no record)
      on_record: (record: Record<string, string>, context: { lines: number }) => {
        stop = row(context.lines, record)
        if (stop !== undefined) throw stop
        return undefined
      }
    })
  } catch (e) {
    if (stop !== undefined) return stop
    const line = (e as { lines?: number }).lines
    return traceError(`malformed CSV: ${(e as Error).message}`, line)
  }
  // no header line at all (an empty file): every column is missing
  return header === undefined ? missingIn([]) : undefined
}

// "2023-11-16 18:15:46.6805900" (2023 traces) or "2024-05-10 00:00:00.009930+00:00" (2024 traces)
// -> seconds since the epoch (UTC), keeping every fractional digit; an offset (Z, +HH:MM, +HHMM)
// is subtracted, none is UTC.
const azureSeconds = (s: string): number | undefined => {
  const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|([+-])(\d{2}):?(\d{2}))?$/.exec(
    s.trim()
  )
  if (!m) return undefined
  const whole = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) / 1000
  const offset = m[9] === undefined ? 0 : (m[9] === "-" ? -1 : 1) * (+m[10]! * 3600 + +m[11]! * 60)
  return whole - offset + (m[7] ? Number(`0${m[7]}`) : 0)
}

export const readAzure = (text: string, keep: Kept): TraceError | undefined =>
  eachCsvRow(text, ["TIMESTAMP", "ContextTokens", "GeneratedTokens"], (line, row) => {
    const t = azureSeconds(row["TIMESTAMP"] ?? "")
    if (t === undefined)
      return traceError(
        "TIMESTAMP must look like 2023-11-16 18:15:46.6805900 or 2024-05-10 00:00:00.009930+00:00",
        line,
        "TIMESTAMP"
      )
    const input = intFromText(row["ContextTokens"] ?? "")
    const output = intFromText(row["GeneratedTokens"] ?? "")
    const bad = checkLengths(line, input, output, "ContextTokens", "GeneratedTokens")
    if (bad) return bad
    keep.add({ arrivalSeconds: t, inputLength: input!, outputLength: output! }, line)
    return undefined
  })

// arrivals counted from the earliest row, wherever it was in the file (rows need not be sorted;
// the earliest is always kept)
export const fromEarliest = (rows: ReadonlyArray<TraceRequest>): ReadonlyArray<TraceRequest> => {
  let t0 = Number.POSITIVE_INFINITY
  for (const r of rows) if (r.arrivalSeconds < t0) t0 = r.arrivalSeconds
  return rows.map((r) => ({ ...r, arrivalSeconds: r.arrivalSeconds - t0 }))
}

// BurstGPT (HPMLL/BurstGPT `data/BurstGPT_*.csv`): `Timestamp` in seconds from 0:00 of the first
// day, `Request tokens`, `Response tokens` (0: the request failed upstream; kept: the simulator
// runs it to one token), and, where the file has it (announced upstream), `SessionID`.
export const readBurstGpt = (text: string, keep: Kept): TraceError | undefined =>
  eachCsvRow(text, ["Timestamp", "Request tokens", "Response tokens"], (line, row) => {
    const t = secondsFromText(row["Timestamp"])
    if (t === undefined)
      return traceError("Timestamp must be a non-negative number of seconds", line, "Timestamp")
    const input = intFromText(row["Request tokens"] ?? "")
    const output = intFromText(row["Response tokens"] ?? "")
    const bad = checkLengths(line, input, output, "Request tokens", "Response tokens")
    if (bad) return bad
    const session = row["SessionID"]?.trim()
    keep.add(
      {
        arrivalSeconds: t,
        inputLength: input!,
        outputLength: output!,
        ...(session ? { sessionId: session } : {})
      },
      line
    )
    return undefined
  })

export const readGenericCsv = (text: string, keep: Kept): TraceError | undefined =>
  eachCsvRow(text, ["arrival_seconds", "input_length", "output_length"], (line, row) => {
    const t = secondsFromText(row["arrival_seconds"])
    if (t === undefined)
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
    const idsText = row["token_ids"]?.trim()
    const tokenIds = idsText
      ? idsText.split(/\s+/).map((x) => (/^\d+$/.test(x) ? Number(x) : Number.NaN))
      : undefined
    const badIds = checkTokenIds(line, tokenIds, input!)
    if (badIds) return badIds
    keep.add(
      {
        arrivalSeconds: t,
        inputLength: input!,
        outputLength: output!,
        hashIds,
        dpRank,
        bootstrapRoom: room ? room : undefined,
        sessionId: session ? session : undefined,
        ...(tokenIds === undefined ? {} : { tokenIds })
      },
      line
    )
    return undefined
  })
