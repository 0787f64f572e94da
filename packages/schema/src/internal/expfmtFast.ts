/**
 * The fast path of one sample line: the form nearly every line of an engine's or a gateway's page
 * has, `name{a="x",b="y"} value\n` (or `name value\n`): legacy names, no blanks inside the label
 * set, no escape in a label value, one space before the value, no timestamp. It reads such a line
 * into the same `Scratch` and `line` as `readSample` (expfmtLine.ts), with `indexOf` for the line
 * end and each label value's closing quote, and says `false` at the first thing outside that form
 * (having set nothing the caller keeps): the caller then reads the line with `readSample`, which
 * accepts the rest of the grammar and names what is wrong. So the fast path accepts only lines
 * `readSample` accepts, and reads them as it does.
 */
import { line, type Scratch } from "./expfmtLine.js"
import { float, floatAt, labelChar, labelStart, nameChar, nameStart } from "./expfmtTokens.js"

/**
 * What the fast path carries from line to line: where the next backslash of the text is at or
 * after the reader (`at`; the text's length: none), and the name it read last (a legacy one).
 */
export interface FastState {
  at: number
  name: string
}

/** The fast path's state for a parse of `t`. */
export const fastState = (t: string): FastState => {
  const at = t.indexOf("\\")
  return { at: at < 0 ? t.length : at, name: "" }
}

/** Whether the span `[a, q)` holds no backslash (moving `bs` on past `a` when it lags behind). */
const noBackslash = (t: string, bs: FastState, a: number, q: number): boolean => {
  if (bs.at >= q) return true
  if (bs.at >= a) return false
  const at = t.indexOf("\\", a)
  bs.at = at < 0 ? t.length : at
  return bs.at >= q
}

/** 1 for the characters that may continue a legacy metric name (`[a-zA-Z0-9_:]`). */
const NAME = new Uint8Array(128)
for (let c = 0; c < 128; c++) NAME[c] = nameChar(c) ? 1 : 0

/** Whether labels `a` and `b` (legacy names, spans of `t`) have one name. */
const sameSpan = (t: string, s: Scratch, a: number, b: number): boolean => {
  const fa = s.nameFrom[a]!
  const fb = s.nameFrom[b]!
  const len = s.nameTo[a]! - fa
  if (len !== s.nameTo[b]! - fb) return false
  for (let k = 0; k < len; k++) if (t.charCodeAt(fa + k) !== t.charCodeAt(fb + k)) return false
  return true
}

/**
 * Read the sample line at `i` when it has the common form (see the module's docstring) into `s`
 * (its `n` 0 on entry) and `line`, as `readSample` would; `false` when it has not (then `line` is
 * as it was and `s.n` must be reset). `recent` are the last names read (their strings reused).
 */
export const fastSample = (
  t: string,
  i: number,
  s: Scratch,
  recent: ReadonlyArray<string>,
  bs: FastState
): boolean => {
  const nl = t.indexOf("\n", i)
  if (nl < 0) return false
  const from = i
  // the name: most lines repeat the previous line's (a histogram's buckets), so the last name
  // read here (a legacy one) is tried first, with one native comparison, then the recent ones
  const prev = bs.name
  const plen = prev.length
  let c = t.charCodeAt(i)
  if (!nameStart(c)) return false
  let name: string | undefined
  if (plen > 0 && t.startsWith(prev, i) && !nameChar(t.charCodeAt(i + plen))) {
    name = prev
    i += plen
  } else {
    for (c = t.charCodeAt(++i); c < 128 && NAME[c] === 1; c = t.charCodeAt(++i));
    const len = i - from
    for (let r = 0; r < recent.length; r++) {
      const known = recent[r]!
      if (known.length === len && t.startsWith(known, from)) {
        name = known
        break
      }
    }
  }
  const nameEnd = i
  c = t.charCodeAt(i)
  if (c === 123) {
    // the label set: name="value" pairs, a comma between them, up to its `}`
    c = t.charCodeAt(++i)
    for (;;) {
      if (!labelStart(c)) return false
      const nameFrom = i
      for (c = t.charCodeAt(++i); labelChar(c); c = t.charCodeAt(++i));
      const nameTo = i
      if (c !== 61 || t.charCodeAt(i + 1) !== 34) return false
      if (nameTo - nameFrom === 8 && t.startsWith("__name__", nameFrom)) return false
      const a = i + 2
      const q = t.indexOf('"', a)
      if (q < 0 || q > nl || !noBackslash(t, bs, a, q)) return false
      const k = s.n
      s.nameFrom[k] = nameFrom
      s.nameTo[k] = nameTo
      s.nameText[k] = undefined
      for (let j = 0; j < k; j++) if (sameSpan(t, s, j, k)) return false
      s.valueFrom[k] = a
      s.valueTo[k] = q
      s.valueText[k] = undefined
      s.n = k + 1
      i = q + 1
      c = t.charCodeAt(i)
      if (c === 125) break
      if (c !== 44) return false
      c = t.charCodeAt(++i)
    }
    c = t.charCodeAt(++i)
  }
  if (c !== 32) return false
  i++
  // the value: up to the line feed, with no blank, carriage return or timestamp before it
  let m = 0
  let j = i
  for (c = t.charCodeAt(j); c >= 48 && c <= 57 && j - i < 15; c = t.charCodeAt(++j)) m = m * 10 + (c - 48)
  if (j === nl && j > i) {
    line.value = m
    line.underflow = false
    line.raw = ""
  } else {
    for (j = i; j < nl; j++) {
      c = t.charCodeAt(j)
      if (c === 32 || c === 9 || c === 13) return false
    }
    if (j === i || !floatAt(t, i, j)) return false
    line.value = float.value
    line.underflow = float.underflow
    line.raw = float.underflow ? t.slice(i, j) : ""
  }
  line.name = name ?? t.slice(from, nameEnd)
  bs.name = line.name
  line.timestamp = undefined
  line.end = nl
  return true
}
