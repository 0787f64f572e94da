/**
 * An llm-d endpoint as the scheduler sees it: scraped metrics, the in-flight load attribute and the
 * request's uncached-token attribute.
 *
 * @since 0.2.0
 */

/**
 * Scraped metrics of an endpoint (`fwkdl.Metrics`), names mapped 1:1 from Go: `WaitingQueueSize`,
 * `RunningRequestsSize`, `KVCacheUsagePercent` (a 0..1 fraction despite the name), `CacheBlockSize`,
 * `CacheNumBlocks`. Upstream reads a field never scraped as the Go zero value; the scorers here do
 * the same (`?? 0`), which is why the `Policy` adapters never hand them an unknown rank as "idle".
 *
 * @category llm-d
 * @since 0.2.0
 */
export interface LlmdMetrics {
  readonly waitingQueueSize?: number | undefined
  readonly runningRequestsSize?: number | undefined
  readonly kvCacheUsagePercent?: number | undefined
  readonly cacheBlockSize?: number | undefined
  readonly cacheNumBlocks?: number | undefined
}

/**
 * The in-flight load attribute (`InFlightLoad`): requests and tokens the router has sent and not
 * yet released.
 *
 * @category llm-d
 * @since 0.2.0
 */
export interface LlmdInFlight {
  readonly requests: number
  readonly tokens: number
}

/**
 * One candidate endpoint. `inFlight` absent = the attribute is absent (token load 0);
 * `uncachedRequestTokens` overrides the producer's estimate when present; `metricsAgeMs` is the
 * time since the last scrape (`null` = never scraped; absent = not tracked, fresh).
 *
 * @category llm-d
 * @since 0.2.0
 */
export interface LlmdEndpoint {
  readonly id: string
  readonly metrics: LlmdMetrics
  readonly inFlight?: LlmdInFlight | undefined
  readonly uncachedRequestTokens?: number | undefined
  readonly metricsAgeMs?: number | null | undefined
}
