/**
 * A `# HELP name text` or `# TYPE name type` line of the exposition format, from after its
 * keyword; the name legacy or quoted (Prometheus 3). Types: 0.0.4's five, OpenMetrics'
 * `gaugehistogram` (also spelled `gauge_histogram` by prometheus/common), `stateset`, `info`,
 * `unknown`.
 */
import {
  CR,
  LF,
  nameChar,
  nameStart,
  QUOTE,
  quotedAt,
  SPACE,
  skipBlank,
  str,
  strValue,
  TAB,
  tokenEnd
} from "./expfmtTokens.js"

export const TYPES: ReadonlySet<string> = new Set([
  "counter",
  "gauge",
  "histogram",
  "summary",
  "untyped",
  "gaugehistogram",
  "gauge_histogram",
  "stateset",
  "info",
  "unknown"
])

export interface Declaration {
  readonly kind: "HELP" | "TYPE"
  readonly name: string
  /** The help text (escapes `\\`, `\n` decoded; others kept as written) or the type. */
  readonly text: string
  /** The index of the line end (not consumed). */
  readonly end: number
}

const endOfLine = (t: string, i: number): number => {
  const nl = t.indexOf("\n", i)
  const e = nl < 0 ? t.length : nl
  return e > i && t.charCodeAt(e - 1) === CR ? e - 1 : e
}

const unescapeHelp = (s: string): string =>
  s.indexOf("\\") < 0 ? s : s.replace(/\\([\\n"])/g, (_, c: string) => (c === "n" ? "\n" : c))

const lineEnds = (c: number): boolean => c === LF || c === CR || Number.isNaN(c)

/**
 * The declaration whose keyword ends at `i` (`fail` names what is wrong on its line), or
 * `undefined` when the line holds no name, or a name and nothing after it: a plain comment, as
 * in the reference parser (`# HELP`, `# HELP my_summary`).
 */
export const readDeclaration = (
  t: string,
  i: number,
  fail: (m: string) => never
): Declaration | undefined => {
  const kind = t.startsWith("HELP", i - 4) ? "HELP" : "TYPE"
  i = skipBlank(t, i)
  let name: string
  const c = t.charCodeAt(i)
  if (lineEnds(c)) return undefined
  if (c === QUOTE) {
    const end = quotedAt(t, i + 1)
    if (end < 0) fail(`metric name ${str.error}`)
    name = strValue(t)
    i = end
  } else {
    if (!nameStart(c)) fail(`invalid metric name in ${kind} comment`)
    const from = i
    while (nameChar(t.charCodeAt(i))) i++
    name = t.slice(from, i)
  }
  const after = t.charCodeAt(i)
  if (after !== SPACE && after !== TAB && after !== LF && after !== CR && !Number.isNaN(after))
    fail(`invalid metric name in ${kind} comment`)
  i = skipBlank(t, i)
  if (lineEnds(t.charCodeAt(i))) return undefined
  if (kind === "HELP") {
    const e = endOfLine(t, i)
    let k = e
    while (k > i && (t.charCodeAt(k - 1) === SPACE || t.charCodeAt(k - 1) === TAB)) k--
    return { kind, name, text: unescapeHelp(t.slice(i, k)), end: e }
  }
  const te = tokenEnd(t, i)
  const type = t.slice(i, te)
  if (!TYPES.has(type)) fail(`unknown metric type '${type}'`)
  const e = skipBlank(t, te)
  const ec = t.charCodeAt(e)
  if (ec !== LF && ec !== CR && !Number.isNaN(ec)) fail(`unexpected text after the type of ${name}`)
  return { kind, name, text: type, end: e }
}
