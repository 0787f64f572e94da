/**
 * TensorRT-LLM `trtllm-serve` Prometheus page (`GET /prometheus/metrics`, `trtllm_*` series) as
 * ledger rows.
 *
 * Upstream (NVIDIA/TensorRT-LLM, read to learn the series; no code copied):
 * `tensorrt_llm/metrics/collector.py` at 050f80def8df236e326949c8bd9dee10fd896a83
 * (`MetricsCollector.log_iteration_stats`: each gauge is set from the latest iteration stats,
 * labelled with the server's own labels such as `model_name`, never a rank) and
 * `examples/serve/prometheus_metrics.py` (the endpoint path and the `trtllm_` prefix).
 *
 * @since 0.6.0
 */
import * as Result from "effect/Result"
import { type DecodeError, decodeError } from "../DecodeError.js"
import { unknownFamilyNotices } from "../internal/metricNames.js"
import { parseLastScrape } from "../internal/scrapes.js"
import type { LedgerNotice } from "../LedgerNotice.js"
import type { RankLoad } from "../RankLoad.js"

const names: ReadonlyMap<string, string> = new Map([
  ["trtllm_num_requests_running", "running"],
  ["trtllm_num_requests_waiting", "waiting"],
  ["trtllm_max_num_active_requests", "maxActive"],
  ["trtllm_num_paused_requests", "paused"],
  ["trtllm_kv_cache_utilization", "usage"],
  ["trtllm_kv_cache_hit_rate", "hitRate"],
  ["trtllm_kv_cache_max_blocks", "maxBlocks"],
  ["trtllm_kv_cache_free_blocks", "freeBlocks"],
  ["trtllm_kv_cache_used_blocks", "usedBlocks"],
  ["trtllm_kv_cache_tokens_per_block", "tokensPerBlock"]
])

/**
 * Decode a `trtllm-serve` `/prometheus/metrics` page (text) to ledger rows, pushing notices.
 *
 * **Rows**: one, rank 0 (the page carries no rank label: `DefaultedIdentity`):
 * `trtllm_num_requests_running` -> `numRunningReqs`, `trtllm_num_requests_waiting` ->
 * `numWaitingReqs`, `trtllm_max_num_active_requests` -> `maxRunningRequests`,
 * `trtllm_num_paused_requests` -> `numPausedReqs`, `trtllm_kv_cache_utilization` ->
 * `kvCacheUsage`, `trtllm_kv_cache_hit_rate` -> `prefixCacheHitRate`; with
 * `trtllm_kv_cache_tokens_per_block`, used / max / free blocks times it -> `numUsedTokens` /
 * `maxTotalNumTokens` / `kvAvailableTokens`. A gauge the page lacks stays absent (upstream sets
 * each only once an iteration carried it). Other `trtllm_*` series: an `UnknownSeries` notice
 * each; a modelled gauge declared without samples: `DeclaredWithoutSamples`.
 *
 * **Errors**: a syntax error names its line; a modelled gauge with two samples (two label sets,
 * e.g. two models behind one page) is `AmbiguousSeries` on the second's line; a page with no
 * modelled gauge is `UnknownSeries`. Bad numbers make the row `unknown` (the ledger's audit).
 *
 * **When to use**: through `decodeLedger(text, "trtllm-metrics")` (or `auto`, which detects
 * `trtllm_` names); directly when routing the page yourself.
 *
 * @example
 * ```ts
 * import { decodeTrtllmMetrics } from "@loadledger/schema"
 * const r = decodeTrtllmMetrics('trtllm_num_requests_running{model_name="m"} 4\ntrtllm_num_requests_waiting{model_name="m"} 2\n', [])
 * r._tag === "Success" && r.success // => [{ dpRank: 0, numRunningReqs: 4, numWaitingReqs: 2 }]
 * ```
 *
 * @category TensorRT-LLM
 * @since 0.6.0
 */
export const decodeTrtllmMetrics = (
  text: string,
  notices: Array<LedgerNotice>
): Result.Result<Array<RankLoad>, DecodeError> =>
  Result.flatMap(
    parseLastScrape(text, notices, { keep: (n) => names.has(n), rankLabels: [], ambiguous: true }),
    (e) => {
      const v = new Map<string, number>()
      const firstLine = new Map<string, number>()
      for (const s of e.samples) {
        const key = names.get(s.name)!
        if (v.has(key))
          return Result.fail(
            decodeError(
              "AmbiguousSeries",
              `${s.name} has more than one sample (lines ${firstLine.get(key)} and ${s.line}): no single value for the rank`,
              { line: s.line }
            )
          )
        v.set(key, s.value)
        firstLine.set(key, s.line)
      }
      notices.push(...unknownFamilyNotices(e.others.values(), e.declared, (n) => n.startsWith("trtllm_")))
      for (const name of e.declared.keys())
        if (names.has(name) && !v.has(names.get(name)!))
          notices.push({
            _tag: "DeclaredWithoutSamples",
            series: name,
            message: `${name} is declared without samples: its field is absent (not 0)`
          })
      if (v.size === 0)
        return Result.fail(
          decodeError(
            "UnknownSeries",
            "no TensorRT-LLM load gauge (trtllm_num_requests_running, ...) on the page",
            {
              line: 1
            }
          )
        )
      const row: { -readonly [K in keyof RankLoad]: RankLoad[K] } = { dpRank: 0 }
      const put = (field: keyof RankLoad, key: string) => {
        const x = v.get(key)
        if (x !== undefined) (row as Record<string, unknown>)[field] = x
      }
      put("numRunningReqs", "running")
      put("numWaitingReqs", "waiting")
      put("maxRunningRequests", "maxActive")
      put("numPausedReqs", "paused")
      put("kvCacheUsage", "usage")
      put("prefixCacheHitRate", "hitRate")
      const tpb = v.get("tokensPerBlock")
      if (tpb !== undefined) {
        const times = (field: "numUsedTokens" | "maxTotalNumTokens" | "kvAvailableTokens", key: string) => {
          const b = v.get(key)
          if (b !== undefined) row[field] = b * tpb
        }
        times("numUsedTokens", "usedBlocks")
        times("maxTotalNumTokens", "maxBlocks")
        times("kvAvailableTokens", "freeBlocks")
      }
      notices.push({
        _tag: "DefaultedIdentity",
        dpRank: 0,
        line: e.samples[0]!.line,
        message: "the TensorRT-LLM Prometheus page carries no rank label: its gauges are read as rank 0"
      })
      return Result.succeed([row])
    }
  )

/**
 * Whether any metric name of a text is a TensorRT-LLM series (`trtllm_` prefix at a line start).
 *
 * **When to use**: `decodeLedger`'s `auto` detection.
 *
 * @example
 * ```ts
 * import { looksLikeTrtllmMetrics } from "@loadledger/schema"
 * looksLikeTrtllmMetrics("# TYPE trtllm_num_requests_running gauge\n") // => true
 * looksLikeTrtllmMetrics("vllm:num_requests_running 1\n") // => false
 * ```
 *
 * @category TensorRT-LLM
 * @since 0.6.0
 */
export const looksLikeTrtllmMetrics = (text: string): boolean =>
  /^(?:#\s*(?:HELP|TYPE)\s+)?trtllm_/m.test(text)
