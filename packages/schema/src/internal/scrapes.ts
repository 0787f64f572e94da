/**
 * Exposition text that holds several scrapes one after the other (a bug report pasting two time
 * points): split it where the scrapes meet and keep the last one, when that is unambiguous.
 */
import * as Result from "effect/Result"
import type { DecodeError } from "../DecodeError.js"
import type { LedgerNotice } from "../LedgerNotice.js"
import { type Exposition, parseExposition, seriesKey } from "./prometheus.js"

/**
 * Parse `text` as exposition; when a series repeats (`AmbiguousSeries`), the repeat is the
 * text's first series coming again and a comment block stands right above it, a new scrape starts
 * at that comment block: decode the last scrape alone (so
 * a series the last scrape lacks is absent, never taken from an older time point) and add a
 * `MultipleScrapes` notice. Any other repeat stays an `AmbiguousSeries` error. Work stays linear
 * in the number of scrapes times the text length.
 */
export const parseLastScrape = (
  text: string,
  notices: Array<LedgerNotice>
): Result.Result<Exposition, DecodeError> => {
  const lines = text.split(/\r?\n/)
  let offset = 0
  let scrapes = 1
  let current = parseExposition(text)
  while (Result.isFailure(current) && current.failure._tag === "AmbiguousSeries") {
    const at = current.failure.line
    if (at === undefined) break
    // the new scrape begins with the comment block (# HELP/# TYPE, a pasted time) above the repeat
    let start = offset + at - 1
    while (start > offset && (lines[start - 1] ?? "").trim().startsWith("#")) start--
    const head = parseExposition(lines.slice(offset, start).join("\n"))
    if (Result.isFailure(head)) break
    // a new scrape starts where the first series of the text comes again
    const first = head.success.samples[0]
    const again = parseExposition(lines[offset + at - 1] ?? "")
    const startsOver =
      first !== undefined &&
      Result.isSuccess(again) &&
      again.success.samples[0] !== undefined &&
      seriesKey(again.success.samples[0].name, again.success.samples[0].labels) ===
        seriesKey(first.name, first.labels)
    // ... and only after a comment block (a scrape's # HELP/# TYPE lines, a pasted time): samples
    // of one series back to back with no comment between are unlabelled per-rank gauges (S10),
    // which stay ambiguous
    if (!startsOver || start === offset + at - 1) break
    const tailAlone = parseExposition(lines.slice(start).join("\n"))
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
    samples: current.success.samples.map((s) => ({ ...s, line: s.line + offset }))
  })
}
