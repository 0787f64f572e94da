/**
 * The ledger: every load format decoded to `RankLoad` rows (one per rank), with the notices a
 * router author needs to trust them.
 *
 * @since 0.1.0
 */
import { decodeMulti } from "@msgpack/msgpack"
import * as Result from "effect/Result"
import { type DecodeError, decodeError } from "./DecodeError.js"
import { fromText } from "./internal/ledgerFromText.js"
import { loadStatItem } from "./internal/ledgerJson.js"
import { audit } from "./internal/ledgerRows.js"
import { msgpackLimits } from "./internal/msgpack.js"
import type { LedgerNotice } from "./LedgerNotice.js"
import type { RankLoad, RanklessLoad, RankUnknownReason } from "./RankLoad.js"

/**
 * Why a rank's numbers are not trusted.
 *
 * **When to use**: existing code; new code names {@link RankUnknownReason}.
 *
 * @deprecated Use `RankUnknownReason` (the same reasons, and more).
 * @category Ledger
 * @since 0.1.0
 */
export type LedgerUnknownReason = RankUnknownReason

/**
 * One rank of the ledger: the schema's `RankLoad`.
 *
 * **When to use**: existing code; new code names `RankLoad`, which every decoder produces and
 * every policy accepts.
 *
 * @deprecated Use `RankLoad` (this is the same type).
 * @category Ledger
 * @since 0.1.0
 */
export type LedgerRow = RankLoad

/**
 * Which format {@link decodeLedger} reads; `auto` detects it.
 *
 * **When to use**: pass a kind when the format is known (faster, clearer errors); `auto` otherwise.
 *
 * @category Ledger
 * @since 0.1.0
 */
export type LedgerKind = (typeof ledgerKinds)[number]

/**
 * Every {@link LedgerKind}, `auto` first: SGLang `/v1/loads`, legacy `/get_load`, `LoadStat`
 * (JSON or msgpack), vLLM and SGLang Prometheus `/metrics`, SGLang scheduler log lines, TensorRT-LLM
 * `trtllm-serve` iteration stats (its `/metrics` JSON list) and Prometheus page (`/prometheus/metrics`),
 * the SGLang model gateway's `/get_loads` and Prometheus page, NVIDIA Dynamo's `kv_metrics` load
 * events and frontend page, llm-d's endpoint picker page.
 *
 * **When to use**: to offer the kinds (a CLI's `--kind` choices) or to run something over each.
 *
 * @example
 * ```ts
 * import { ledgerKinds } from "@loadledger/schema"
 * ledgerKinds // => ["auto", "v1-loads", "get-load", "load-stat", "vllm-metrics", "sglang-metrics", "sglang-log", "trtllm-iteration-stats", "trtllm-metrics", "smg-loads", "smg-metrics", "dynamo-load-events", "dynamo-metrics", "llm-d-metrics"]
 * ```
 *
 * @category Ledger
 * @since 0.3.0
 */
export const ledgerKinds = [
  "auto",
  "v1-loads",
  "get-load",
  "load-stat",
  "vllm-metrics",
  "sglang-metrics",
  "sglang-log",
  "trtllm-iteration-stats",
  "trtllm-metrics",
  "smg-loads",
  "smg-metrics",
  "dynamo-load-events",
  "dynamo-metrics",
  "llm-d-metrics"
] as const

/**
 * What {@link decodeLedgerReport} returns: the rows and every notice, in the order found.
 *
 * **When to use**: reading the result of `decodeLedgerReport`.
 *
 * @category Ledger
 * @since 0.3.0
 */
export interface LedgerReport {
  readonly rows: ReadonlyArray<RankLoad>
  readonly notices: ReadonlyArray<LedgerNotice>
  /**
   * Engine-level loads without a rank: on an exposition whose samples carry rank labels, the
   * modelled samples that carry none (never merged into rank 0); absent when there are none.
   */
  readonly rankless?: ReadonlyArray<RanklessLoad> | undefined
}

const fromMsgpack = (bytes: Uint8Array): Result.Result<Array<RankLoad>, DecodeError> => {
  const rows: Array<RankLoad> = []
  try {
    let i = 0
    for (const v of decodeMulti(bytes, msgpackLimits(bytes))) {
      const r = loadStatItem(v, `$[message ${i}]`)
      if (Result.isFailure(r)) return Result.fail(r.failure)
      rows.push(r.success)
      i++
    }
  } catch (e) {
    return Result.fail(
      decodeError("SyntaxError", `invalid msgpack: ${e instanceof Error ? e.message : String(e)}`)
    )
  }
  if (rows.length === 0) return Result.fail(decodeError("SyntaxError", "empty msgpack input"))
  return Result.succeed(rows)
}

/**
 * Decode any supported load payload to `RankLoad` rows **and** the notices about it.
 *
 * Same input, kinds, rows and errors as {@link decodeLedger}; `notices` adds what was decoded but
 * deserves a look (see `LedgerNotice`): metrics declared without samples, series and keys this
 * version does not model (by name), wire names that disagree, ranks whose identity was defaulted,
 * and ranks marked `unknown`.
 *
 * **When to use**: operator-facing tools (the CLI's `loadledger decode` prints every notice on
 * stderr), and routers that want to log what they ignore.
 *
 * @example
 * ```ts
 * import { decodeLedgerReport } from "@loadledger/schema"
 * const r = decodeLedgerReport('sglang:num_paused_reqs{dp_rank="0"} 2\nsglang:num_retracted_reqs{dp_rank="0"} 1\nsglang:num_running_reqs_offline_batch{dp_rank="0",batch="b"} 0\n')
 * r._tag === "Success" && r.success.rows // => [{ dpRank: 0, numPausedReqs: 2, numRetractedReqs: 1 }]
 * r._tag === "Success" && r.success.notices.map((n) => n._tag) // => ["UnknownSeries"]
 * ```
 *
 * @category Ledger
 * @since 0.3.0
 */
export const decodeLedgerReport = (
  input: string | Uint8Array,
  kind: LedgerKind = "auto"
): Result.Result<LedgerReport, DecodeError> => {
  const notices: Array<LedgerNotice> = []
  const rankless: Array<RanklessLoad> = []
  let rows: Result.Result<Array<RankLoad>, DecodeError>
  if (typeof input !== "string") {
    // msgpack arrays start with 0x90-0x9f / 0xdc / 0xdd; JSON and text never do
    const first = input.length > 0 ? input[0]! : 0
    const msgpackArray = (first >= 0x90 && first <= 0x9f) || first === 0xdc || first === 0xdd
    // `load-stat` bytes that are no msgpack array are its JSON form (`["LoadStat", ...]`)
    rows =
      (kind === "load-stat" || kind === "auto") && msgpackArray
        ? fromMsgpack(input)
        : fromText(new TextDecoder().decode(input), kind, notices, rankless)
  } else rows = fromText(input, kind, notices, rankless)
  return Result.map(rows, (rs) => {
    const audited = audit(rs, notices)
    return rankless.length === 0 ? { rows: audited, notices } : { rows: audited, notices, rankless }
  })
}

/**
 * Decode any supported load payload to the per-rank ledger: `RankLoad` rows, one per rank.
 *
 * Kinds: `v1-loads` (SGLang `/v1/loads` JSON, every era through 2026: flat fields, `queues`,
 * `disaggregation`, `memory`, `kv_capacity`, `num_prealloc_ready_tokens`), `get-load` (legacy
 * `/get_load` JSON), `load-stat` (msgpack bytes of `["LoadStat", ...]`, possibly several
 * concatenated, or the same as JSON), `vllm-metrics` / `sglang-metrics` (Prometheus text: every
 * per-rank load gauge, e.g. `sglang:num_retracted_reqs`, `sglang:num_paused_reqs`, PD queues;
 * counters and histograms keep their `engine` / `dp_rank` ranks as rows and are named in notices),
 * `sglang-log` (SGLang scheduler `Decode batch` / `Prefill batch` lines, any prefix: each DP
 * rank's fields from its latest line that carried them; see `decodeSglangSchedulerLog`),
 * `trtllm-iteration-stats` (TensorRT-LLM `trtllm-serve` `GET /metrics`: a JSON list of
 * per-iteration stats, the latest read as rank 0; see `decodeTrtllmIterationStats`),
 * `trtllm-metrics` (its `/prometheus/metrics` page, `trtllm_*` gauges, rank 0; see
 * `decodeTrtllmMetrics`), `smg-loads` / `smg-metrics` (SGLang model gateway `/get_loads` and its
 * `smg_engine_*` page, rows keyed by (worker, dpRank); see `decodeSmgLoads`, `decodeSmgMetrics`),
 * `dynamo-load-events` / `dynamo-metrics` (Dynamo `kv_metrics` events and the frontend's
 * `dynamo_frontend_worker_*` gauges; see `decodeDynamoLoadEvents`, `decodeDynamoMetrics`),
 * `llm-d-metrics` (llm-d endpoint picker `inference_pool_per_pod_queue_size`; see
 * `decodeLlmDMetrics`).
 * `auto` (default) detects the format: bytes starting with a msgpack array -> `load-stat` (other
 * bytes are read as UTF-8 text); SGLang scheduler log lines (before JSON: a line starting `[` is
 * a log prefix, never "invalid JSON"); JSON by shape; vLLM V0/V1 logger lines (latest line per engine);
 * per-rank `dp_rank=N key=value` summary lines; exposition text by metric prefix.
 *
 * **Identity rule (every format)**: `dpRank` is the wire's rank (`dp_rank`, `attn_dp_rank`, the
 * `engine` / `dp_rank` label, `Engine NNN:`). When the wire carries none, it is the entry's list
 * index (`/v1/loads`, `/get_load`), or 0 for an unlabelled exposition sample on a page with no
 * rank label, a logger line or a scheduler log line without `DPn`; a `DefaultedIdentity` notice of
 * {@link decodeLedgerReport} says so. On a page where other samples carry rank labels, unlabelled
 * modelled series are rank-less (`LedgerReport.rankless`), never rank 0. Rows are keyed by
 * (`worker`, `dpRank`) where the page names a `worker`. A rank whose identity is itself
 * bad (negative, not an integer) is an `InvalidField` error.
 *
 * Rows: ascending `dpRank`, present fields only (absent is never 0; a `/v1/loads` or `/get_load`
 * entry lacking a count is a partial row, not a refused body; `/get_load` running is `num_reqs -
 * num_waiting_reqs`, so absent unless both are there). S08: an empty `loads` gives
 * no rows; a rank reported twice is `unknown` (`duplicate-rank`), a negative number
 * `negative-count`, NaN/±Inf/above 2^53 `invalid-number` (an unknown row has no load fields).
 * **Cut-off text**: in line-oriented text (exposition, logger, summary lines), a last line with no
 * newline after it may be cut off (`12.0` cut to `1` still parses): it is not read, so what only it
 * carried stays absent, and a `CutLine` notice names it; a text of that one line alone is a
 * `SyntaxError` on line 1 (nothing complete to read). A UTF-8 byte order mark is skipped.
 * Errors (a {@link DecodeError} naming `path` or `line`): bad shape, syntax, ambiguous series,
 * `UnknownSeries` when no sample of a metrics text is a modelled series (never a silent `[]`;
 * a vLLM page whose `vllm:` counters or histograms name engines is rows for those engines with no
 * field and an `UnknownSeries` notice: a release that renamed the gauges still shows its engines),
 * `LimitExceeded` for JSON nesting deeper than 512. Never throws; work is linear in the input.
 *
 * **When to use**: everywhere a load report enters loadledger; `policy.observe` takes the rows
 * as they are. Use {@link decodeLedgerReport} to see the notices too.
 *
 * @example
 * ```ts
 * import { decodeLedger } from "@loadledger/schema"
 * const r = decodeLedger('{"loads":[{"dp_rank":0,"num_total_tokens":12000},{"dp_rank":1,"num_total_tokens":0}]}')
 * r._tag === "Success" && r.success // => [{ dpRank: 0, numTotalTokens: 12000 }, { dpRank: 1, numTotalTokens: 0 }]
 * const none = decodeLedger('process_open_fds 12\nvllm:iteration_tokens_total_count 3\n', "vllm-metrics")
 * none._tag === "Failure" && none.failure._tag // => "UnknownSeries"
 * const named = decodeLedger('vllm:iteration_tokens_total_count{engine="0"} 3\n', "vllm-metrics")
 * named._tag === "Success" && named.success // => [{ dpRank: 0 }]
 * ```
 *
 * @category Ledger
 * @since 0.1.0
 */
export const decodeLedger = (
  input: string | Uint8Array,
  kind: LedgerKind = "auto"
): Result.Result<ReadonlyArray<RankLoad>, DecodeError> =>
  Result.map(decodeLedgerReport(input, kind), (r) => r.rows)
