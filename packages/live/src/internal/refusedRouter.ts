/**
 * The live router for a refused config: it polls nothing, starts no thread, and answers `error`.
 *
 * @internal
 */
import type { LiveRouter } from "../LiveRouterConfig.js"
import { makeRouterMetrics } from "../Metrics.js"
import type { RouterError } from "../Types.js"

/** A router for a refused config: it polls nothing, starts no thread, and answers `error`. */
export const refusedRouter = (error: RouterError): LiveRouter => {
  const metrics = makeRouterMetrics(() => ({ ranks: [], inflightPerRank: [] }))
  const nothing = () => {}
  return {
    route: () => error,
    finish: () => false,
    abort: () => false,
    ingest: async () => {},
    ingestLoadStatFrame: nothing,
    markUnreachable: nothing,
    eject: nothing,
    retried: nothing,
    addSource: () => error,
    removeSource: () => false,
    ranks: () => [],
    gateways: () => [],
    inflight: () => [],
    decisions: () => [],
    metrics: () => metrics.registry.metrics(),
    metricsContentType: metrics.registry.contentType,
    ready: Promise.resolve(),
    close: async () => {},
    error
  }
}
