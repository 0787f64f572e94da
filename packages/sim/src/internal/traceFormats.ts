/**
 * The trace format readers behind `parseTrace` (Mooncake and generic JSONL, Azure and generic
 * CSV): each row's fields checked where a request enters the simulator, a `TraceError` with the
 * line number for the first bad one.
 */
import { isTokenCount } from "@loadledger/policies"
import { parse } from "csv-parse/sync"
import type { TraceError, TraceRequest } from "../Trace.js"

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

const checkLengths = (line: number, input: unknown, output: unknown, inKey: string, outKey: string) => {
  if (!nonNegInt(input) || input < 1) return traceError(`${inKey} must be a positive integer`, line, inKey)
  if (!nonNegInt(output)) return traceError(`${outKey} must be a non-negative integer`, line, outKey)
  return undefined
}

export const readJsonl = (text: string, generic: boolean): ReadonlyArray<TraceRequest> | TraceError => {
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

// the rows of a CSV with a header; a header without one of the `required` columns is an error on
// line 1 naming it (not a bad value on every row)
const csvRows = (
  text: string,
  required: ReadonlyArray<string>
): ReadonlyArray<{ line: number; row: Record<string, string> }> | TraceError => {
  let header: ReadonlyArray<string> = []
  try {
    const rows = parse(text, {
      columns: (h: Array<string>) => {
        header = h
        return h
      },
      skip_empty_lines: true,
      trim: true,
      info: true,
      bom: true
    }) as unknown as ReadonlyArray<{ info: { lines: number }; record: Record<string, string> }>
    const missing = required.find((c) => !header.includes(c))
    if (missing !== undefined)
      return traceError(`missing column ${missing} (header: ${header.join(",")})`, 1, missing)
    return rows.map((r) => ({ line: r.info.lines, row: r.record }))
  } catch (e) {
    const line = (e as { lines?: number }).lines
    return traceError(`malformed CSV: ${(e as Error).message}`, line)
  }
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

export const readAzure = (text: string): ReadonlyArray<TraceRequest> | TraceError => {
  const rows = csvRows(text, ["TIMESTAMP", "ContextTokens", "GeneratedTokens"])
  if (!Array.isArray(rows)) return rows as TraceError
  const out: Array<TraceRequest> = []
  for (const { line, row } of rows) {
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
    out.push({ requestId: String(out.length), arrivalSeconds: t, inputLength: input!, outputLength: output! })
  }
  return fromEarliest(out)
}

// arrivals counted from the earliest row, wherever it is (rows need not be sorted)
const fromEarliest = (rows: ReadonlyArray<TraceRequest>): ReadonlyArray<TraceRequest> => {
  let t0 = Number.POSITIVE_INFINITY
  for (const r of rows) if (r.arrivalSeconds < t0) t0 = r.arrivalSeconds
  return rows.map((r) => ({ ...r, arrivalSeconds: r.arrivalSeconds - t0 }))
}

// BurstGPT (HPMLL/BurstGPT `data/BurstGPT_*.csv`): `Timestamp` in seconds from 0:00 of the first
// day, `Request tokens`, `Response tokens` (0: the request failed upstream; kept: the simulator
// runs it to one token), and, where the file has it (announced upstream), `SessionID`.
export const readBurstGpt = (text: string): ReadonlyArray<TraceRequest> | TraceError => {
  const rows = csvRows(text, ["Timestamp", "Request tokens", "Response tokens"])
  if (!Array.isArray(rows)) return rows as TraceError
  const out: Array<TraceRequest> = []
  for (const { line, row } of rows) {
    const t = secondsFromText(row["Timestamp"])
    if (t === undefined)
      return traceError("Timestamp must be a non-negative number of seconds", line, "Timestamp")
    const input = intFromText(row["Request tokens"] ?? "")
    const output = intFromText(row["Response tokens"] ?? "")
    const bad = checkLengths(line, input, output, "Request tokens", "Response tokens")
    if (bad) return bad
    const session = row["SessionID"]?.trim()
    out.push({
      requestId: String(out.length),
      arrivalSeconds: t,
      inputLength: input!,
      outputLength: output!,
      ...(session ? { sessionId: session } : {})
    })
  }
  return fromEarliest(out)
}

export const readGenericCsv = (text: string): ReadonlyArray<TraceRequest> | TraceError => {
  const rows = csvRows(text, ["arrival_seconds", "input_length", "output_length"])
  if (!Array.isArray(rows)) return rows as TraceError
  const out: Array<TraceRequest> = []
  for (const { line, row } of rows) {
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
