/**
 * What a decoder noticed but did not fail on: the typed notices of `decodeLedgerReport`.
 *
 * @since 0.3.0
 */
import { escapeControl } from "./Escape.js"
import type { RankUnknownReason } from "./RankLoad.js"

/**
 * One notice of {@link decodeLedgerReport}. Every notice has a `_tag` and a one-line `message`:
 *
 * - `DeclaredWithoutSamples`: a modelled metric is declared (`# HELP`/`# TYPE`) with no sample: its
 *   field stays absent on every rank (not 0).
 * - `UnknownSeries`: a Prometheus series family (gauge, counter, histogram, ...) or a vLLM logger
 *   item that no ledger field models, by name, with its sample count and first line. Its rank
 *   labels still create rows, so no engine is lost.
 * - `UnknownField`: a key of a `/v1/loads` or `/get_load` entry that this version does not read (e.g. a newer
 *   SGLang's), with how many entries carry it.
 * - `AmbiguousSeries`: two wire names for one field disagree on a rank (`num_waiting_reqs` vs
 *   `queues.waiting`, `vllm:kv_cache_usage_perc` vs `vllm:gpu_cache_usage_perc`); `used` won.
 * - `DefaultedIdentity`: the wire carried no rank for a row; `dpRank` is its position (list index,
 *   or 0 for an unlabelled exposition / logger line). See `decodeLedger` for the rule.
 * - `MultipleScrapes`: the text is several scrapes pasted one after the other (every series of
 *   the earlier ones repeats in the last, as in a bug report with two time points): the last
 *   scrape, starting at `line`, was decoded.
 * - `CutLine`: a line-oriented text (a Prometheus exposition, vLLM logger lines, rank summary
 *   lines) does not end with a newline, so its last line may have been cut off (a body truncated in
 *   transit or a paste cut short: `12.0` cut to `1` still parses). That line, `line`, was not read:
 *   what only it carried stays absent (a partial row), never a wrong number. The exposition format
 *   requires every line, the last one included, to end with a line feed.
 * - `Underflow`: a modelled sample's value is a non-zero decimal too small for a float64
 *   (`1e-400`): read as 0, as the reference parser reads it, and named here.
 * - `AfterEof`: an OpenMetrics page's `# EOF` line ends it; the non-blank lines after it (from
 *   `line`) were not read.
 * - `UnknownRank`: a rank's numbers are unusable (negative, NaN, ±Inf, above 2^53, reported twice):
 *   its row is `unknown` with the same reason.
 *
 * **When to use**: show them to the operator (the CLI prints each on stderr), or fail a strict
 * pipeline on any of them.
 *
 * @example
 * ```ts
 * import type { LedgerNotice } from "@loadledger/schema"
 * const n: LedgerNotice = { _tag: "UnknownSeries", series: "sglang:num_running_reqs_offline_batch", samples: 8, line: 3, message: "not modelled" }
 * n._tag // => "UnknownSeries"
 * ```
 *
 * @category Ledger
 * @since 0.3.0
 */
export type LedgerNotice =
  | { readonly _tag: "DeclaredWithoutSamples"; readonly series: string; readonly message: string }
  | { readonly _tag: "CutLine"; readonly line: number; readonly message: string }
  | {
      readonly _tag: "MultipleScrapes"
      readonly scrapes: number
      readonly line: number
      readonly message: string
    }
  | {
      readonly _tag: "UnknownSeries"
      readonly series: string
      readonly samples: number
      readonly line: number
      readonly message: string
    }
  | {
      readonly _tag: "UnknownField"
      readonly field: string
      readonly entries: number
      readonly message: string
    }
  | {
      readonly _tag: "AmbiguousSeries"
      readonly dpRank: number
      readonly field: string
      readonly used: string
      readonly ignored: string
      readonly message: string
    }
  | {
      readonly _tag: "DefaultedIdentity"
      readonly dpRank: number
      readonly path?: string | undefined
      readonly line?: number | undefined
      readonly message: string
    }
  | {
      readonly _tag: "Underflow"
      readonly series: string
      readonly line: number
      readonly message: string
    }
  | { readonly _tag: "AfterEof"; readonly line: number; readonly lines: number; readonly message: string }
  | {
      readonly _tag: "UnknownRank"
      readonly dpRank: number
      readonly reason: RankUnknownReason
      readonly message: string
    }

/**
 * One line for a human: `notice: UnknownSeries: sglang:foo (8 samples from line 3) is not modelled`.
 *
 * **When to use**: printing notices (the CLI does, on stderr).
 *
 * @example
 * ```ts
 * import { formatLedgerNotice } from "@loadledger/schema"
 * formatLedgerNotice({ _tag: "DeclaredWithoutSamples", series: "vllm:num_requests_waiting", message: "vllm:num_requests_waiting is declared without samples" })
 * // => "notice: DeclaredWithoutSamples: vllm:num_requests_waiting is declared without samples"
 * ```
 *
 * @category Ledger
 * @since 0.3.0
 */
export const formatLedgerNotice = (n: LedgerNotice): string =>
  escapeControl(`notice: ${n._tag}: ${n.message}`)
