/**
 * Prometheus `/metrics` text from vLLM and SGLang, decoded to per-engine / per-rank records.
 *
 * Rules (issue 2): a metric declared (`# HELP`/`# TYPE`) with no samples is absent, never 0; the
 * same series twice, or two series of one metric that land on the same rank (e.g. per-rank gauges
 * without a `dp_rank` label), is an `AmbiguousSeries` error, never last-writer-wins; garbage is a
 * `SyntaxError` with its line; a load gauge of `NaN` / `±Inf` is an `InvalidField` error with its line;
 * a last sample line with no newline after it (the body was cut off: `12.0` cut to `1` still parses)
 * is not read, so its field stays absent (`decodeLedgerReport` names it in a `CutLine` notice); a
 * text whose only line is cut so is a `SyntaxError` on that line, which also says when the text's
 * lines end in a carriage return alone or the text is JSON.
 * Parsed by the strict parser in `internal/prometheus.ts`
 * (`parse-prometheus-text-format` was evaluated and rejected: see that file).
 *
 * Upstream names: vLLM `vllm:num_requests_running`, `vllm:num_requests_waiting`,
 * `vllm:kv_cache_usage_perc` (older `vllm:gpu_cache_usage_perc`, vllm PR #30041 / #18354), label
 * `engine`; SGLang `sglang:*` gauges with `dp_rank` labels (PR #7597), the oldest `name=` label
 * scheme (PR #1853), and `/v1/loads?format=prometheus` gauges `sglang_<key>{dp_rank="N"}`.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import type { DecodeError } from "./DecodeError.js"
import { groupExposition } from "./internal/metricGroup.js"
import { parseFor, sglangNames, vllmNames } from "./internal/metricNames.js"
import {
  completeLines,
  type Exposition,
  notExposition,
  nothingExposed,
  onlyLineCut,
  parseExposition
} from "./internal/prometheus.js"
import type { DecodedMetrics, SglangRankMetrics, VllmEngineMetrics } from "./MetricsRecords.js"
import type { EngineCounts } from "./Vllm.js"

// The vLLM and SGLang decoder pairs below look alike by shape only: their shared logic is
// `groupExposition`; what differs (names, labels, fields, documented examples) is each runtime's own.

/** Parse the complete lines of `text`, read them with `of`, and name the line left out. */
const ofCompleteLines = <R>(
  text: string,
  as: "vllm-metrics" | "sglang-metrics",
  of: (e: Exposition) => Result.Result<DecodedMetrics<R>, DecodeError>
): Result.Result<DecodedMetrics<R>, DecodeError> => {
  const bad = notExposition(text, as)
  if (bad !== undefined) return Result.fail(bad)
  const { complete, cutLine } = completeLines(text)
  // the only line was cut: nothing to read, which is no empty page
  if (cutLine !== undefined && complete.trim() === "") return Result.fail(onlyLineCut(cutLine))
  const r = Result.flatMap(parseExposition(complete, parseFor(as)), (e) => {
    const none = nothingExposed(e, as)
    return none === undefined ? of(e) : Result.fail(none)
  })
  return cutLine === undefined ? r : Result.map(r, (d) => ({ ...d, cutLine }))
}

/**
 * Decode vLLM `/metrics` text to one record per `engine` label (no label: engine 0).
 *
 * @example
 * ```ts
 * import { decodeVllmMetrics } from "@loadledger/schema"
 * const r = decodeVllmMetrics('vllm:num_requests_running{engine="1"} 8.0\n')
 * r._tag === "Success" && r.success.records[0] // => { engine: 1, numRequestsRunning: 8 }
 * ```
 *
 * **When to use**: vLLM engines without a load endpoint (S09).
 *
 * @category Metrics
 * @since 0.1.0
 */
export const decodeVllmMetrics = (
  text: string
): Result.Result<DecodedMetrics<VllmEngineMetrics>, DecodeError> =>
  ofCompleteLines(text, "vllm-metrics", (e) => vllmOfExposition(e))

/**
 * vLLM records of an already parsed exposition (not exported from the package: `decodeLedger`
 * parses once and reads it with this, `sglangOfExposition` and `runtimeOfExposition`).
 *
 * @example
 * ```ts
 * import { parseExposition } from "./internal/prometheus.js"
 * import { vllmOfExposition } from "./Metrics.js"
 * import { Result } from "effect"
 * const e = Result.getOrThrow(parseExposition('vllm:num_requests_waiting{engine="0"} 3\n'))
 * const r = vllmOfExposition(e)
 * r._tag === "Success" && r.success.records[0] // => { engine: 0, numRequestsWaiting: 3 }
 * ```
 *
 * @since 0.1.0
 */
export const vllmOfExposition = (
  e: Exposition,
  strict = true
): Result.Result<DecodedMetrics<VllmEngineMetrics>, DecodeError> =>
  groupExposition(e, vllmNames, "engine", "engine", strict) as Result.Result<
    DecodedMetrics<VllmEngineMetrics>,
    DecodeError
  >

/**
 * Decode SGLang `/metrics` text (or `/v1/loads?format=prometheus`) to one record per `dp_rank`
 * label (no label, as in the oldest `name=` scheme or a single rank: rank 0).
 *
 * @example
 * ```ts
 * import { decodeSglangMetrics } from "@loadledger/schema"
 * const r = decodeSglangMetrics('sglang_num_total_tokens{dp_rank="2"} 3000\n')
 * r._tag === "Success" && r.success.records[0] // => { dpRank: 2, numTotalTokens: 3000 }
 * ```
 *
 * **When to use**: SGLang builds without `/v1/loads`, or its Prometheus form.
 *
 * @category Metrics
 * @since 0.1.0
 */
export const decodeSglangMetrics = (
  text: string
): Result.Result<DecodedMetrics<SglangRankMetrics>, DecodeError> =>
  ofCompleteLines(text, "sglang-metrics", (e) => sglangOfExposition(e))

/**
 * SGLang records of an already parsed exposition (not exported from the package; see
 * `vllmOfExposition`).
 *
 * @example
 * ```ts
 * import { parseExposition } from "./internal/prometheus.js"
 * import { sglangOfExposition } from "./Metrics.js"
 * import { Result } from "effect"
 * const e = Result.getOrThrow(parseExposition('sglang_num_running_reqs{dp_rank="1"} 4\n'))
 * const r = sglangOfExposition(e)
 * r._tag === "Success" && r.success.records[0] // => { dpRank: 1, numRunningReqs: 4 }
 * ```
 *
 * @since 0.1.0
 */
export const sglangOfExposition = (
  e: Exposition,
  strict = true
): Result.Result<DecodedMetrics<SglangRankMetrics>, DecodeError> =>
  groupExposition(e, sglangNames, "dp_rank", "dpRank", strict) as Result.Result<
    DecodedMetrics<SglangRankMetrics>,
    DecodeError
  >

/**
 * Which runtime an exposition text comes from, by its metric names (samples or declarations):
 * `vllm`, `sglang`, or `undefined`. Fails on text that does not parse.
 *
 * @example
 * ```ts
 * import { detectMetricsRuntime } from "@loadledger/schema"
 * const r = detectMetricsRuntime("# TYPE vllm:num_requests_running gauge\n")
 * r._tag === "Success" && r.success // => "vllm"
 * ```
 *
 * **When to use**: choosing between `decodeVllmMetrics` and `decodeSglangMetrics`.
 *
 * @category Metrics
 * @since 0.1.0
 */
export const detectMetricsRuntime = (
  text: string
): Result.Result<"vllm" | "sglang" | undefined, DecodeError> =>
  Result.map(parseExposition(text, { keep: () => false }), runtimeOfExposition)

/**
 * The runtime of an already parsed exposition, by its metric names (not exported from the
 * package; see `vllmOfExposition`).
 *
 * @example
 * ```ts
 * import { parseExposition } from "./internal/prometheus.js"
 * import { runtimeOfExposition } from "./Metrics.js"
 * import { Result } from "effect"
 * runtimeOfExposition(Result.getOrThrow(parseExposition("sglang_num_running_reqs 4\n"))) // => "sglang"
 * runtimeOfExposition(Result.getOrThrow(parseExposition("up 1\n"))) // => undefined
 * ```
 *
 * @since 0.1.0
 */
export const runtimeOfExposition = (e: Exposition): "vllm" | "sglang" | undefined => {
  const names = [...e.samples.map((s) => s.name), ...e.others.keys(), ...e.declared.keys()]
  if (names.some((n) => n.startsWith("vllm:"))) return "vllm"
  if (names.some((n) => n.startsWith("sglang:") || n.startsWith("sglang_"))) return "sglang"
  return undefined
}

/**
 * vLLM's `EngineCounts` `[waiting, running, kvCacheUsage]` from an engine's gauges, or
 * `undefined` when any of the three is missing (a snapshot that needs the KV gauge is none, never
 * zeros). `kv_cache_usage_perc` wins over the deprecated `gpu_cache_usage_perc`.
 *
 * @example
 * ```ts
 * import { toEngineCounts } from "@loadledger/schema"
 * toEngineCounts({ engine: 0, numRequestsRunning: 0, numRequestsWaiting: 0, gpuCacheUsagePerc: 0 }) // => [0, 0, 0]
 * toEngineCounts({ engine: 0, numRequestsRunning: 3 }) // => undefined
 * ```
 *
 * **When to use**: feeding vLLM's balancer model from `/metrics`.
 *
 * @category Metrics
 * @since 0.1.0
 */
export const toEngineCounts = (m: VllmEngineMetrics): EngineCounts | undefined => {
  const kv = m.kvCacheUsagePerc ?? m.gpuCacheUsagePerc
  if (m.numRequestsWaiting === undefined || m.numRequestsRunning === undefined || kv === undefined)
    return undefined
  return [m.numRequestsWaiting, m.numRequestsRunning, kv]
}
