/**
 * A small strict parser for the Prometheus text exposition format (0.0.4).
 *
 * Why not `parse-prometheus-text-format` (npm 1.1.1, last published 2024-12): evaluated on the
 * payloads and rules of issue 2, it keeps the last of two samples with the same label set (silent
 * last-writer-wins), accepts `hello world` as a metric `hello` with value "world", accepts
 * `foo 1 2 3 4`, and reports errors without a line number.
 */
import * as Result from "effect/Result"
import { type DecodeError, decodeError } from "../DecodeError.js"

export interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
  readonly line: number
}

export interface Family {
  readonly name: string
  readonly type?: string | undefined
  readonly help?: string | undefined
  readonly line: number
}

export interface Exposition {
  readonly samples: ReadonlyArray<Sample>
  /** Metric families declared by `# HELP` / `# TYPE` lines, by name. */
  readonly declared: ReadonlyMap<string, Family>
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/
const LABEL = /[a-zA-Z_][a-zA-Z0-9_]*/y
// 0.0.4's five, the gauge histogram (`gaugehistogram`, spelled `gauge_histogram` by
// prometheus/common's parser too) and OpenMetrics' `info` / `unknown`
const TYPES = new Set([
  "counter",
  "gauge",
  "histogram",
  "summary",
  "untyped",
  "gaugehistogram",
  "gauge_histogram",
  "info",
  "unknown"
])
const HISTOGRAMS = new Set(["histogram", "gaugehistogram", "gauge_histogram"])

/** The declared type of the family `name` belongs to (a histogram's `_bucket`, a summary's `_count`, ...). */
const familyType = (declared: ReadonlyMap<string, Family>, name: string): string | undefined => {
  const own = declared.get(name)?.type
  if (own !== undefined) return own
  for (const suffix of ["_bucket", "_count", "_sum"]) {
    if (!name.endsWith(suffix)) continue
    const t = declared.get(name.slice(0, -suffix.length))?.type
    if (t !== undefined && (HISTOGRAMS.has(t) || t === "summary")) return t
  }
  return undefined
}

const parseValue = (s: string): number | undefined => {
  if (s === "NaN") return Number.NaN
  if (s === "+Inf" || s === "Inf") return Number.POSITIVE_INFINITY
  if (s === "-Inf") return Number.NEGATIVE_INFINITY
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return undefined
  return Number(s)
}

/** The canonical key of a series: name + sorted label pairs. */
export const seriesKey = (name: string, labels: Readonly<Record<string, string>>): string =>
  `${name}{${Object.keys(labels)
    .sort()
    .map((k) => `${k}=${JSON.stringify(labels[k])}`)
    .join(",")}}`

const parseLabels = (
  s: string,
  line: number
): Result.Result<{ labels: Record<string, string>; rest: string }, DecodeError> => {
  // names are data: a label called `constructor` or `__proto__` is just a label
  const labels: Record<string, string> = Object.create(null)
  let i = 1 // after "{"
  const fail = (m: string) => Result.fail(decodeError("SyntaxError", m, { line }))
  for (;;) {
    while (s[i] === " " || s[i] === "\t") i++
    if (s[i] === "}") return Result.succeed({ labels, rest: s.slice(i + 1) })
    LABEL.lastIndex = i
    const m = LABEL.exec(s)
    if (m === null) return fail(`expected a label name at column ${i + 1}`)
    const key = m[0]
    i += key.length
    while (s[i] === " " || s[i] === "\t") i++
    if (s[i] !== "=") return fail(`expected '=' after label ${key}`)
    i++
    while (s[i] === " " || s[i] === "\t") i++
    if (s[i] !== '"') return fail(`expected '"' to open the value of label ${key}`)
    i++
    let v = ""
    for (;;) {
      const c = s[i]
      if (c === undefined) return fail(`unterminated value of label ${key}`)
      if (c === '"') break
      if (c === "\\") {
        const n = s[i + 1]
        if (n === "n") v += "\n"
        else if (n === "\\" || n === '"') v += n
        else return fail(`invalid escape \\${n ?? ""} in label ${key}`)
        i += 2
      } else {
        v += c
        i++
      }
    }
    i++
    if (Object.hasOwn(labels, key)) return fail(`label ${key} repeated`)
    if (key === "__name__")
      return fail(`label name "__name__" is reserved (the metric name goes before the label set)`)
    labels[key] = v
    while (s[i] === " " || s[i] === "\t") i++
    if (s[i] === ",") i++
    else if (s[i] !== "}") return fail(`expected ',' or '}' after label ${key}`)
  }
}

/**
 * `text` up to its last complete line, and the 1-based number of the line left out: the last
 * line when it has no newline after it and is not blank. The exposition format requires every line to end with a line feed, and a scrape cut off in
 * transit or in a paste can end in a sample that still parses to a wrong number (`12.0` cut to
 * `1`) or a comment that no longer parses (`# TYPE s`): that line is not read, so what only it
 * carried stays absent. The same holds for vLLM logger lines and rank summary lines, and for a
 * text of one line (a paste that starts with a sample, cut inside it: `141.75` cut to `141`).
 */
export const completeLines = (text: string): { readonly complete: string; readonly cutLine?: number } => {
  const end = text.lastIndexOf("\n") + 1
  if (end === text.length) return { complete: text }
  if (text.slice(end).trim() === "") return { complete: text }
  let cutLine = 1
  for (let i = text.indexOf("\n"); i >= 0 && i < end; i = text.indexOf("\n", i + 1)) cutLine++
  return { complete: text.slice(0, end), cutLine }
}

/** The 1-based line holding the first carriage return that no line feed follows, if any. */
const loneCrLine = (text: string): number | undefined => {
  const m = /\r(?!\n)/.exec(text)
  if (m === null) return undefined
  let line = 1
  for (let i = text.indexOf("\n"); i >= 0 && i < m.index; i = text.indexOf("\n", i + 1)) line++
  return line
}

/**
 * What makes `text` no exposition before a line is parsed, for a decoder told it is one (`as`:
 * `vllm-metrics` / `sglang-metrics`): a `SyntaxError` on line 1 for JSON (a load endpoint's
 * body), for an empty or blank text (a failed scrape: an engine's `/metrics` page is never
 * empty), or on its line for a carriage return alone (old Mac line endings: the format ends each
 * line with a line feed, so such a text is one line, and a leading `# HELP` would swallow it);
 * else `undefined`.
 */
export const notExposition = (text: string, as: string): DecodeError | undefined => {
  const t = text.trimStart()
  if (t.startsWith("{") || t.startsWith("["))
    return decodeError(
      "SyntaxError",
      `the text is JSON, not ${as} text (Prometheus exposition): decode it as "auto" or its JSON kind`,
      { line: 1 }
    )
  if (t === "")
    return decodeError("SyntaxError", `the text is empty: no ${as} page to read (a failed scrape?)`, {
      line: 1
    })
  const cr = loneCrLine(text)
  if (cr !== undefined)
    return decodeError(
      "SyntaxError",
      `a carriage return with no line feed after it on line ${cr}: lines that end in a carriage return alone (old Mac line endings) are one line to the exposition format, which ends each line with a line feed (\\n or \\r\\n)`,
      { line: cr }
    )
  return undefined
}

/**
 * An exposition with no sample and no `# HELP` / `# TYPE` line (comments and blank lines only) is
 * no metrics page: a `SyntaxError` on line 1 for a decoder told it is one (`as`); else `undefined`.
 * A page that declares metrics without samples is one (its metrics are absent, never 0).
 */
export const nothingExposed = (e: Exposition, as: string): DecodeError | undefined =>
  e.samples.length === 0 && e.declared.size === 0
    ? decodeError("SyntaxError", `no sample and no # HELP / # TYPE line: the text is no ${as} page`, {
        line: 1
      })
    : undefined

/**
 * The error for a text whose only line is cut (`completeLines` left nothing to read).
 */
export const onlyLineCut = (cutLine: number): DecodeError =>
  decodeError(
    "SyntaxError",
    `line ${cutLine} does not end with a newline, so it may be cut off, and it is the only line: nothing complete to read (a load text ends with a newline)`,
    { line: cutLine }
  )

/**
 * Parse exposition text. Errors (with the 1-based line): a line that is not a comment, blank, or
 * `name{labels} value [timestamp]`; an unknown `# TYPE`; the same series (name + label set) twice
 * (`AmbiguousSeries`, naming both lines).
 */
export const parseExposition = (text: string): Result.Result<Exposition, DecodeError> => {
  const samples: Array<Sample> = []
  const declared = new Map<string, Family>()
  const seen = new Map<string, number>()
  const lines = text.split(/\r?\n/)
  for (let n = 0; n < lines.length; n++) {
    const line = n + 1
    const raw = lines[n]!.trim()
    if (raw === "") continue
    if (raw.startsWith("#")) {
      const m = /^#\s*(HELP|TYPE)\s+(\S+)(?:\s+(.*))?$/.exec(raw)
      if (m === null) continue // a plain comment
      const [, kind, name, rest] = m as unknown as [string, string, string, string | undefined]
      if (!NAME.test(name) || NAME.exec(name)![0] !== name)
        return Result.fail(decodeError("SyntaxError", `invalid metric name ${name}`, { line }))
      const prev = declared.get(name) ?? { name, line }
      if (kind === "TYPE") {
        const t = (rest ?? "").trim()
        if (!TYPES.has(t))
          return Result.fail(decodeError("SyntaxError", `unknown metric type '${t}'`, { line }))
        declared.set(name, { ...prev, type: t })
      } else declared.set(name, { ...prev, help: rest ?? "" })
      continue
    }
    const nm = NAME.exec(raw)
    if (nm === null) return Result.fail(decodeError("SyntaxError", `expected a metric name`, { line }))
    const name = nm[0]
    let rest = raw.slice(name.length)
    let labels: Record<string, string> = Object.create(null)
    // the 0.0.4 grammar allows blanks between the name and `{`, and none between `}` and the value
    const open = /^[ \t]*\{/.exec(rest)
    let closed = false
    if (open !== null) {
      const l = parseLabels(rest.slice(open[0].length - 1), line)
      if (Result.isFailure(l)) return Result.fail(l.failure)
      labels = l.success.labels
      rest = l.success.rest
      closed = true
    }
    if (!closed && !/^[ \t]/.test(rest))
      return Result.fail(decodeError("SyntaxError", `expected a space and a value after ${name}`, { line }))
    const parts = rest.trim().split(/[ \t]+/)
    if (parts.length > 2)
      return Result.fail(decodeError("SyntaxError", `unexpected text after the value of ${name}`, { line }))
    const value = parseValue(parts[0]!)
    if (value === undefined)
      return Result.fail(decodeError("SyntaxError", `invalid value '${parts[0]}' for ${name}`, { line }))
    if (parts[1] !== undefined && !/^-?\d+$/.test(parts[1]))
      return Result.fail(decodeError("SyntaxError", `invalid timestamp '${parts[1]}' for ${name}`, { line }))
    const type = familyType(declared, name)
    const bound =
      type === "summary" ? "quantile" : type !== undefined && HISTOGRAMS.has(type) ? "le" : undefined
    if (bound !== undefined && labels[bound] !== undefined && parseValue(labels[bound]) === undefined)
      return Result.fail(
        decodeError("SyntaxError", `expected a float as the value of the '${bound}' label of ${name}`, {
          line
        })
      )
    if (
      type !== undefined &&
      HISTOGRAMS.has(type) &&
      (name.endsWith("_bucket") || name.endsWith("_count")) &&
      value < 0
    )
      return Result.fail(
        decodeError(
          "SyntaxError",
          `negative ${name.endsWith("_bucket") ? "bucket population" : "count"} ${value} in histogram ${name}`,
          { line }
        )
      )
    const key = seriesKey(name, labels)
    const first = seen.get(key)
    if (first !== undefined)
      return Result.fail(
        decodeError("AmbiguousSeries", `ambiguous series: ${key} repeats the series of line ${first}`, {
          line
        })
      )
    seen.set(key, line)
    samples.push({ name, labels, value, line })
  }
  return Result.succeed({ samples, declared })
}
