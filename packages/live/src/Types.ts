/**
 * The live router's shared vocabulary: a worker to poll (`WorkerSpec`), the endpoint kinds
 * (`SourceKind`), the load fields a policy can require (`LoadField`), how ranks are judged
 * (`StatusOptions`) and what a rank is at a moment (`RankStatus`, `UnknownReason`), and the one
 * error every entry point returns (`RouterError`).
 *
 * A leaf: types only, importing nothing of this package, so the modules that produce and read
 * these values (`LastHeard`, `RankStatus`, `PolicyView`, `Source`, `Router`, `Route`, the checks)
 * import it and never each other in a circle (issue 29). Re-exported unchanged from the package
 * index.
 *
 * @since 0.3.0
 */
import type { RankLoad } from "@loadledger/schema"

/**
 * One physical worker (one base URL) and how many DP ranks it serves. A worker with `dpSize` N
 * becomes N virtual workers `url@0 … url@N-1` in the ledger, all filled from one fetch.
 *
 * `url`: a non-empty string (for `startLiveRouter`, an http(s) base URL), the worker's identity:
 * no two workers of one router may have the same `url` once trailing slashes are dropped.
 * `dpSize`: an integer from 1 to 1024. Anything else is refused up front with a `RouterError`
 * `InvalidInput` naming the field (`workers[1].dpSize`), never rounded or read as a default.
 *
 * @category models
 * @since 0.1.0
 */
export interface WorkerSpec {
  readonly url: string
  readonly dpSize: number
}

/**
 * A load field a policy can require from a rank's row.
 *
 * @category models
 * @since 0.1.0
 */
export type LoadField = "numRunningReqs" | "numWaitingReqs" | "numTotalTokens" | "kvCacheUsage"

/**
 * Why a rank's load is not usable. Unhealthy (the worker did not answer its last poll): `unreachable`
 * (connection refused or reset), `poll-timeout` (no complete answer within the poll timeout),
 * `http-status` (non-2xx), `ejected` (taken out for a while by a passive health check, see `eject`). Unknown (the worker answers, its numbers cannot be used): `never-reported`,
 * `not-in-payload` (the last payload had no row for the rank), `stale` (older than the staleness
 * bound, or a frozen publisher timestamp), `decode-failed` (the body did not decode),
 * `rejected-row` (the decoder marked the row `unknown`: duplicate rank, negative count, invalid
 * number; or a row given to `applyPoll` carries a count that is negative, NaN, infinite or not a
 * number), `missing-field` (the row carries no load count at all, or, under an explicit
 * `requiredFields`, lacks one of those), `invalid-options` (`rankStatus` was given options it
 * refuses, see there: no rank can be judged with them).
 *
 * @category models
 * @since 0.1.0
 */
export type UnknownReason =
  | "never-reported"
  | "not-in-payload"
  | "stale"
  | "unreachable"
  | "poll-timeout"
  | "http-status"
  | "ejected"
  | "decode-failed"
  | "rejected-row"
  | "missing-field"
  | "invalid-options"

/**
 * How to judge ranks.
 *
 * - `staleAfterSeconds`: data older than this is unknown; a finite number of seconds > 0.
 * - `requiredFields` (optional): an array of `LoadField`s; when given, a row missing any of them is `unknown(missing-field)`,
 *   for every worker. When absent (the default), the **partial-row rule** applies: a row is known
 *   when it carries at least one load count (`numRunningReqs`, `numWaitingReqs`,
 *   `numTotalTokens`), and its other fields pass through absent, never 0 (each policy takes an
 *   absent count as its docstring says: the own and vLLM policies as the busiest value reported);
 *   a row with no count at all gives the policy nothing and is `unknown(missing-field)`.
 * - `publishedFieldsByWorker` (optional): a `Map`: per worker URL, the fields its source publishes for every
 *   rank (`makeRouter` fills it from each source's `kind`, see `sourcePublishedFields`; a worker
 *   not in it publishes the three counts). They only name what a row lacks (`RankStatus.missing`);
 *   they never make a rank unknown.
 * - `ageClock`: `"publisher-change"` (also when absent) ages a rank from the last time its publisher's `timestamp`
 *   changed (a frozen publisher goes stale once a row received more than `staleAfterSeconds` after
 *   that change still carries it; a rank not heard at all for twice the bound is stale too),
 *   `"receipt"` from the last time a row arrived.
 *
 * @category models
 * @since 0.1.0
 */
export interface StatusOptions {
  readonly staleAfterSeconds: number
  readonly requiredFields?: ReadonlyArray<LoadField> | undefined
  readonly publishedFieldsByWorker?: ReadonlyMap<string, ReadonlyArray<LoadField>> | undefined
  readonly ageClock: "publisher-change" | "receipt"
}

/**
 * One rank as the router sees it at `now`.
 *
 * - `condition`: `"known"` (fresh, decoded, at least one load count, or every field of an explicit
 *   `requiredFields`), `"unknown"` (the worker answers but this rank's numbers cannot be used;
 *   `reason` says why) or `"unhealthy"` (the worker did not answer its last poll).
 * - `missing`: on a known rank, the fields its source publishes that this row lacks (a **partial**
 *   row: it is in the policy's view with what it reported, the missing fields absent); absent when
 *   the row is complete. On an `unknown(missing-field)` rank, the fields that made it unknown (the
 *   absent required fields, or with no `requiredFields` the absent published fields).
 * - `row`: the contract row for the rank, indexed for the router: `dpRank` is the router's global
 *   rank index, `worker` the worker URL, `workerDpRank` the engine's own rank. A known rank's row
 *   carries the decoded load fields as they came (absent stays absent); any other rank's row
 *   carries `unknown: { reason, message }` and no load fields.
 * - `ageSeconds`: age of the last row (see `ageClock`), absent for a rank that never reported.
 *
 * @category models
 * @since 0.2.0
 */
export interface RankStatus {
  readonly index: number
  readonly id: string
  readonly workerUrl: string
  readonly dpRank: number
  readonly condition: "known" | "unknown" | "unhealthy"
  readonly reason?: UnknownReason | undefined
  readonly missing?: ReadonlyArray<LoadField> | undefined
  readonly ageSeconds?: number | undefined
  readonly row: RankLoad
}

/**
 * The load endpoints the live router polls:
 * - `sglang-v1-loads`: SGLang `GET /v1/loads` (every era of the envelope; per-rank `loads[]` mapped
 *   by `dp_rank`), sgl-project/sglang `python/sglang/srt/entrypoints/http_server.py` (PR #16976 on).
 * - `sglang-get-load`: SGLang's deprecated `GET /get_load` list.
 * - `sglang-metrics`: SGLang `GET /metrics` (`sglang:*` gauges per `dp_rank` label).
 * - `vllm-metrics`: vLLM `GET /metrics` (`vllm:num_requests_*`, `vllm:kv_cache_usage_perc`, per
 *   `engine` label).
 * - `trtllm-iteration-stats`: TensorRT-LLM `trtllm-serve` `GET /metrics` (the JSON list of
 *   iteration stats queued since the last read; the latest is the worker's one row, rank 0: give
 *   such a worker `dpSize` 1). The queue is drained by every reader, so an empty list (no iteration
 *   since the last poll, or another reader took it) has no rows and the rank is not reported.
 * - `trtllm-metrics`: TensorRT-LLM `GET /prometheus/metrics` (`trtllm_*` gauges set from the
 *   latest iteration, kept between reads; one row, rank 0): the steadier source of the two.
 *
 * @category models
 * @since 0.1.0
 */
export type SourceKind =
  | "sglang-v1-loads"
  | "sglang-get-load"
  | "sglang-metrics"
  | "vllm-metrics"
  | "trtllm-iteration-stats"
  | "trtllm-metrics"

/**
 * Why the router could not place a request: a request that is not valid (`InvalidInput`, e.g. an
 * `inputLength` that is no token count, `field` naming it), or a router built from a value its
 * constructor refused (also `InvalidInput`, `field` the path to that value from the constructor's
 * arguments: `workers[1].dpSize`, `options.clientCount`, `sources[0].kind`; see `makeRouter`,
 * `startLiveRouter`); no healthy rank at all; a request id
 * already in flight; a `routedDpRank` that is not usable; the policy's own error (kept in the
 * message); or `Overloaded`: every usable rank (or the pinned one) holds `overloadBound` requests
 * in flight (see `RouterOptions`), an explicit refusal (HTTP 503 from the proxy), never a guess.
 *
 * @category errors
 * @since 0.1.0
 */
export interface RouterError {
  readonly _tag: "RouterError"
  readonly reason:
    | "InvalidInput"
    | "NoAvailableRanks"
    | "DuplicateRequestId"
    | "InvalidRoutedRank"
    | "PolicyError"
    | "Overloaded"
  readonly message: string
  readonly field?: string | undefined
  readonly ranks?: ReadonlyArray<RankStatus> | undefined
}
