/**
 * Where a worker's load comes from: endpoint, decoder kind, poll interval and timeout.
 *
 * @since 0.1.0
 */
import type { LedgerKind } from "@loadledger/schema"
import type { WorkerSpec } from "./LastHeard.js"

/**
 * The load endpoints the live router polls:
 * - `sglang-v1-loads`: SGLang `GET /v1/loads` (every era of the envelope; per-rank `loads[]` mapped
 *   by `dp_rank`), sgl-project/sglang `python/sglang/srt/entrypoints/http_server.py` (PR #16976 on).
 * - `sglang-get-load`: SGLang's deprecated `GET /get_load` list.
 * - `sglang-metrics`: SGLang `GET /metrics` (`sglang:*` gauges per `dp_rank` label).
 * - `vllm-metrics`: vLLM `GET /metrics` (`vllm:num_requests_*`, `vllm:kv_cache_usage_perc`, per
 *   `engine` label).
 *
 * @category models
 * @since 0.1.0
 */
export type SourceKind = "sglang-v1-loads" | "sglang-get-load" | "sglang-metrics" | "vllm-metrics"

/**
 * One physical worker to poll. `url` is the base URL (`http://127.0.0.1:30000`), `dpSize` its DP
 * ranks (one fetch serves them all), `intervalMs` the pause between polls, `timeoutMs` the bound
 * on one poll (connect + headers + body). `path` overrides the endpoint path.
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

const endpoint: Record<SourceKind, { readonly path: string; readonly decode: LedgerKind }> = {
  "sglang-v1-loads": { path: "/v1/loads", decode: "v1-loads" },
  "sglang-get-load": { path: "/get_load", decode: "get-load" },
  "sglang-metrics": { path: "/metrics", decode: "sglang-metrics" },
  "vllm-metrics": { path: "/metrics", decode: "vllm-metrics" }
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
