/**
 * One sample line of the exposition format: `name{labels} value [timestamp] [# exemplar]`, the
 * name legacy (`[a-zA-Z_:][a-zA-Z0-9_:]*`) or, under Prometheus 3's UTF-8 scheme, quoted inside
 * the label set (`{"my.metric", "label.name"="v"}`); blanks between the name and `{`, and none
 * needed between `}` and the value, as the 0.0.4 grammar allows. Exemplars and float timestamps
 * only in OpenMetrics pages.
 */
import type { DecodeError } from "../DecodeError.js"
import {
  CLOSE,
  COMMA,
  CR,
  EQUALS,
  type FloatToken,
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
  quoted,
  secondsAt,
  skipBlank,
  tokenEnd
} from "./expfmtTokens.js"

/** The parse error, thrown inside the parser and returned at its boundary (`parseExposition`). */
export class Fail {
  constructor(readonly error: DecodeError) {}
}

/** The labels of the line being read, reused from line to line: `names[0..n)`, `values[0..n)`. */
export interface Scratch {
  readonly names: Array<string>
  readonly values: Array<string>
  n: number
}

/** The index after the line end at `i` (a line feed, or a carriage return and a line feed), or -1. */
export const lineEnd = (t: string, i: number): number => {
  const c = t.charCodeAt(i)
  if (c === LF) return i + 1
  if (c === CR && t.charCodeAt(i + 1) === LF) return i + 2
  return -1
}

/**
 * The label set after its `{` at `i` into `s` (a quoted name with no `=` is the metric name,
 * returned in `name`), and the index after its `}`.
 */
export const readLabelSet = (
  t: string,
  i: number,
  s: Scratch,
  fail: (m: string) => never,
  exemplar = false
): { readonly end: number; readonly name: string | undefined } => {
  let name: string | undefined
  for (;;) {
    i = skipBlank(t, i)
    let c = t.charCodeAt(i)
    if (c === CLOSE) return { end: i + 1, name }
    let key: string
    if (c === QUOTE) {
      const q = quoted(t, i + 1)
      if ("error" in q) fail(`label name ${q.error}`)
      i = skipBlank(t, q.end)
      c = t.charCodeAt(i)
      if (c !== EQUALS && !exemplar) {
        if (c !== COMMA && c !== CLOSE) fail(`unexpected end of metric name "${q.value}"`)
        if (name !== undefined) fail(`multiple metric names: "${name}" and "${q.value}"`)
        name = q.value
        if (c === COMMA) i++
        continue
      }
      key = q.value
    } else if (labelStart(c)) {
      const from = i
      while (labelChar(t.charCodeAt(i))) i++
      key = t.slice(from, i)
      i = skipBlank(t, i)
      c = t.charCodeAt(i)
    } else fail(`invalid label name at column ${i + 1}`)
    if (c !== EQUALS) fail(`expected '=' after label name ${key}`)
    i = skipBlank(t, i + 1)
    if (t.charCodeAt(i) !== QUOTE) fail(`expected '"' at start of the value of label ${key}`)
    const v = quoted(t, i + 1)
    if ("error" in v) fail(`label value of ${key}: ${v.error}`)
    if (key === "__name__")
      fail(`label name "__name__" is reserved (the metric name goes before the label set, or quoted in it)`)
    for (let k = 0; k < s.n; k++) if (s.names[k] === key) fail(`label ${key} repeated (duplicate label name)`)
    s.names[s.n] = key
    s.values[s.n] = v.value
    s.n++
    i = skipBlank(t, v.end)
    c = t.charCodeAt(i)
    if (c === COMMA) i++
    else if (c !== CLOSE) fail(`expected ',' or '}' after the value of label ${key}`)
  }
}

/** A value token at `i`, or the error naming `name`. */
const valueAt = (
  t: string,
  i: number,
  name: string,
  fail: (m: string) => never
): { readonly value: FloatToken & object; readonly end: number } => {
  const e = tokenEnd(t, i)
  if (e === i) fail(`expected a float as the value of ${name}`)
  const f = floatAt(t, i, e)
  if (f === undefined) fail(`expected a float as the value of ${name}, got '${t.slice(i, e)}'`)
  return { value: f, end: e }
}

/** An OpenMetrics exemplar from after its `#` at `i`: `{labels} value [timestamp]`; the index after it. */
const exemplarAt = (t: string, i: number, fail: (m: string) => never): number => {
  i = skipBlank(t, i)
  if (t.charCodeAt(i) !== OPEN) fail("expected '{' to open an exemplar's label set")
  const r = readLabelSet(t, i + 1, { names: [], values: [], n: 0 }, fail, true)
  i = skipBlank(t, r.end)
  const v = valueAt(t, i, "an exemplar", fail)
  i = skipBlank(t, v.end)
  const c = t.charCodeAt(i)
  if (c !== LF && c !== CR && !Number.isNaN(c)) {
    const e = tokenEnd(t, i)
    if (secondsAt(t, i, e) === undefined) fail(`expected a float as an exemplar's timestamp`)
    i = skipBlank(t, e)
  }
  return i
}

export interface SampleLine {
  readonly name: string
  readonly value: { readonly value: number; readonly underflow: boolean; readonly raw?: string }
  readonly timestamp: number | undefined
  /** The index of the line end (not consumed). */
  readonly end: number
}

/** The sample line at `i` (its labels in `s`), up to its line end. */
export const readSample = (
  t: string,
  i: number,
  om: boolean,
  s: Scratch,
  fail: (m: string) => never
): SampleLine => {
  let name: string | undefined
  let c = t.charCodeAt(i)
  let blank = false
  if (nameStart(c)) {
    const from = i
    while (nameChar(t.charCodeAt(i))) i++
    name = t.slice(from, i)
    const b = skipBlank(t, i)
    blank = b > i
    i = b
    c = t.charCodeAt(i)
  } else if (c !== OPEN) fail("invalid metric name")
  if (c === OPEN) {
    const r = readLabelSet(t, i + 1, s, fail)
    if (r.name !== undefined) {
      if (name !== undefined) fail(`multiple metric names: ${name} and "${r.name}"`)
      name = r.name
    }
    if (name === undefined) fail("invalid metric name: a label set without one")
    i = skipBlank(t, r.end)
  } else if (!blank) fail(`invalid metric name: expected a space and a value after ${name}`)
  const metric = name as string
  const valueStart = i
  const v = valueAt(t, i, metric, fail)
  i = skipBlank(t, v.end)
  c = t.charCodeAt(i)
  let timestamp: number | undefined
  if (c !== LF && c !== CR && !Number.isNaN(c) && !(om && c === HASH)) {
    const e = tokenEnd(t, i)
    timestamp = om ? secondsAt(t, i, e) : millisAt(t, i, e)
    if (timestamp === undefined)
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
    fail(`spurious text after the ${timestamp === undefined ? "value" : "timestamp"} of ${metric}`)
  const value = v.value.underflow ? { ...v.value, raw: t.slice(valueStart, v.end) } : v.value
  return { name: metric, value, timestamp, end: i }
}
