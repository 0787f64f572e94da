/**
 * The tokens of the Prometheus text exposition format (0.0.4 and OpenMetrics 1.0), read from a
 * string at an index without building intermediate strings: metric and label names (legacy and
 * Prometheus 3 quoted UTF-8), quoted strings with their escapes, floats, timestamps.
 *
 * Grammar as specified by the exposition format docs and prometheus/common `expfmt/text_parse.go`
 * (read at d2417e2cbb82c4c81e4d28d55f354058169a9f08; its test table is ported in
 * test/expfmt/): floats are Go `strconv.ParseFloat` decimals (no hex, no `_`), `Inf`/`NaN` in any
 * case; a value that overflows a float64 is an error, one that underflows to 0 is read as 0 (the
 * parsers here report it).
 */

export const TAB = 9
export const LF = 10
export const CR = 13
export const SPACE = 32
export const QUOTE = 34
export const HASH = 35
export const COMMA = 44
export const EQUALS = 61
export const BACKSLASH = 92
export const OPEN = 123
export const CLOSE = 125

/** Whether `c` may start a legacy metric name (`[a-zA-Z_:]`). */
export const nameStart = (c: number): boolean =>
  (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 58
/** Whether `c` may continue a legacy metric name (`[a-zA-Z0-9_:]`). */
export const nameChar = (c: number): boolean => nameStart(c) || (c >= 48 && c <= 57)
/** Whether `c` may start a legacy label name (`[a-zA-Z_]`). */
export const labelStart = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95
/** Whether `c` may continue a legacy label name (`[a-zA-Z0-9_]`). */
export const labelChar = (c: number): boolean => labelStart(c) || (c >= 48 && c <= 57)

/** The index after the blanks and tabs from `i`. */
export const skipBlank = (t: string, i: number): number => {
  for (;;) {
    const c = t.charCodeAt(i)
    if (c !== SPACE && c !== TAB) return i
    i++
  }
}

/** The index after the token from `i` (up to a blank, a tab, a line end or the text's end). */
export const tokenEnd = (t: string, i: number): number => {
  for (;;) {
    const c = t.charCodeAt(i)
    if (c === SPACE || c === TAB || c === LF || c === CR || Number.isNaN(c)) return i
    i++
  }
}

/**
 * A quoted string starting after its opening quote at `i`: its value (escapes `\\`, `\"`, `\n`
 * decoded) and the index after the closing quote, or the reason it is no string (an unescaped
 * line feed, another escape, the text's end).
 */
export const quoted = (
  t: string,
  i: number
): { readonly value: string; readonly end: number } | { readonly error: string } => {
  const start = i
  let value = ""
  let from = i
  for (;;) {
    const c = t.charCodeAt(i)
    if (c === QUOTE)
      return { value: from === start ? t.slice(start, i) : value + t.slice(from, i), end: i + 1 }
    if (c === LF || Number.isNaN(c))
      return { error: `"${value + t.slice(from, i)}" contains an unescaped new-line` }
    if (c === BACKSLASH) {
      const n = t.charCodeAt(i + 1)
      value += t.slice(from, i)
      if (n === 110) value += "\n"
      else if (n === BACKSLASH) value += "\\"
      else if (n === QUOTE) value += '"'
      else return { error: `invalid escape sequence \\${Number.isNaN(n) ? "" : String.fromCharCode(n)}` }
      i += 2
      from = i
      continue
    }
    i++
  }
}

const digit = (c: number): boolean => c >= 48 && c <= 57

/**
 * The end of a decimal float `[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?` spanning exactly
 * `[i, end)`, and whether its mantissa has a non-zero digit (so a 0 result is an underflow).
 */
const decimal = (t: string, i: number, end: number): { readonly ok: boolean; readonly nonZero: boolean } => {
  let c = t.charCodeAt(i)
  if (c === 43 || c === 45) c = t.charCodeAt(++i)
  let digits = 0
  let nonZero = false
  while (digit(c)) {
    if (c !== 48) nonZero = true
    digits++
    c = t.charCodeAt(++i)
  }
  if (c === 46) {
    c = t.charCodeAt(++i)
    while (digit(c)) {
      if (c !== 48) nonZero = true
      digits++
      c = t.charCodeAt(++i)
    }
  }
  if (digits === 0) return { ok: false, nonZero }
  if (c === 101 || c === 69) {
    c = t.charCodeAt(++i)
    if (c === 43 || c === 45) c = t.charCodeAt(++i)
    if (!digit(c)) return { ok: false, nonZero }
    while (digit(c)) c = t.charCodeAt(++i)
  }
  return { ok: i === end, nonZero }
}

/** What a value token reads as: a number (`underflow` when a non-zero decimal rounds to 0), or none. */
export type FloatToken = { readonly value: number; readonly underflow: boolean } | undefined

const SPECIAL: ReadonlyMap<string, number> = new Map([
  ["nan", Number.NaN],
  ["inf", Number.POSITIVE_INFINITY],
  ["+inf", Number.POSITIVE_INFINITY],
  ["-inf", Number.NEGATIVE_INFINITY],
  ["infinity", Number.POSITIVE_INFINITY],
  ["+infinity", Number.POSITIVE_INFINITY],
  ["-infinity", Number.NEGATIVE_INFINITY]
])

/** The float spanning `[i, end)` of `t`, or `undefined` (not a float, or beyond ±1.8e308). */
export const floatAt = (t: string, i: number, end: number): FloatToken => {
  const d = decimal(t, i, end)
  if (d.ok) {
    const value = Number(t.slice(i, end))
    if (!Number.isFinite(value)) return undefined
    return { value, underflow: value === 0 && d.nonZero }
  }
  if (end - i > 9) return undefined
  const s = SPECIAL.get(t.slice(i, end).toLowerCase())
  return s === undefined ? undefined : { value: s, underflow: false }
}

/** A 0.0.4 timestamp (integer milliseconds within int64) spanning `[i, end)`, in seconds. */
export const millisAt = (t: string, i: number, end: number): number | undefined => {
  let j = i
  let c = t.charCodeAt(j)
  if (c === 43 || c === 45) c = t.charCodeAt(++j)
  if (j === end) return undefined
  for (; j < end; j++) if (!digit(t.charCodeAt(j))) return undefined
  const ms = Number(t.slice(i, end))
  return Math.abs(ms) > 9.223372036854776e18 ? undefined : ms / 1000
}

/** An OpenMetrics timestamp (float seconds) spanning `[i, end)`. */
export const secondsAt = (t: string, i: number, end: number): number | undefined => {
  const d = decimal(t, i, end)
  if (!d.ok) return undefined
  const s = Number(t.slice(i, end))
  return Number.isFinite(s) ? s : undefined
}
