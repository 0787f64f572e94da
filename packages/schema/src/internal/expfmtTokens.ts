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
 * The last quoted string read by `quotedAt`: `from`/`to` the span of its raw text, `escaped`
 * whether it held an escape (then `value` is its decoded text; else read the span), `error`
 * why it is no string.
 */
export const str = { from: 0, to: 0, escaped: false, value: "", error: "" }

/**
 * Read the quoted string starting after its opening quote at `i` into `str` (escapes `\\`,
 * `\"`, `\n`); returns the index after its closing quote, or -1 (an unescaped line feed, another
 * escape, the text's end: `str.error` says which).
 */
export const quotedAt = (t: string, i: number): number => {
  const start = i
  str.from = i
  str.escaped = false
  let value = ""
  let from = i
  for (;;) {
    const c = t.charCodeAt(i)
    if (c === QUOTE) {
      str.to = i
      if (from !== start) {
        str.escaped = true
        str.value = value + t.slice(from, i)
      }
      return i + 1
    }
    if (c === LF || Number.isNaN(c)) {
      str.error = `"${value + t.slice(from, i)}" contains an unescaped new-line`
      return -1
    }
    if (c === BACKSLASH) {
      const n = t.charCodeAt(i + 1)
      value += t.slice(from, i)
      if (n === 110) value += "\n"
      else if (n === BACKSLASH) value += "\\"
      else if (n === QUOTE) value += '"'
      else {
        str.error = `invalid escape sequence \\${Number.isNaN(n) ? "" : String.fromCharCode(n)}`
        return -1
      }
      i += 2
      from = i
      continue
    }
    i++
  }
}

/** The text of the last string `quotedAt` read. */
export const strValue = (t: string): string => (str.escaped ? str.value : t.slice(str.from, str.to))

const digit = (c: number): boolean => c >= 48 && c <= 57

/**
 * Whether `[i, end)` is exactly a decimal float `[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?`: -1
 * when not, else 1 when its mantissa has a non-zero digit (so a 0 result is an underflow), 0 when not.
 */
const decimal = (t: string, i: number, end: number): number => {
  let c = t.charCodeAt(i)
  if (c === 43 || c === 45) c = t.charCodeAt(++i)
  let digits = 0
  let nonZero = 0
  while (digit(c)) {
    if (c !== 48) nonZero = 1
    digits++
    c = t.charCodeAt(++i)
  }
  if (c === 46) {
    c = t.charCodeAt(++i)
    while (digit(c)) {
      if (c !== 48) nonZero = 1
      digits++
      c = t.charCodeAt(++i)
    }
  }
  if (digits === 0) return -1
  if (c === 101 || c === 69) {
    c = t.charCodeAt(++i)
    if (c === 43 || c === 45) c = t.charCodeAt(++i)
    if (!digit(c)) return -1
    while (digit(c)) c = t.charCodeAt(++i)
  }
  return i === end ? nonZero : -1
}

const SPECIAL: ReadonlyMap<string, number> = new Map([
  ["nan", Number.NaN],
  ["inf", Number.POSITIVE_INFINITY],
  ["+inf", Number.POSITIVE_INFINITY],
  ["-inf", Number.NEGATIVE_INFINITY],
  ["infinity", Number.POSITIVE_INFINITY],
  ["+infinity", Number.POSITIVE_INFINITY],
  ["-infinity", Number.NEGATIVE_INFINITY]
])

/**
 * The last float read by `floatAt` (one per line, so no object per line): `ok` false when the
 * token is no float (or beyond ±1.8e308), `underflow` when a non-zero decimal rounded to 0.
 */
export const float = { value: 0, ok: false, underflow: false }

const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15]

/**
 * The fast path of `floatAt`: `[i, end)` is `-?\d+(\.\d+)?` with at most 15 digits, read without
 * a string: the digits make an exact integer m < 2^53 and m / 10^k is one correctly rounded
 * division, so the result is the nearest double, as `Number` gives (Clinger's fast path).
 */
const plainAt = (t: string, i: number, end: number): boolean => {
  let j = i
  const negative = t.charCodeAt(j) === 45
  if (negative) j++
  let m = 0
  let digits = 0
  let frac = -1
  for (; j < end; j++) {
    const c = t.charCodeAt(j)
    if (c >= 48 && c <= 57) {
      m = m * 10 + (c - 48)
      digits++
    } else if (c === 46 && frac < 0 && digits > 0) frac = digits
    else return false
  }
  if (digits === 0 || digits > 15 || frac === digits) return false
  const v = frac < 0 ? m : m / POW10[digits - frac]!
  float.value = negative ? -v : v
  float.ok = true
  return true
}

/** Read the float spanning `[i, end)` of `t` into `float`; returns `float.ok`. */
export const floatAt = (t: string, i: number, end: number): boolean => {
  float.underflow = false
  if (plainAt(t, i, end)) return true
  const d = decimal(t, i, end)
  if (d >= 0) {
    const value = Number(t.slice(i, end))
    float.value = value
    float.ok = Number.isFinite(value)
    float.underflow = value === 0 && d === 1
    return float.ok
  }
  const s = end - i > 9 ? undefined : SPECIAL.get(t.slice(i, end).toLowerCase())
  float.ok = s !== undefined
  float.value = s ?? 0
  return float.ok
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
  if (decimal(t, i, end) < 0) return undefined
  const s = Number(t.slice(i, end))
  return Number.isFinite(s) ? s : undefined
}
