/**
 * Prometheus metrics for the router itself (prom-client, one registry per router).
 *
 * @since 0.1.0
 */
import { Counter, Gauge, Registry } from "prom-client"
import type { RankStatus } from "./RankStatus.js"
import { observedImbalance } from "./Router.js"

/**
 * The router's metrics. Series (all prefixed `loadledger_router_`):
 * `decisions_total{rank,mode}` (counter, placements per virtual worker `url@dpRank`, `mode` =
 * policy | inflight), `snapshot_age_seconds{rank}` (gauge; absent for a rank that never reported),
 * `rank_known{rank}` (gauge 1/0), `inflight_requests{rank}` (gauge),
 * `poll_failures_total{worker,kind}` (counter; kind = unreachable | timeout | http-status | decode),
 * `decode_failures_total{worker}` (counter), `token_imbalance_ratio` (gauge, max/mean of
 * `numTotalTokens` over known ranks; absent when no rank reported tokens).
 *
 * @example
 * ```ts
 * import { makeRouterMetrics } from "@loadledger/live"
 * const m = makeRouterMetrics(() => ({ ranks: [], inflightPerRank: [] }))
 * m.decision("http://127.0.0.1:30000@0", "policy")
 * const text = await m.registry.metrics()
 * text.includes('loadledger_router_decisions_total{rank="http://127.0.0.1:30000@0",mode="policy"} 1') // => true
 * ```
 *
 * @category metrics
 * @since 0.1.0
 */
export interface RouterMetrics {
  readonly registry: Registry
  readonly decision: (rankId: string, mode: "policy" | "inflight") => void
  readonly pollFailure: (workerUrl: string, kind: string) => void
}

/**
 * Build the router's metrics. `view` is called at scrape time for the gauges.
 *
 * @category metrics
 * @since 0.1.0
 */
export const makeRouterMetrics = (
  view: () => { readonly ranks: ReadonlyArray<RankStatus>; readonly inflightPerRank: ReadonlyArray<number> }
): RouterMetrics => {
  const registry = new Registry()
  const registers = [registry]
  const decisions = new Counter({
    name: "loadledger_router_decisions_total",
    help: "Requests placed, per virtual worker (url@dpRank) and decision mode.",
    labelNames: ["rank", "mode"],
    registers
  })
  const pollFailures = new Counter({
    name: "loadledger_router_poll_failures_total",
    help: "Failed load polls per worker, by kind (unreachable, timeout, http-status, decode).",
    labelNames: ["worker", "kind"],
    registers
  })
  const decodeFailures = new Counter({
    name: "loadledger_router_decode_failures_total",
    help: "Load payloads the schema decoders rejected, per worker.",
    labelNames: ["worker"],
    registers
  })
  new Gauge({
    name: "loadledger_router_snapshot_age_seconds",
    help: "Age of each rank's load data (router clock); absent for ranks that never reported.",
    labelNames: ["rank"],
    registers,
    collect() {
      this.reset()
      for (const s of view().ranks) if (s.ageSeconds !== undefined) this.set({ rank: s.id }, s.ageSeconds)
    }
  })
  new Gauge({
    name: "loadledger_router_rank_known",
    help: "1 when the rank's load data is usable (fresh, decoded, complete), 0 when unknown.",
    labelNames: ["rank"],
    registers,
    collect() {
      this.reset()
      for (const s of view().ranks) this.set({ rank: s.id }, s.known ? 1 : 0)
    }
  })
  new Gauge({
    name: "loadledger_router_inflight_requests",
    help: "Requests this router placed that have not finished or been aborted, per rank.",
    labelNames: ["rank"],
    registers,
    collect() {
      this.reset()
      const v = view()
      for (const s of v.ranks) this.set({ rank: s.id }, v.inflightPerRank[s.index] ?? 0)
    }
  })
  new Gauge({
    name: "loadledger_router_token_imbalance_ratio",
    help: "max/mean of numTotalTokens over known ranks (1 = balanced).",
    registers,
    collect() {
      this.reset()
      const r = observedImbalance(view().ranks)
      if (r !== undefined) this.set(r)
    }
  })
  return {
    registry,
    decision: (rankId, mode) => decisions.inc({ rank: rankId, mode }),
    pollFailure: (workerUrl, kind) => {
      pollFailures.inc({ worker: workerUrl, kind })
      if (kind === "decode") decodeFailures.inc({ worker: workerUrl })
    }
  }
}
