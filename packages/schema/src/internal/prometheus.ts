/**
 * The Prometheus text exposition format: the parser (`expfmtParse.ts`, one pass, rules of
 * prometheus/common's `expfmt` and OpenMetrics 1.0) and the checks the decoders run around it.
 *
 * Why not a library: the one JavaScript parser on the registry, `parse-prometheus-text-format`
 * (npm 1.1.1, last published 2024-12), evaluated on the payloads and rules of issue 2, keeps the
 * last of two samples with the same label set (silent last-writer-wins), accepts `hello world` as
 * a metric `hello` with value "world", accepts `foo 1 2 3 4`, and reports errors without a line
 * number; it knows neither quoted UTF-8 names nor OpenMetrics.
 */

import * as Result from "effect/Result"
import { type DecodeError, decodeError } from "../DecodeError.js"
import { Fail } from "./expfmtLine.js"
import { decodeUtf8 } from "./expfmtPage.js"
import { Parser } from "./expfmtParse.js"
import type { Exposition, ParseOptions } from "./expfmtTypes.js"

export { isRepeatedDeclaration, seriesKey } from "./expfmtPage.js"
export type {
  Exposition,
  ExpositionNote,
  Family,
  OtherSeries,
  ParseOptions,
  Sample
} from "./expfmtTypes.js"

/**
 * Whether `t` (trimmed at its start) opens a JSON document: `[`, or `{` not followed by a quoted
 * name that a `,`, `}` or `=` closes (Prometheus 3's `{"my.metric", ...} 1` is an exposition).
 */
export const looksLikeJson = (t: string): boolean =>
  t.startsWith("[") || (t.startsWith("{") && !/^\{[ \t]*"(?:[^"\\\n]|\\.)*"[ \t]*[,}=]/.test(t))

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
  // indexOf, not a regular expression: one native scan of a page with no carriage return
  let at = text.indexOf("\r")
  while (at >= 0 && text.charCodeAt(at + 1) === 10) at = text.indexOf("\r", at + 2)
  if (at < 0) return undefined
  let line = 1
  for (let i = text.indexOf("\n"); i >= 0 && i < at; i = text.indexOf("\n", i + 1)) line++
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
  if (looksLikeJson(t))
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
  e.samples.length === 0 && e.others.size === 0 && e.declared.size === 0
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
 * Parse exposition text (or its UTF-8 bytes, where invalid UTF-8 is an error on its line).
 * Errors (a `DecodeError` with the 1-based line): a line that is not a comment, blank, or a
 * sample; an unknown `# TYPE`; a second `# HELP` / `# TYPE` of a family, or its `# TYPE` after
 * its samples; the same kept series twice (`AmbiguousSeries`, naming both lines); a last line with
 * no line feed after it.
 */
export const parseExposition = (
  input: string | Uint8Array,
  options: ParseOptions = {}
): Result.Result<Exposition, DecodeError> => {
  let text: string
  if (typeof input === "string") text = input
  else {
    const d = decodeUtf8(input)
    if (Result.isFailure(d)) return Result.fail(d.failure)
    text = d.success
  }
  const p = new Parser(text, options)
  try {
    p.run()
  } catch (e) {
    if (e instanceof Fail) return Result.fail(e.error)
    throw e
  }
  return Result.succeed({
    samples: p.samples,
    declared: p.declared,
    others: p.others,
    notes: p.notes,
    openMetrics: p.om
  })
}
