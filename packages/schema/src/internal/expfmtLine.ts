/**
 * One sample line of the exposition format: `name{labels} value [timestamp] [# exemplar]`, the
 * name legacy (`[a-zA-Z_:][a-zA-Z0-9_:]*`) or, under Prometheus 3's UTF-8 scheme, quoted inside
 * the label set (`{"my.metric", "label.name"="v"}`); blanks between the name and `{`, and none
 * needed between `}` and the value, as the 0.0.4 grammar allows. Exemplars and float timestamps
 * only in OpenMetrics pages. Labels are kept as spans of the text (`Scratch`), so a line whose
 * sample is not kept builds no string but its name.
 */
import type { DecodeError } from "../DecodeError.js"
import {
  CLOSE,
  COMMA,
  CR,
  EQUALS,
  float,
  floatAt,
  HASH,
  LF,
  labelChar,
  labelStart,
  millisAt,
  nameChar,
  nameStart,
  OPEN,
  QUOTE,
  quotedAt,
  secondsAt,
  skipBlank,
  str,
  tokenEnd
} from "./expfmtTokens.js"

/** The parse error, thrown inside the parser and returned at its boundary (`parseExposition`). */
export class Fail {
  constructor(readonly error: DecodeError) {}
}

/**
 * The labels of the line being read, reused from line to line, as spans of the text: label `k`
 * (k < n) is named `t.slice(nameFrom[k], nameTo[k])` (or `nameText[k]` when it had escapes) with
 * the value `t.slice(valueFrom[k], valueTo[k])` (or `valueText[k]`).
 */
export interface Scratch {
  readonly nameFrom: Array<number>
  readonly nameTo: Array<number>
  readonly nameText: Array<string | undefined>
  readonly valueFrom: Array<number>
  readonly valueTo: Array<number>
  readonly valueText: Array<string | undefined>
  n: number
}

export const scratch = (): Scratch => ({
  nameFrom: [],
  nameTo: [],
  nameText: [],
  valueFrom: [],
  valueTo: [],
  valueText: [],
  n: 0
})

/** Label `k`'s name. */
export const labelName = (t: string, s: Scratch, k: number): string =>
  s.nameText[k] ?? t.slice(s.nameFrom[k], s.nameTo[k])
/** Label `k`'s value. */
export const labelValue = (t: string, s: Scratch, k: number): string =>
  s.valueText[k] ?? t.slice(s.valueFrom[k], s.valueTo[k])

/** The index of the label called `name` in `s`, or -1 (no string built). */
export const findLabel = (t: string, s: Scratch, name: string): number => {
  for (let k = 0; k < s.n; k++) {
    const own = s.nameText[k]
    if (
      own !== undefined
        ? own === name
        : s.nameTo[k]! - s.nameFrom[k]! === name.length && t.startsWith(name, s.nameFrom[k])
    )
      return k
  }
  return -1
}

/** Whether labels `a` and `b` of `s` have one name. */
const sameName = (t: string, s: Scratch, a: number, b: number): boolean => {
  const ta = s.nameText[a]
  const tb = s.nameText[b]
  if (ta !== undefined || tb !== undefined) return labelName(t, s, a) === labelName(t, s, b)
  const fa = s.nameFrom[a]!
  const fb = s.nameFrom[b]!
  const len = s.nameTo[a]! - fa
  if (len !== s.nameTo[b]! - fb) return false
  for (let k = 0; k < len; k++) if (t.charCodeAt(fa + k) !== t.charCodeAt(fb + k)) return false
  return true
}

/** The index after the line end at `i` (a line feed, or a carriage return and a line feed), or -1. */
export const lineEnd = (t: string, i: number): number => {
  const c = t.charCodeAt(i)
  if (c === LF) return i + 1
  if (c === CR && t.charCodeAt(i + 1) === LF) return i + 2
  return -1
}

/** What `readSample` read (one object, reused): the name, value, timestamp, and the line end. */
export const line = {
  name: "",
  value: 0,
  underflow: false,
  raw: "",
  timestamp: undefined as number | undefined,
  end: 0
}

/**
 * The label set after its `{` at `i` into `s`; a quoted name with no `=` is the metric name
 * (`line.name`, and the result is 1); the index after its `}` is in `line.end`.
 */
export const readLabelSet = (
  t: string,
  i: number,
  s: Scratch,
  fail: (m: string) => never,
  exemplar = false
): boolean => {
  let named = false
  for (;;) {
    i = skipBlank(t, i)
    let c = t.charCodeAt(i)
    if (c === CLOSE) {
      line.end = i + 1
      return named
    }
    let nameFrom: number
    let nameTo: number
    let nameText: string | undefined
    if (c === QUOTE) {
      const e = quotedAt(t, i + 1)
      if (e < 0) fail(`label name ${str.error}`)
      nameFrom = str.from
      nameTo = str.to
      nameText = str.escaped ? str.value : undefined
      i = skipBlank(t, e)
      c = t.charCodeAt(i)
      if (c !== EQUALS && !exemplar) {
        const q = nameText ?? t.slice(nameFrom, nameTo)
        if (c !== COMMA && c !== CLOSE) fail(`unexpected end of metric name "${q}"`)
        if (named) fail(`multiple metric names: "${line.name}" and "${q}"`)
        line.name = q
        named = true
        if (c === COMMA) i++
        continue
      }
    } else if (labelStart(c)) {
      nameFrom = i
      while (labelChar(t.charCodeAt(i))) i++
      nameTo = i
      i = skipBlank(t, i)
      c = t.charCodeAt(i)
    } else fail(`invalid label name at column ${i + 1}`)
    if (c !== EQUALS) fail(`expected '=' after label name ${nameText ?? t.slice(nameFrom, nameTo)}`)
    i = skipBlank(t, i + 1)
    if (t.charCodeAt(i) !== QUOTE)
      fail(`expected '"' at start of the value of label ${nameText ?? t.slice(nameFrom, nameTo)}`)
    const e = quotedAt(t, i + 1)
    if (e < 0) fail(`label value of ${nameText ?? t.slice(nameFrom, nameTo)}: ${str.error}`)
    const len = nameTo - nameFrom
    if (nameText === undefined ? len === 8 && t.startsWith("__name__", nameFrom) : nameText === "__name__")
      fail(`label name "__name__" is reserved (the metric name goes before the label set, or quoted in it)`)
    const k = s.n
    s.nameFrom[k] = nameFrom
    s.nameTo[k] = nameTo
    s.nameText[k] = nameText
    for (let j = 0; j < k; j++)
      if (sameName(t, s, j, k))
        fail(`label ${nameText ?? t.slice(nameFrom, nameTo)} repeated (duplicate label name)`)
    s.valueFrom[k] = str.from
    s.valueTo[k] = str.to
    s.valueText[k] = str.escaped ? str.value : undefined
    s.n++
    i = skipBlank(t, e)
    c = t.charCodeAt(i)
    if (c === COMMA) i++
    else if (c !== CLOSE)
      fail(`expected ',' or '}' after the value of label ${nameText ?? t.slice(nameFrom, nameTo)}`)
  }
}

/** An OpenMetrics exemplar from after its `#` at `i`: `{labels} value [timestamp]`; the index after it. */
const exemplarAt = (t: string, i: number, fail: (m: string) => never): number => {
  i = skipBlank(t, i)
  if (t.charCodeAt(i) !== OPEN) fail("expected '{' to open an exemplar's label set")
  readLabelSet(t, i + 1, scratch(), fail, true)
  i = skipBlank(t, line.end)
  const e = tokenEnd(t, i)
  if (e === i || !floatAt(t, i, e)) fail("expected a float as an exemplar's value")
  i = skipBlank(t, e)
  const c = t.charCodeAt(i)
  if (c !== LF && c !== CR && !Number.isNaN(c)) {
    const te = tokenEnd(t, i)
    if (secondsAt(t, i, te) === undefined) fail(`expected a float as an exemplar's timestamp`)
    i = skipBlank(t, te)
  }
  return i
}

/**
 * Read the sample line at `i` (its labels into `s`, the rest into `line`), up to its line end.
 * `recent` are the last names read: when this line's name is spelled as one of them, that string
 * is reused (no new string, and its cached hash serves the parser's maps).
 */
export const readSample = (
  t: string,
  i: number,
  om: boolean,
  s: Scratch,
  recent: ReadonlyArray<string>,
  fail: (m: string) => never
): void => {
  let c = t.charCodeAt(i)
  let named = false
  let blank = false
  if (nameStart(c)) {
    const from = i
    // the previous line's name, compared in the same pass that finds the name's end: most lines
    // repeat it (a histogram's buckets), so most names cost one scan, no string and no startsWith
    // (bench:expfmt, built: 1.13 -> 1.3 M lines/CPU-s on its gateway page)
    const prev = line.name
    const plen = prev.length
    let same = true
    for (let c = t.charCodeAt(i); nameChar(c); c = t.charCodeAt(++i))
      if (same && (i - from >= plen || prev.charCodeAt(i - from) !== c)) same = false
    const len = i - from
    let known: string | undefined = same && len === plen ? prev : undefined
    if (known === undefined)
      for (let r = 0; r < recent.length; r++) {
        const name = recent[r]!
        if (name.length === len && t.startsWith(name, from)) {
          known = name
          break
        }
      }
    line.name = known ?? t.slice(from, i)
    named = true
    const b = skipBlank(t, i)
    blank = b > i
    i = b
    c = t.charCodeAt(i)
  } else if (c !== OPEN) fail("invalid metric name")
  if (c === OPEN) {
    const outer = line.name
    if (readLabelSet(t, i + 1, s, fail)) {
      if (named) fail(`multiple metric names: ${outer} and "${line.name}"`)
      named = true
    }
    if (!named) fail("invalid metric name: a label set without one")
    i = skipBlank(t, line.end)
  } else if (!blank) fail(`invalid metric name: expected a space and a value after ${line.name}`)
  const metric = line.name
  const valueStart = i
  const ve = tokenEnd(t, i)
  if (ve === i) fail(`expected a float as the value of ${metric}`)
  if (!floatAt(t, i, ve)) fail(`expected a float as the value of ${metric}, got '${t.slice(i, ve)}'`)
  line.value = float.value
  line.underflow = float.underflow
  line.raw = float.underflow ? t.slice(valueStart, ve) : ""
  i = skipBlank(t, ve)
  c = t.charCodeAt(i)
  line.timestamp = undefined
  if (c !== LF && c !== CR && !Number.isNaN(c) && !(om && c === HASH)) {
    const e = tokenEnd(t, i)
    line.timestamp = om ? secondsAt(t, i, e) : millisAt(t, i, e)
    if (line.timestamp === undefined)
      fail(
        om
          ? `expected a float (seconds) as the timestamp of ${metric}`
          : `expected an integer (milliseconds) as the timestamp of ${metric}, got '${t.slice(i, e)}'`
      )
    i = skipBlank(t, e)
    c = t.charCodeAt(i)
  }
  if (om && c === HASH) {
    i = exemplarAt(t, i + 1, fail)
    c = t.charCodeAt(i)
  }
  if (c !== LF && c !== CR && !Number.isNaN(c))
    fail(`spurious text after the ${line.timestamp === undefined ? "value" : "timestamp"} of ${metric}`)
  line.name = metric
  line.end = i
}
