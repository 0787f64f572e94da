/**
 * What the exposition parser (`expfmtParse.ts`) needs around its lines: the page's form
 * (OpenMetrics when it has a `# EOF` line), UTF-8 bytes to text, series keys, and the mark of a
 * repeated declaration (where `scrapes.ts` looks for a second scrape).
 */
import * as Result from "effect/Result"
import { type DecodeError, decodeError } from "../DecodeError.js"
import { CR, LF, skipBlank } from "./expfmtTokens.js"
import type { ExpositionNote, Family } from "./expfmtTypes.js"

export const repeats = new WeakSet<DecodeError>()

/** Whether `e` is the parser's error for a second `# HELP` / `# TYPE` of one family (a new scrape?). */
export const isRepeatedDeclaration = (e: DecodeError): boolean => repeats.has(e)

/** Whether `t` has an OpenMetrics `# EOF` line (a line of just that, blanks aside). */
export const hasEof = (t: string): boolean => {
  for (let at = t.indexOf("# EOF"); at >= 0; at = t.indexOf("# EOF", at + 1)) {
    let b = at - 1
    while (b >= 0 && (t.charCodeAt(b) === 32 || t.charCodeAt(b) === 9)) b--
    if (b >= 0 && t.charCodeAt(b) !== LF) continue
    const e = skipBlank(t, at + 5)
    const c = t.charCodeAt(e)
    if (Number.isNaN(c) || c === LF || (c === CR && t.charCodeAt(e + 1) === LF)) return true
  }
  return false
}

/** The canonical key of a series: name + sorted label pairs. */
export const seriesKey = (name: string, labels: Readonly<Record<string, string>>): string =>
  `${name}{${Object.keys(labels)
    .sort()
    .map((k) => `${k}=${JSON.stringify(labels[k])}`)
    .join(",")}}`

const utf8 = new TextDecoder("utf-8", { fatal: true })

/** `bytes` as UTF-8 text, or a `SyntaxError` on the first line that is not valid UTF-8. */
export const decodeUtf8 = (bytes: Uint8Array): Result.Result<string, DecodeError> => {
  try {
    return Result.succeed(utf8.decode(bytes))
  } catch {
    let line = 1
    let from = 0
    for (let k = 0; k <= bytes.length; k++) {
      if (k < bytes.length && bytes[k] !== LF) continue
      try {
        utf8.decode(bytes.subarray(from, k))
      } catch {
        break
      }
      line++
      from = k + 1
    }
    return Result.fail(decodeError("SyntaxError", `invalid UTF-8 on line ${line}`, { line }))
  }
}

const HISTOGRAMS = new Set(["histogram", "gaugehistogram", "gauge_histogram"])
const PARTS = ["_bucket", "_count", "_sum", "_gcount", "_gsum"]

/** What the parser checks and does for the samples of one metric name. */
export interface NameInfo {
  readonly keep: boolean
  /** The label that must hold a float: a summary's `quantile`, a histogram's `le`. */
  readonly bound: "le" | "quantile" | undefined
  /** A histogram's bucket populations and counts, never negative. */
  readonly nonNegative: boolean
}

/** The `NameInfo` of `name`: its family's declared type (a histogram's `_bucket`, ...), and `keep`. */
export const nameInfoOf = (
  name: string,
  declared: ReadonlyMap<string, Family>,
  keep: ((name: string) => boolean) | undefined
): NameInfo => {
  let type = declared.get(name)?.type
  let part = ""
  if (type === undefined)
    for (const p of PARTS) {
      if (!name.endsWith(p)) continue
      const base = declared.get(name.slice(0, -p.length))?.type
      if (base !== undefined && (HISTOGRAMS.has(base) || base === "summary")) {
        type = base
        part = p
        break
      }
    }
  const histogram = type !== undefined && HISTOGRAMS.has(type)
  return {
    keep: keep === undefined || keep(name),
    bound: type === "summary" ? "quantile" : histogram ? "le" : undefined,
    nonNegative: histogram && (part === "_bucket" || part === "_count" || part === "_gcount")
  }
}

/** The note for the non-blank lines after a `# EOF` (from `end` on line `line`), if any. */
export const afterEofNote = (t: string, end: number, line: number): ExpositionNote | undefined => {
  const rest = t.slice(end).split("\n")
  let first = 0
  let lines = 0
  for (let k = 1; k < rest.length; k++) {
    if (rest[k]!.trim() === "") continue
    if (first === 0) first = line + k
    lines++
  }
  return lines > 0 ? { kind: "after-eof", line: first, lines } : undefined
}
