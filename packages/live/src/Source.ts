/**
 * Where a worker's load comes from: endpoint, decoder kind, poll interval and timeout.
 *
 * @since 0.1.0
 */
import type { LedgerKind } from "@loadledger/schema"
import type { LoadField, SourceKind, WorkerSpec } from "./Types.js"

/**
 * One physical worker to poll. `url` is the base URL (`http://127.0.0.1:30000`), `dpSize` its DP
 * ranks (one fetch serves them all), `intervalMs` the pause between polls, `timeoutMs` the bound
 * on one poll (connect + headers + body). `path` overrides the endpoint path.
 *
 * `startLiveRouter` checks each source up front: `url` an http(s) base URL without query or
 * fragment, no other source's (trailing slashes dropped); `dpSize` an integer from 1 to 1024;
 * `kind` a `SourceKind`; `intervalMs` and `timeoutMs` from 1 to 2,147,483,647 ms (node's longest
 * timer); `path` absent or starting with `/`. A value outside these is a `RouterError`
 * `InvalidInput` naming it (`sources[0].kind`).
 *
 * @category models
 * @since 0.1.0
 */
export interface SourceSpec extends WorkerSpec {
  readonly kind: SourceKind
  readonly intervalMs: number
  readonly timeoutMs: number
  readonly path?: string | undefined
}

const counts: ReadonlyArray<LoadField> = ["numRunningReqs", "numWaitingReqs"]
const countsAndTokens: ReadonlyArray<LoadField> = ["numRunningReqs", "numWaitingReqs", "numTotalTokens"]

const endpoint: Record<
  SourceKind,
  { readonly path: string; readonly decode: LedgerKind; readonly published: ReadonlyArray<LoadField> }
> = {
  "sglang-v1-loads": { path: "/v1/loads", decode: "v1-loads", published: countsAndTokens },
  "sglang-get-load": { path: "/get_load", decode: "get-load", published: countsAndTokens },
  "sglang-metrics": { path: "/metrics", decode: "sglang-metrics", published: counts },
  "vllm-metrics": { path: "/metrics", decode: "vllm-metrics", published: counts },
  "trtllm-iteration-stats": { path: "/metrics", decode: "trtllm-iteration-stats", published: counts },
  "trtllm-metrics": { path: "/prometheus/metrics", decode: "trtllm-metrics", published: counts }
}

/**
 * The URL a source is polled at.
 *
 * @example
 * ```ts
 * import { sourceUrl } from "@loadledger/live"
 * sourceUrl({ url: "http://127.0.0.1:30000/", dpSize: 2, kind: "sglang-v1-loads", intervalMs: 100, timeoutMs: 50 })
 * // => "http://127.0.0.1:30000/v1/loads"
 * ```
 *
 * @category getters
 * @since 0.1.0
 */
export const sourceUrl = (s: SourceSpec): string =>
  s.url.replace(/\/+$/, "") + (s.path ?? endpoint[s.kind].path)

/**
 * The `decodeLedger` kind for a source.
 *
 * @example
 * ```ts
 * import { sourceDecodeKind } from "@loadledger/live"
 * sourceDecodeKind({ url: "http://h:8000", dpSize: 4, kind: "vllm-metrics", intervalMs: 100, timeoutMs: 50 }) // => "vllm-metrics"
 * ```
 *
 * @category getters
 * @since 0.1.0
 */
export const sourceDecodeKind = (s: SourceSpec): LedgerKind => endpoint[s.kind].decode

/**
 * The load fields a source of this kind publishes for every rank. A row that lacks some of them is
 * **partial**: its rank stays known with what it reported (the absent fields stay absent, never 0)
 * and `RankStatus.missing` names them; a row with no load count at all is `unknown(missing-field)`
 * (see `StatusOptions`). So a cut-off or incomplete payload never turns a rank that reported its
 * running count into an unknown one, and never into an idle one.
 *
 * - `sglang-v1-loads`, `sglang-get-load`: `numRunningReqs`, `numWaitingReqs`, `numTotalTokens`
 *   (`/v1/loads` `num_running_reqs` / `num_waiting_reqs` / `num_total_tokens`; `/get_load`
 *   `num_reqs` minus `num_waiting_reqs`, `num_waiting_reqs`, `num_tokens`): sgl-project/sglang
 *   `python/sglang/srt/managers/load_snapshot.py` @ 025177e4c5b29b64f80609fd1e70c9bb1b59979c and
 *   `python/sglang/srt/entrypoints/http_server.py` (`/get_load`).
 * - `sglang-metrics`: `numRunningReqs`, `numWaitingReqs` (`sglang:num_running_reqs`,
 *   `sglang:num_queue_reqs`); SGLang's collector publishes `sglang:num_used_tokens` but no total
 *   token count (sgl-project/sglang `python/sglang/srt/metrics/collector.py`).
 * - `vllm-metrics`: `numRunningReqs`, `numWaitingReqs` (`vllm:num_requests_running`,
 *   `vllm:num_requests_waiting`, the counts vLLM's own DP balancer reads); vLLM publishes no token
 *   totals (vllm-project/vllm `vllm/v1/metrics/loggers.py`). `kvCacheUsage` is decoded when sent
 *   but not listed (V0 servers name it `vllm:gpu_cache_usage_perc`).
 * - `trtllm-iteration-stats`: `numRunningReqs`, `numWaitingReqs` (`numActiveRequests`,
 *   `numQueuedRequests` of the latest iteration; NVIDIA/TensorRT-LLM
 *   `cpp/tensorrt_llm/executor/jsonSerialization.cpp` @ 086f6921cf23611d51fdb5b06b0acc4ae97aceb8);
 *   KV tokens and usage are decoded when `kvCacheStats` is sent, but not listed.
 * - `trtllm-metrics`: `numRunningReqs`, `numWaitingReqs` (`trtllm_num_requests_running`,
 *   `trtllm_num_requests_waiting`: `tensorrt_llm/metrics/collector.py` @
 *   050f80def8df236e326949c8bd9dee10fd896a83).
 *
 * **When to use**: to see which fields the router expects of a source (what a partial row's
 * `missing` is measured against). To make a rank unknown unless its row holds certain fields, pass
 * the router option `requiredFields` (for instance `["numTotalTokens"]` for a token policy on
 * SGLang); it applies to every worker. A policy that reads a field the source does not publish
 * (`total-tokens` on vLLM) gets rows without it and treats them as its docstring says.
 *
 * @example
 * ```ts
 * import { sourcePublishedFields } from "@loadledger/live"
 * sourcePublishedFields("vllm-metrics") // => ["numRunningReqs", "numWaitingReqs"]
 * sourcePublishedFields("sglang-v1-loads") // => ["numRunningReqs", "numWaitingReqs", "numTotalTokens"]
 * ```
 *
 * @category getters
 * @since 0.3.0
 */
export const sourcePublishedFields = (kind: SourceKind): ReadonlyArray<LoadField> => endpoint[kind].published
