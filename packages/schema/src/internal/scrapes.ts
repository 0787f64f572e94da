/**
 * Exposition text that holds several scrapes one after the other (a bug report pasting two time
 * points): split it where the scrapes meet and keep the last one, when that is unambiguous.
 */
import * as Result from "effect/Result"
import type { DecodeError } from "../DecodeError.js"
import type { LedgerNotice } from "../LedgerNotice.js"
import { type Exposition, isRepeatedDeclaration, type ParseOptions, parseExposition } from "./prometheus.js"

/** What identifies the start of a scrape: its first declared family and its first sample's name. */
const signature = (e: Exposition): string => {
  const d = e.declared.keys().next()
  const kept = e.samples[0]
  const other = e.others.values().next()
  const first =
    other.done === true || (kept !== undefined && kept.line < other.value.line)
      ? kept?.name
      : other.value.name
  return `${d.done === true ? "" : d.value}|${first ?? ""}`
}

/**
 * Parse `text` as exposition (with `options`); when a family is declared again (a second
 * `# HELP` / `# TYPE`) or a kept series repeats (`AmbiguousSeries`) and a comment block stands
 * right above the repeat, and the text from that block starts as the text did (same first
 * declared family and first series), a new scrape starts at that comment block: decode the last
 * scrape alone (so a series the last scrape lacks is absent, never taken from an older time
 * point) and add a `MultipleScrapes` notice. Any other repeat stays an error. Work stays linear in
 * the number of scrapes times the text length.
 */
export const parseLastScrape = (
  text: string,
  notices: Array<LedgerNotice>,
  options: ParseOptions
): Result.Result<Exposition, DecodeError> => {
  let lines: ReadonlyArray<string> | undefined
  let offset = 0
  let scrapes = 1
  let current = parseExposition(text, options)
  while (
    Result.isFailure(current) &&
    (current.failure._tag === "AmbiguousSeries" || isRepeatedDeclaration(current.failure))
  ) {
    const at = current.failure.line
    if (at === undefined) break
    lines ??= text.split(/\r?\n/)
    // the new scrape begins with the comment block (# HELP/# TYPE, a pasted time) above the repeat
    const repeat = offset + at - 1
    let start = repeat
    const isComment = (k: number) => (lines![k] ?? "").trim().startsWith("#")
    while (start > offset && isComment(start - 1)) start--
    // samples of one series back to back with no comment between are unlabelled per-rank gauges
    // (S10), which stay ambiguous
    if (start === repeat && !isComment(repeat)) break
    const head = parseExposition(`${lines.slice(offset, start).join("\n")}\n`, options)
    if (Result.isFailure(head)) break
    // ... and only where the text starts over (its first family and sample come again)
    let firstSample = start
    while (firstSample < lines.length - 1 && isComment(firstSample)) firstSample++
    const prefix = parseExposition(`${lines.slice(start, firstSample + 1).join("\n")}\n`, options)
    if (start === offset || Result.isFailure(prefix) || signature(prefix.success) !== signature(head.success))
      break
    const tailAlone = parseExposition(lines.slice(start).join("\n"), options)
    offset = start
    scrapes++
    current = tailAlone
  }
  if (Result.isFailure(current))
    return offset === 0 || current.failure.line === undefined
      ? current
      : Result.fail({ ...current.failure, line: current.failure.line + offset })
  if (scrapes > 1)
    notices.push({
      _tag: "MultipleScrapes",
      scrapes,
      line: offset + 1,
      message: `${scrapes} scrapes pasted one after the other; the last one (from line ${offset + 1}) was decoded`
    })
  if (offset === 0) return current
  // line numbers of the kept scrape are relative to it: shift them back to the whole text
  return Result.succeed({
    ...current.success,
    samples: current.success.samples.map((s) => ({ ...s, line: s.line + offset })),
    others: new Map(
      [...current.success.others].map(([k, o]) => [k, { ...o, line: o.line + offset }] as const)
    ),
    notes: current.success.notes.map((n) => ({ ...n, line: n.line + offset }))
  })
}
