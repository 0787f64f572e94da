/**
 * llm-d's `utilization-detector` (flow-control saturation detector, usable as a profile filter):
 * llm-d's rule for stale metrics.
 *
 * @since 0.2.0
 */
import type { LlmdEndpoint } from "./Endpoint.js"

/**
 * Detector thresholds (defaults: queue depth 5, KV utilisation 0.8, staleness 200 ms, headroom 0).
 *
 * @category llm-d
 * @since 0.2.0
 */
export interface LlmdDetectorConfig {
  readonly queueDepthThreshold?: number | undefined
  readonly kvCacheUtilThreshold?: number | undefined
  readonly metricsStalenessThresholdMs?: number | undefined
  readonly headroom?: number | undefined
}

/**
 * What the detector decided: indices kept (all of them when none passes: fail-open), indices stale,
 * and the pool saturation.
 *
 * @category llm-d
 * @since 0.2.0
 */
export interface LlmdDetection {
  readonly kept: ReadonlyArray<number>
  readonly stale: ReadonlyArray<number>
  readonly saturation: number
}

/**
 * The utilization detector over candidates: an endpoint is stale when never scraped
 * (`metricsAgeMs === null`) or older than the threshold (strict); saturation = mean over candidates
 * of `stale ? 1 : max(q/qT, kv/kvT)` (1 for no candidates); filter keeps the fresh endpoints with
 * `q < qT*(1+headroom)` and `kv < kvT*(1+headroom)`, all of them when none passes. Scorers ignore
 * metric age: only this filter (when a profile lists it) treats stale metrics.
 *
 * **When to use**: llm-d's rule for stale or missing metrics.
 *
 * Upstream: llm-d/llm-d-router `pkg/epp/framework/plugins/flowcontrol/saturationdetector/utilization/
 * {detector,config}.go` at ebab687927f5331c1b39defcb579a07951bce56c.
 *
 * @example
 * ```ts
 * import { LlmD } from "@loadledger/policies"
 * const eps = [
 *   { id: "w0", metrics: { waitingQueueSize: 1, kvCacheUsagePercent: 0.1 }, metricsAgeMs: 0 },
 *   { id: "w1", metrics: { waitingQueueSize: 0, kvCacheUsagePercent: 0 }, metricsAgeMs: 500 }
 * ]
 * LlmD.utilizationDetect(eps, {}) // => { kept: [0], stale: [1], saturation: 0.6 }
 * ```
 *
 * @category llm-d
 * @since 0.2.0
 */
export const utilizationDetect = (eps: ReadonlyArray<LlmdEndpoint>, c: LlmdDetectorConfig): LlmdDetection => {
  const qT = c.queueDepthThreshold ?? 5
  const kvT = c.kvCacheUtilThreshold ?? 0.8
  const ageT = c.metricsStalenessThresholdMs ?? 200
  const h = c.headroom ?? 0.0
  const isStale = eps.map(
    (e) => e.metricsAgeMs === null || (e.metricsAgeMs !== undefined && e.metricsAgeMs > ageT)
  )
  let sum = 0
  eps.forEach((e, i) => {
    sum += isStale[i]
      ? 1.0
      : Math.max((e.metrics.waitingQueueSize ?? 0) / qT, (e.metrics.kvCacheUsagePercent ?? 0) / kvT)
  })
  const saturation = eps.length === 0 ? 1.0 : sum / eps.length
  const qLimit = qT * (1 + h)
  const kvLimit = kvT * (1 + h)
  const all = eps.map((_, i) => i)
  const kept = all.filter(
    (i) =>
      !isStale[i] &&
      (eps[i]!.metrics.waitingQueueSize ?? 0) < qLimit &&
      (eps[i]!.metrics.kvCacheUsagePercent ?? 0) < kvLimit
  )
  return { kept: kept.length === 0 ? all : kept, stale: all.filter((i) => isStale[i]), saturation }
}
