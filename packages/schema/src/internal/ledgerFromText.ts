/**
 * `decodeLedger` on text: JSON by shape, else the line-oriented formats (a Prometheus
 * exposition, vLLM logger lines, per-rank summary lines), each detected or named by `kind`.
 */
import * as Result from "effect/Result"
import { type DecodeError, decodeError } from "../DecodeError.js"
import {
  decodeDynamoLoadEvents,
  decodeDynamoMetrics,
  looksLikeDynamoLoadEvents,
  looksLikeDynamoMetrics
} from "../Dynamo.js"
import type { LedgerNotice } from "../LedgerNotice.js"
import { decodeLlmDMetrics, looksLikeLlmDMetrics } from "../LlmD.js"
import { runtimeOfExposition } from "../Metrics.js"
import type { RankLoad, RanklessLoad } from "../RankLoad.js"
import { decodeSmgMetrics, looksLikeSmgMetrics } from "../Smg.js"
import { decodeTrtllmMetrics, looksLikeTrtllmMetrics } from "../trtllm/Prometheus.js"
import { parseJson } from "./json.js"
import { rowsOfJson } from "./ledgerJson.js"
import { rowsOfSchedulerLog } from "./ledgerSchedulerLog.js"
import { rowsOfExposition, rowsOfLogger, rowsOfRankSummary } from "./ledgerText.js"
import { parseFor } from "./metricNames.js"
import { completeLines, looksLikeJson, notExposition, nothingExposed, onlyLineCut } from "./prometheus.js"
import { batchLineAt } from "./schedulerLine.js"
import { parseLastScrape } from "./scrapes.js"

/**
 * Auto-detection of scheduler log text: a `Decode batch` / `Prefill batch` line among the first
 * 200 non-blank lines, and a first non-blank line that is no JSON value's start other than a
 * log prefix (`[` followed by a time or a rank, not by a JSON value).
 */
const isSchedulerLog = (text: string): boolean => {
  if (!text.includes(" batch")) return false
  let seen = 0
  let start = 0
  while (start < text.length && seen < 200) {
    let end = text.indexOf("\n", start)
    if (end < 0) end = text.length
    const line = text.slice(start, end)
    if (line.trim() !== "") {
      if (seen === 0 && /^\s*(\{|\[\s*["{[\]-]|\[\s*(?:\d+(?:\.\d+)?|true|false|null)\s*[,\]])/.test(line))
        return false
      seen++
      if (batchLineAt(line) !== undefined) return true
    }
    start = end + 1
  }
  return false
}

/** The `LedgerKind`s (`Ledger.ts`) a text can be read as. */
export type TextKind =
  | "auto"
  | "v1-loads"
  | "get-load"
  | "load-stat"
  | "vllm-metrics"
  | "sglang-metrics"
  | "sglang-log"
  | "trtllm-iteration-stats"
  | "trtllm-metrics"
  | "smg-loads"
  | "smg-metrics"
  | "dynamo-load-events"
  | "dynamo-metrics"
  | "llm-d-metrics"

const enginePage = /^(?:#\s*(?:HELP|TYPE)\s+)?(?:vllm:|sglang|trtllm_)/m

/** A gateway page's decoder, when `kind` names one or `auto` detects one. */
const gatewayPage = (
  kind: TextKind,
  text: string,
  t: string
):
  | ((
      text: string,
      notices: Array<LedgerNotice>,
      rankless: Array<RanklessLoad>
    ) => Result.Result<Array<RankLoad>, DecodeError>)
  | undefined => {
  if (kind === "smg-metrics") return decodeSmgMetrics
  if (kind === "dynamo-metrics") return decodeDynamoMetrics
  if (kind === "llm-d-metrics") return decodeLlmDMetrics
  if (kind !== "auto" || looksLikeJson(t) || enginePage.test(text)) return undefined
  if (looksLikeSmgMetrics(text)) return decodeSmgMetrics
  if (looksLikeDynamoMetrics(text)) return decodeDynamoMetrics
  if (looksLikeLlmDMetrics(text)) return decodeLlmDMetrics
  return undefined
}

export const fromText = (
  input: string,
  kind: TextKind,
  notices: Array<LedgerNotice>,
  rankless: Array<RanklessLoad> = []
): Result.Result<Array<RankLoad>, DecodeError> => {
  // a UTF-8 byte order mark (a file saved by some editors) is no part of any format
  const text = input.startsWith("\uFEFF") ? input.slice(1) : input
  const t = text.trimStart()
  const exposition = kind === "vllm-metrics" || kind === "sglang-metrics"
  // Dynamo load events: JSON objects one per line (or a list), detected before JSON and logs
  if (kind === "dynamo-load-events" || (kind === "auto" && looksLikeDynamoLoadEvents(text)))
    return decodeDynamoLoadEvents(text, notices)
  // SGLang scheduler log lines start with the logger's `[time DPn ...]` prefix: a log, never JSON
  if (kind === "sglang-log" || (kind === "auto" && isSchedulerLog(text))) {
    const { body, cutLine } = withoutCutLine(text, notices)
    if (cutLine !== undefined && body.trim() === "") return Result.fail(onlyLineCut(cutLine))
    return rowsOfSchedulerLog(body, notices)
  }
  // a TensorRT-LLM page (`trtllm_*` names, none of vLLM's or SGLang's) has its own decoder
  if (
    kind === "trtllm-metrics" ||
    (kind === "auto" &&
      !looksLikeJson(t) &&
      looksLikeTrtllmMetrics(text) &&
      !/^(?:#\s*(?:HELP|TYPE)\s+)?(?:vllm:|sglang)/m.test(text))
  ) {
    const { body, cutLine } = withoutCutLine(text, notices)
    if (cutLine !== undefined && body.trim() === "") return Result.fail(onlyLineCut(cutLine))
    return decodeTrtllmMetrics(body, notices)
  }
  const page = gatewayPage(kind, text, t)
  if (page !== undefined) {
    const { body, cutLine } = withoutCutLine(text, notices)
    if (cutLine !== undefined && body.trim() === "") return Result.fail(onlyLineCut(cutLine))
    return page(body, notices, rankless)
  }
  if (!exposition && (kind !== "auto" || looksLikeJson(t))) {
    return Result.flatMap(parseJson(text), (doc) => rowsOfJson(doc, kind, notices, rankless))
  }
  if (exposition) {
    const bad = notExposition(text, kind)
    if (bad !== undefined) return Result.fail(bad)
  } else if (!text.includes("Avg prompt throughput:")) {
    // detected text with lines that end in a carriage return alone (logger lines may hold a
    // progress bar's): an exposition or summary lines once split, an error naming the line endings
    const split = text.replace(/\r(?!\n)/g, "\n")
    if (
      split !== text &&
      (looksLikeExposition(split, 1_000_000) || rowsOfRankSummary(split, []) !== undefined)
    )
      return Result.fail(notExposition(text, "load")!)
  }
  // line-oriented text: a last line with no newline after it may be cut off, and is not read
  const { body, cutLine } = withoutCutLine(text, notices)
  if (cutLine !== undefined && body.trim() === "") {
    // the one line there was had no newline after it: not read, and nothing else to read
    const loadLike =
      exposition ||
      text.includes("Avg prompt throughput:") ||
      rowsOfRankSummary(text, []) !== undefined ||
      looksLikeExposition(text, 2)
    if (loadLike) return Result.fail(onlyLineCut(cutLine))
  }
  if (exposition)
    return Result.flatMap(parseLastScrape(body, notices, parseFor(kind)), (e) => {
      const none = nothingExposed(e, kind)
      return none === undefined ? rowsOfExposition(e, kind, notices, rankless) : Result.fail(none)
    })
  if (body.includes("Avg prompt throughput:")) return rowsOfLogger(body, notices)
  const summary = rowsOfRankSummary(body, notices)
  if (summary !== undefined) return Result.succeed(summary)
  const scrape = parseLastScrape(body, notices, parseFor(undefined))
  if (Result.isFailure(scrape) && !looksLikeExposition(body, scrape.failure.line))
    return Result.fail(
      decodeError(
        "UnknownFormat",
        `not a load payload: neither JSON, msgpack, vLLM logger lines, rank summary lines nor a Prometheus exposition (as an exposition, line ${scrape.failure.line ?? 1}: ${scrape.failure.message})`,
        { line: scrape.failure.line ?? 1 }
      )
    )
  return Result.flatMap(scrape, (e) => {
    const rt = runtimeOfExposition(e)
    if (rt === undefined && e.samples.length === 0 && !looksLikeExposition(text, text.length + 1))
      return Result.fail(
        decodeError(
          "UnknownFormat",
          "not a load payload: neither JSON, msgpack, vLLM logger lines, rank summary lines nor a Prometheus exposition",
          { line: 1 }
        )
      )
    if (rt === undefined)
      return Result.fail(
        decodeError("UnknownFormat", "no vLLM or SGLang load metric in the text", { line: 1 })
      )
    return rowsOfExposition(e, rt === "vllm" ? "vllm-metrics" : "sglang-metrics", notices, rankless)
  })
}

/** `text` up to its last complete line (see `completeLines`), with a `CutLine` notice when cut. */
const withoutCutLine = (
  text: string,
  notices: Array<LedgerNotice>
): { readonly body: string; readonly cutLine: number | undefined } => {
  const { complete, cutLine } = completeLines(text)
  if (cutLine !== undefined)
    notices.push({
      _tag: "CutLine",
      line: cutLine,
      message: `line ${cutLine} does not end with a newline, so it may be cut off: it was not read`
    })
  return { body: complete, cutLine }
}

/**
 * Auto-detection's last guess is a Prometheus exposition; a text whose lines before the first
 * bad one hold no `# HELP` / `# TYPE` comment and no `name{labels} value` sample was never one, so
 * its error says "not a load payload" rather than quoting the exposition parser.
 */
const looksLikeExposition = (text: string, badLine: number | undefined): boolean => {
  const lines = text.split("\n", Math.max(0, (badLine ?? 1) - 1))
  return lines.some((l) => /^#\s*(HELP|TYPE)\s/.test(l) || /^[A-Za-z_:][\w:]*(\{[^}]*\})?\s+\S/.test(l))
}
