/**
 * Which Prometheus series carry per-rank (SGLang, `dp_rank` label) or per-engine (vLLM, `engine`
 * label) load, and the record field each one fills. Maps, not objects: a metric called
 * `constructor` or `__proto__` is data, never a prototype lookup.
 *
 * Upstream: SGLang `python/sglang/srt/metrics/collector.py` gauges (`sglang:num_running_reqs`, ...,
 * `sglang:num_retracted_reqs`, `sglang:num_paused_reqs`, the PD queue gauges,
 * `sglang:kv_available_tokens`), `/v1/loads?format=prometheus` (`sglang_<key>{dp_rank="N"}`);
 * vLLM `vllm/v1/metrics/loggers.py` (`vllm:num_requests_running`, `vllm:num_requests_waiting`,
 * `vllm:kv_cache_usage_perc`) and V0 `vllm/engine/metrics.py` (`vllm:gpu_cache_usage_perc`,
 * `vllm:cpu_cache_usage_perc`, `vllm:num_requests_swapped`).
 */
import type { LedgerNotice } from "../LedgerNotice.js"
import type { OtherSeries, ParseOptions } from "./expfmtTypes.js"
import { v1LoadsGauges } from "./v1LoadsKeys.js"
import { snake } from "./wire.js"

export const vllmNames: ReadonlyMap<string, string> = new Map([
  ["vllm:num_requests_running", "numRequestsRunning"],
  ["vllm:num_requests_waiting", "numRequestsWaiting"],
  ["vllm:num_requests_swapped", "numRequestsSwapped"],
  ["vllm:kv_cache_usage_perc", "kvCacheUsagePerc"],
  ["vllm:gpu_cache_usage_perc", "gpuCacheUsagePerc"],
  ["vllm:cpu_cache_usage_perc", "cpuCacheUsagePerc"]
])

const sglangColon: ReadonlyArray<readonly [string, string]> = [
  ["sglang:num_running_reqs", "numRunningReqs"],
  ["sglang:num_queue_reqs", "numQueueReqs"],
  ["sglang:num_used_tokens", "numUsedTokens"],
  ["sglang:token_usage", "tokenUsage"],
  ["sglang:gen_throughput", "genThroughput"],
  ["sglang:cache_hit_rate", "cacheHitRate"],
  ["sglang:utilization", "utilization"],
  ["sglang:max_total_num_tokens", "maxTotalNumTokens"],
  ["sglang:max_running_requests", "maxRunningRequests"],
  ["sglang:max_prefill_tokens", "maxPrefillTokens"],
  ["sglang:context_len", "contextLen"],
  ["sglang:num_retracted_reqs", "numRetractedReqs"],
  ["sglang:num_paused_reqs", "numPausedReqs"],
  ["sglang:num_grammar_queue_reqs", "numGrammarQueueReqs"],
  ["sglang:num_prefill_prealloc_queue_reqs", "numPrefillBootstrapQueueReqs"],
  ["sglang:num_prefill_inflight_queue_reqs", "numPrefillInflightQueueReqs"],
  ["sglang:num_decode_prealloc_queue_reqs", "numDecodePreallocQueueReqs"],
  ["sglang:num_decode_transfer_queue_reqs", "numDecodeTransferQueueReqs"],
  ["sglang:kv_available_tokens", "kvAvailableTokens"],
  ["sglang:kv_evictable_tokens", "kvEvictableTokens"]
]
export const sglangNames: ReadonlyMap<string, string> = new Map([
  ...sglangColon,
  ...v1LoadsGauges.map((field) => [`sglang_${snake(field)}`, field] as const)
])

const SUFFIXES = ["_bucket", "_sum", "_count", "_total", "_created", "_info", "_gcount", "_gsum"]

/** The family a sample belongs to: its declared name, or the name without a histogram/counter suffix. */
export const familyOf = (name: string, declared: ReadonlyMap<string, unknown>): string => {
  if (declared.has(name)) return name
  for (const s of SUFFIXES) {
    if (name.endsWith(s)) {
      const base = name.slice(0, -s.length)
      if (declared.has(base)) return base
    }
  }
  return name
}

/**
 * `UnknownSeries` notices for the series a page carries and the decoder does not model, one per
 * family (a histogram's `_bucket` / `_sum` / `_count` samples are one series), restricted to the
 * names `mine` accepts (the exporter's own prefix), with the family's sample count and first line.
 */
export const unknownFamilyNotices = (
  others: Iterable<OtherSeries>,
  declared: ReadonlyMap<string, unknown>,
  mine: (name: string) => boolean
): Array<LedgerNotice> => {
  const families = new Map<string, { samples: number; line: number }>()
  for (const o of others) {
    if (!mine(o.name)) continue
    const f = familyOf(o.name, declared)
    const seen = families.get(f)
    if (seen === undefined) families.set(f, { samples: o.samples, line: o.line })
    else {
      seen.samples += o.samples
      seen.line = Math.min(seen.line, o.line)
    }
  }
  return [...families].map(([series, { samples, line }]) => ({
    _tag: "UnknownSeries" as const,
    series,
    samples,
    line,
    message: `${series} (${samples} samples, first on line ${line}) is not modelled`
  }))
}

/** Whether a metric name belongs to an engine runtime (its per-rank label identifies a rank). */
export const isRuntimeSeries = (name: string): boolean =>
  name.startsWith("vllm:") || name.startsWith("sglang:") || name.startsWith("sglang_")

const forVllm: ParseOptions = { keep: (n) => vllmNames.has(n), rankLabels: ["engine"], ambiguous: true }
const forSglang: ParseOptions = { keep: (n) => sglangNames.has(n), rankLabels: ["dp_rank"], ambiguous: true }
const forEither: ParseOptions = {
  keep: (n) => vllmNames.has(n) || sglangNames.has(n),
  rankLabels: ["engine", "dp_rank"],
  ambiguous: true
}

/**
 * How the decoders parse a page of `kind` (`undefined`: either runtime, detected after): only
 * the modelled series are materialised, the rest counted with their rank labels, and a modelled
 * series seen twice is an `AmbiguousSeries` error.
 */
export const parseFor = (kind: "vllm-metrics" | "sglang-metrics" | undefined): ParseOptions =>
  kind === "vllm-metrics" ? forVllm : kind === "sglang-metrics" ? forSglang : forEither
