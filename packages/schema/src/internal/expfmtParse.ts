/**
 * The exposition parser: one pass over the text, no line split, no regular expression per line.
 * It materialises only the samples a caller keeps (the modelled series: `ParseOptions.keep`) and
 * counts the rest by name, so its memory is bounded by the kept series and the distinct names,
 * not the page. Rules: prometheus/common `expfmt/text_parse.go` (UTF-8 scheme, read at
 * d2417e2cbb82c4c81e4d28d55f354058169a9f08; its test table agrees case for case, see
 * test/expfmtTable.test.ts) and OpenMetrics 1.0 for pages with a `# EOF` line (float timestamps,
 * exemplars, `gaugehistogram` / `stateset` / `info` / `unknown`; `# EOF` ends the page).
 */
import * as Result from "effect/Result"
import { type DecodeError, decodeError } from "../DecodeError.js"
import { readDeclaration } from "./expfmtComment.js"
import { Fail, lineEnd, readSample, type Scratch } from "./expfmtLine.js"
import { CR, floatAt, HASH, LF, skipBlank, tokenEnd } from "./expfmtTokens.js"
import type { Exposition, ExpositionNote, Family, OtherSeries, ParseOptions, Sample } from "./expfmtTypes.js"

const HISTOGRAMS = new Set(["histogram", "gaugehistogram", "gauge_histogram"])
const PARTS = ["_bucket", "_count", "_sum", "_gcount", "_gsum"]

interface NameInfo {
  readonly keep: boolean
  readonly bound: "le" | "quantile" | undefined
  readonly nonNegative: boolean
}

const repeats = new WeakSet<DecodeError>()

/** Whether `e` is the parser's error for a second `# HELP` / `# TYPE` of one family (a new scrape?). */
export const isRepeatedDeclaration = (e: DecodeError): boolean => repeats.has(e)

/** Whether `t` has an OpenMetrics `# EOF` line (a line of just that, blanks aside). */
const hasEof = (t: string): boolean => {
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

class Parser {
  i = 0
  line = 1
  readonly samples: Array<Sample> = []
  readonly declared = new Map<string, Family>()
  readonly others = new Map<string, OtherSeries>()
  readonly notes: Array<ExpositionNote> = []
  private readonly seen = new Map<string, number>()
  private readonly sampled = new Set<string>()
  private info = new Map<string, NameInfo>()
  private readonly scratch: Scratch = { names: [], values: [], n: 0 }
  readonly om: boolean
  constructor(
    readonly t: string,
    private readonly options: ParseOptions
  ) {
    this.om = hasEof(t)
  }

  fail(message: string, tag: DecodeError["_tag"] = "SyntaxError"): never {
    throw new Fail(decodeError(tag, message, { line: this.line }))
  }

  run(): void {
    const t = this.t
    for (;;) {
      const i = skipBlank(t, this.i)
      const c = t.charCodeAt(i)
      if (Number.isNaN(c)) return
      if (c === LF || (c === CR && t.charCodeAt(i + 1) === LF)) {
        this.i = i + (c === LF ? 1 : 2)
        this.line++
      } else if (c === HASH) {
        if (this.comment(i + 1)) return
      } else this.sample(i)
    }
  }

  /** A comment line from after its `#`; `true` when it is `# EOF` (the page ends). */
  private comment(from: number): boolean {
    const t = this.t
    const j = skipBlank(t, from)
    const te = tokenEnd(t, j)
    const len = te - j
    if (len === 4 && (t.startsWith("HELP", j) || t.startsWith("TYPE", j))) {
      const d = readDeclaration(t, te, (m) => this.fail(m))
      // `# HELP` / `# TYPE` with no name, or a name and nothing after it: a plain comment
      if (d !== undefined) {
        this.declare(d.kind, d.name, d.text)
        this.next(d.end)
        return false
      }
    }
    if (this.om && len === 3 && t.startsWith("EOF", j)) {
      const end = skipBlank(t, te)
      if (lineEnd(t, end) !== -1 || Number.isNaN(t.charCodeAt(end))) {
        this.afterEof(end)
        return true
      }
    }
    // a plain comment: up to its line feed (the text may end inside it)
    const nl = t.indexOf("\n", j)
    if (nl < 0) this.i = t.length
    else {
      this.i = nl + 1
      this.line++
    }
    return false
  }

  private declare(kind: "HELP" | "TYPE", name: string, text: string): void {
    const prev = this.declared.get(name)
    if (kind === "HELP") {
      if (prev?.help !== undefined) this.repeat(`second HELP line for metric name ${name}`)
      this.declared.set(name, { ...(prev ?? { name, line: this.line }), help: text })
      return
    }
    if (prev?.type !== undefined || this.sampled.has(name))
      this.repeat(`second TYPE line for metric name ${name}, or TYPE reported after samples`)
    this.declared.set(name, { ...(prev ?? { name, line: this.line }), type: text })
    this.info = new Map()
  }

  private repeat(message: string): never {
    const e = decodeError("SyntaxError", message, { line: this.line })
    repeats.add(e)
    throw new Fail(e)
  }

  /** The lines after `# EOF` (from `end`, on its line) are not read: count the non-blank ones. */
  private afterEof(end: number): void {
    const rest = this.t.slice(end).split("\n")
    let first = 0
    let lines = 0
    for (let k = 1; k < rest.length; k++) {
      if (rest[k]!.trim() === "") continue
      if (first === 0) first = this.line + k
      lines++
    }
    if (lines > 0) this.notes.push({ kind: "after-eof", line: first, lines })
  }

  private next(end: number): void {
    const e = lineEnd(this.t, end)
    if (e === -1) {
      if (Number.isNaN(this.t.charCodeAt(end)))
        this.fail("unexpected end of input: the last line has no line feed after it")
      this.fail("a carriage return with no line feed after it")
    }
    this.i = e
    this.line++
  }

  private nameInfo(name: string): NameInfo {
    const cached = this.info.get(name)
    if (cached !== undefined) return cached
    let type = this.declared.get(name)?.type
    let part = ""
    if (type === undefined)
      for (const p of PARTS) {
        if (!name.endsWith(p)) continue
        const base = this.declared.get(name.slice(0, -p.length))?.type
        if (base !== undefined && (HISTOGRAMS.has(base) || base === "summary")) {
          type = base
          part = p
          break
        }
      }
    const histogram = type !== undefined && HISTOGRAMS.has(type)
    const keep = this.options.keep
    const info: NameInfo = {
      keep: keep === undefined || keep(name),
      bound: type === "summary" ? "quantile" : histogram ? "le" : undefined,
      nonNegative: histogram && (part === "_bucket" || part === "_count" || part === "_gcount")
    }
    this.info.set(name, info)
    return info
  }

  private sample(from: number): void {
    const s = this.scratch
    s.n = 0
    const r = readSample(this.t, from, this.om, s, (m) => this.fail(m))
    const { name, value, timestamp } = r
    this.next(r.end)
    const line = this.line - 1
    const info = this.nameInfo(name)
    if (info.bound !== undefined) {
      const b = s.names.indexOf(info.bound)
      const v = b >= 0 && b < s.n ? s.values[b]! : undefined
      if (v !== undefined && floatAt(v, 0, v.length) === undefined)
        this.failOn(line, `expected a float as the value of the '${info.bound}' label of ${name}`)
    }
    if (info.nonNegative && value.value < 0)
      this.failOn(
        line,
        `negative ${name.endsWith("_bucket") ? "bucket population" : "count"} ${value.value} in histogram ${name}`
      )
    this.sampled.add(name)
    if (info.keep) this.keepSample(name, value, timestamp, line)
    else this.count(name, line)
  }

  private failOn(line: number, message: string, tag: DecodeError["_tag"] = "SyntaxError"): never {
    throw new Fail(decodeError(tag, message, { line }))
  }

  private keepSample(
    name: string,
    value: { readonly value: number; readonly underflow: boolean; readonly raw?: string | undefined },
    timestamp: number | undefined,
    line: number
  ): void {
    const s = this.scratch
    // names are data: a label called `constructor` or `__proto__` is just a label
    const labels: Record<string, string> = Object.create(null)
    for (let k = 0; k < s.n; k++) labels[s.names[k]!] = s.values[k]!
    if (this.options.ambiguous === true) {
      const key = seriesKey(name, labels)
      const first = this.seen.get(key)
      if (first !== undefined)
        this.failOn(line, `ambiguous series: ${key} repeats the series of line ${first}`, "AmbiguousSeries")
      this.seen.set(key, line)
    }
    if (value.underflow) this.notes.push({ kind: "underflow", name, line, text: value.raw ?? "" })
    this.samples.push(
      timestamp === undefined
        ? { name, labels, value: value.value, line }
        : { name, labels, value: value.value, line, timestamp }
    )
  }

  private count(name: string, line: number): void {
    let o = this.others.get(name)
    if (o === undefined) {
      o = { name, samples: 0, line, ranks: new Map() }
      this.others.set(name, o)
    }
    o.samples++
    const rl = this.options.rankLabels
    if (rl === undefined) return
    const s = this.scratch
    for (const l of rl) {
      const k = s.names.indexOf(l)
      if (k < 0 || k >= s.n) continue
      let set = o.ranks.get(l)
      if (set === undefined) {
        set = new Set()
        o.ranks.set(l, set)
      }
      set.add(s.values[k]!)
    }
  }
}

/** The canonical key of a series: name + sorted label pairs. */
export const seriesKey = (name: string, labels: Readonly<Record<string, string>>): string =>
  `${name}{${Object.keys(labels)
    .sort()
    .map((k) => `${k}=${JSON.stringify(labels[k])}`)
    .join(",")}}`

const utf8 = new TextDecoder("utf-8", { fatal: true })

/** `bytes` as UTF-8 text, or a `SyntaxError` on the first line that is not valid UTF-8. */
const decodeUtf8 = (bytes: Uint8Array): Result.Result<string, DecodeError> => {
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
