/**
 * The exposition parser: one pass over the text, no line split, no regular expression per line;
 * each sample line goes first to the fast path of the common form (expfmtFast.ts), and to the
 * general reader (expfmtLine.ts) when it is not of that form.
 * It materialises only the samples a caller keeps (the modelled series: `ParseOptions.keep`) and
 * counts the rest by name, so its memory is bounded by the kept series and the distinct names,
 * not the page. Rules: prometheus/common `expfmt/text_parse.go` (UTF-8 scheme, read at
 * d2417e2cbb82c4c81e4d28d55f354058169a9f08; its test table agrees case for case, see
 * test/expfmtTable.test.ts) and OpenMetrics 1.0 for pages with a `# EOF` line (float timestamps,
 * exemplars, `gaugehistogram` / `stateset` / `info` / `unknown`; `# EOF` ends the page).
 */
import { type DecodeError, decodeError } from "../DecodeError.js"
import { readDeclaration } from "./expfmtComment.js"
import { fastSample, fastState } from "./expfmtFast.js"
import {
  Fail,
  findLabel,
  labelName,
  labelValue,
  line,
  lineEnd,
  readSample,
  type Scratch,
  scratch
} from "./expfmtLine.js"
import { afterEofNote, hasEof, type NameInfo, nameInfoOf, repeats, seriesKey } from "./expfmtPage.js"
import { CR, floatAt, HASH, LF, skipBlank, tokenEnd } from "./expfmtTokens.js"
import type { ExpositionNote, Family, OtherSeries, ParseOptions, Sample } from "./expfmtTypes.js"

export class Parser {
  i = 0
  line = 1
  readonly samples: Array<Sample> = []
  readonly declared = new Map<string, Family>()
  readonly others = new Map<string, OtherSeries>()
  readonly notes: Array<ExpositionNote> = []
  private readonly seen = new Map<string, number>()
  private readonly sampled = new Set<string>()
  private info = new Map<string, NameInfo>()
  private readonly scratch: Scratch = scratch()
  private lastName = ""
  // the last four names seen: a histogram's lines cycle through _bucket, _sum, _count
  private readonly recent: Array<string> = ["", "", "", ""]
  private nextRecent = 0
  private lastInfo: NameInfo | undefined
  private lastOther: OtherSeries | undefined
  // the series whose rank values `count` read last, those values, and its sets of them
  private rankOf: OtherSeries | undefined
  private readonly rankValue: Array<string | undefined> = []
  private readonly rankSet: Array<Set<string> | undefined> = []
  private readonly failHere = (m: string): never => this.fail(m)
  private readonly fast
  readonly om: boolean
  constructor(
    readonly t: string,
    private readonly options: ParseOptions
  ) {
    this.om = hasEof(t)
    this.fast = fastState(t)
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
    this.lastInfo = undefined
  }

  private repeat(message: string): never {
    const e = decodeError("SyntaxError", message, { line: this.line })
    repeats.add(e)
    throw new Fail(e)
  }

  /** The lines after `# EOF` (from `end`, on its line) are not read: count the non-blank ones. */
  private afterEof(end: number): void {
    const n = afterEofNote(this.t, end, this.line)
    if (n !== undefined) this.notes.push(n)
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
    const info = nameInfoOf(name, this.declared, this.options.keep)
    this.info.set(name, info)
    return info
  }

  private sample(from: number): void {
    const s = this.scratch
    s.n = 0
    const t = this.t
    if (!fastSample(t, from, s, this.recent, this.fast)) {
      s.n = 0
      readSample(t, from, this.om, s, this.recent, this.failHere)
    }
    const name = line.name
    const value = line.value
    const underflow = line.underflow
    const raw = line.raw
    const timestamp = line.timestamp
    this.next(line.end)
    const at = this.line - 1
    let info = this.lastInfo
    if (name !== this.lastName || info === undefined) {
      info = this.nameInfo(name)
      this.sampled.add(name)
      this.lastName = name
      this.lastInfo = info
      if (!this.recent.includes(name)) {
        this.recent[this.nextRecent] = name
        this.nextRecent = (this.nextRecent + 1) & 3
      }
      this.lastOther = undefined
    }
    if (info.bound !== undefined) {
      const b = findLabel(t, s, info.bound)
      if (b >= 0) {
        const text = s.valueText[b]
        const ok =
          text === undefined ? floatAt(t, s.valueFrom[b]!, s.valueTo[b]!) : floatAt(text, 0, text.length)
        if (!ok) this.failOn(at, `expected a float as the value of the '${info.bound}' label of ${name}`)
      }
    }
    if (info.nonNegative && value < 0)
      this.failOn(
        at,
        `negative ${name.endsWith("_bucket") ? "bucket population" : "count"} ${value} in histogram ${name}`
      )
    if (info.keep) this.keepSample(name, value, underflow, raw, timestamp, at)
    else this.count(name, at)
  }

  private failOn(line: number, message: string, tag: DecodeError["_tag"] = "SyntaxError"): never {
    throw new Fail(decodeError(tag, message, { line }))
  }

  private keepSample(
    name: string,
    value: number,
    underflow: boolean,
    raw: string,
    timestamp: number | undefined,
    line: number
  ): void {
    const s = this.scratch
    const t = this.t
    // names are data: a label called `constructor` or `__proto__` is just a label
    const labels: Record<string, string> = Object.create(null)
    for (let k = 0; k < s.n; k++) labels[labelName(t, s, k)] = labelValue(t, s, k)
    if (this.options.ambiguous === true) {
      const key = seriesKey(name, labels)
      const first = this.seen.get(key)
      if (first !== undefined)
        this.failOn(line, `ambiguous series: ${key} repeats the series of line ${first}`, "AmbiguousSeries")
      this.seen.set(key, line)
    }
    if (underflow) this.notes.push({ kind: "underflow", name, line, text: raw })
    this.samples.push(
      timestamp === undefined ? { name, labels, value, line } : { name, labels, value, line, timestamp }
    )
  }

  private count(name: string, line: number): void {
    let o = this.lastOther
    if (o === undefined) {
      o = this.others.get(name)
      if (o === undefined) {
        o = { name, samples: 0, line, ranks: new Map() }
        this.others.set(name, o)
      }
      this.lastOther = o
    }
    o.samples++
    const rl = this.options.rankLabels
    if (rl === undefined) return
    const s = this.scratch
    const t = this.t
    // the rank values of the series' line before, most often this line's too: no string built
    if (this.rankOf !== o) {
      this.rankOf = o
      for (let r = 0; r < rl.length; r++) {
        this.rankValue[r] = undefined
        this.rankSet[r] = o.ranks.get(rl[r]!)
      }
    }
    for (let r = 0; r < rl.length; r++) {
      const k = findLabel(t, s, rl[r]!)
      if (k < 0) continue
      const prev = this.rankValue[r]
      if (prev !== undefined && s.valueText[k] === undefined) {
        const from = s.valueFrom[k]!
        const len = s.valueTo[k]! - from
        let same = prev.length === len
        for (let j = 0; same && j < len; j++) same = prev.charCodeAt(j) === t.charCodeAt(from + j)
        if (same) continue
      }
      let set = this.rankSet[r]
      if (set === undefined) {
        set = new Set()
        o.ranks.set(rl[r]!, set)
        this.rankSet[r] = set
      }
      const v = labelValue(t, s, k)
      this.rankValue[r] = v
      set.add(v)
    }
  }
}
