/**
 * AIBrix gateway pods and their metrics, as the routing algorithms read them.
 *
 * @since 0.2.0
 */

/**
 * A histogram metric as AIBrix reads it: its sum and count (`GetMean` = count == 0 ? 0 : sum/count).
 *
 * @category aibrix
 * @since 0.2.0
 */
export interface AibrixHistogram {
  readonly sum: number
  readonly count: number
}

/**
 * One ready pod: its name and the metrics the gateway cache holds for it, keyed by AIBrix's metric
 * names (`realtime_num_requests_running`, `avg_prompt_toks_per_req`, `avg_generation_toks_per_req`,
 * `kv_cache_usage_perc`, `cpu_cache_usage_perc`, `gpu_cache_usage_perc`, `gpu_busy_time_ratio`,
 * `request_queue_time_seconds`; histograms `request_prefill_time_seconds`,
 * `request_decode_time_seconds`). An absent key is a missing metric (the cache returns an error).
 *
 * @category aibrix
 * @since 0.2.0
 */
export interface AibrixPod {
  readonly id: string
  readonly metrics: Readonly<Record<string, number | AibrixHistogram | undefined>>
}

/**
 * A gauge metric of a pod, `undefined` when missing (or when the key holds a histogram).
 *
 * @example
 * ```ts
 * import { Aibrix } from "@loadledger/policies"
 * Aibrix.gauge({ id: "p1", metrics: { gpu_busy_time_ratio: 0.5 } }, "gpu_busy_time_ratio") // => 0.5
 * Aibrix.gauge({ id: "p1", metrics: {} }, "gpu_busy_time_ratio") // => undefined
 * ```
 *
 * @category aibrix
 * @since 0.2.0
 */
export const gauge = (p: AibrixPod, name: string): number | undefined => {
  const v = p.metrics[name]
  return typeof v === "number" ? v : undefined
}

/**
 * The mean of a histogram metric (`GetMean`: 0 when its count is 0), `undefined` when missing.
 *
 * @example
 * ```ts
 * import { Aibrix } from "@loadledger/policies"
 * const p = { id: "p1", metrics: { request_prefill_time_seconds: { sum: 3, count: 2 } } }
 * Aibrix.histogramMean(p, "request_prefill_time_seconds") // => 1.5
 * ```
 *
 * @category aibrix
 * @since 0.2.0
 */
export const histogramMean = (p: AibrixPod, name: string): number | undefined => {
  const v = p.metrics[name]
  return v === undefined || typeof v === "number" ? undefined : v.count === 0 ? 0 : v.sum / v.count
}
