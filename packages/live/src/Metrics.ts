/**
 * Prometheus metrics for the router itself (prom-client, one registry per router).
 *
 * @since 0.1.0
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client"

import type { Diagnosis } from "./DiagnoseTypes.js"
import { observedImbalance } from "./Imbalance.js"
import { diagnosisGauges } from "./internal/diagnosisGauges.js"

import type { FallbackReason } from "./Route.js"
import type { RankStatus } from "./Types.js"

/**
 * The router's metrics. Series (all prefixed `loadledger_router_`):
 * `decisions_total{rank,mode}` (counter, placements per virtual worker `url@dpRank`, `mode` =
 * policy | fallback), `fallbacks_total{reason}` (counter, every fallback decision by
 * `FallbackReason`), `retries_total{reason}` (counter, requests re-placed because they provably
 * never reached an engine), `ejections_total{worker}` (counter, passive health-check ejections),
 * `decode_seconds` (histogram, decode time per payload), `snapshot_age_seconds{rank}` (gauge; absent for a rank that never
 * reported), `rank_known{rank}` (gauge 1/0), `rank_partial{rank}` (gauge 1/0: known, but its row
 * lacks fields its source publishes, `RankStatus.missing`), `rank_unhealthy{rank}` (gauge 1/0),
 * `inflight_requests{rank}` (gauge),
 * `poll_failures_total{worker,kind}` (counter; kind = unreachable | timeout | http-status | decode),
 * `decode_failures_total{worker}` (counter), `token_imbalance_ratio` (gauge, max/mean of
 * `numTotalTokens` over known ranks; absent when no rank reported tokens). With `diagnoses`
 * (since 0.7.0; the router passes `diagnoseWindow` over the loads it polled in its window):
 * `loadledger_rank_diagnosis{worker,dp_rank,kind}` 1 (kind hardware | load | expert | ok), the
 * evidence `loadledger_rank_diagnosis_<utilization_ratio|residual|running_skew|request_skew|length_skew|cache_hit_rate_gap>{worker,dp_rank}`
 * (absent where unknown) and per worker `loadledger_group_<diagnosis_reports|sync_wait_share|expert_hot_spot_likely|structural_likely>`. With `processMetrics`,
 * prom-client's default process series too (`process_resident_memory_bytes`,
 * `nodejs_eventloop_lag_p99_seconds`, ...). Label values (worker URLs, rank ids) are written
 * escaped as the text format requires (`\` -> `\\`, `"` -> `\"`, line feed -> `\n`, by
 * prom-client's renderer; `test/metricsEscape.test.ts` round-trips any string), so a hostile
 * worker name cannot break or forge a line of the page.
 *
 * @example
 * ```ts
 * import { makeRouterMetrics } from "@loadledger/live"

 * const m = makeRouterMetrics(() => ({ ranks: [], inflightPerRank: [] }))
 * m.decision("http://127.0.0.1:30000@0", "policy")
 * m.decision("http://127.0.0.1:30000@1", "fallback", "no-known-rank")
 * const text = await m.registry.metrics()
 * text.includes('loadledger_router_decisions_total{rank="http://127.0.0.1:30000@0",mode="policy"} 1') // => true
 * text.includes('loadledger_router_fallbacks_total{reason="no-known-rank"} 1') // => true
 * ```
 *
 * @category metrics
 * @since 0.1.0
 */
export interface RouterMetrics {
  readonly registry: Registry
  readonly decision: (rankId: string, mode: "policy" | "fallback", fallbackReason?: FallbackReason) => void
  readonly retry: (reason: string) => void
  readonly ejection: (workerUrl: string) => void
  readonly decodeSeconds: (seconds: number) => void
  readonly pollFailure: (workerUrl: string, kind: string) => void
}

/**
 * Build the router's metrics. `view` is called at scrape time for the gauges; `processMetrics` adds
 * prom-client's default process and event-loop series to the registry.
 *
 * **When to use**: once per router process, to serve `/metrics`.
 *
 * @example
 * ```ts
 * import { makeRouterMetrics } from "@loadledger/live"

 * const m = makeRouterMetrics(() => ({ ranks: [], inflightPerRank: [] }))
 * m.retry("connect-timeout")
 * const text = await m.registry.metrics()
 * text.includes('loadledger_router_retries_total{reason="connect-timeout"} 1') // => true
 * ```
 *
 * @category metrics
 * @since 0.1.0
 */
export const makeRouterMetrics = (
  view: () => { readonly ranks: ReadonlyArray<RankStatus>; readonly inflightPerRank: ReadonlyArray<number> },
  processMetrics = false,
  diagnoses?: () => ReadonlyArray<{ readonly worker: string; readonly diagnosis: Diagnosis }>
): RouterMetrics => {
  const registry = new Registry()
  const registers = [registry]
  if (diagnoses !== undefined) diagnosisGauges(registers, diagnoses)
  if (processMetrics) collectDefaultMetrics({ register: registry })
  const fallbacks = new Counter({
    name: "loadledger_router_fallbacks_total",
    help: "Decisions taken by the in-flight fallback because no rank was usable by the policy, by reason.",
    labelNames: ["reason"],
    registers
  })
  const decodeTime = new Histogram({
    name: "loadledger_router_decode_seconds",
    help: "Time to decode one load payload (off the routing thread).",
    buckets: [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1],
    registers
  })
  const ejections = new Counter({
    name: "loadledger_router_ejections_total",
    help: "Workers taken out by the proxy's passive health check (consecutive upstream failures).",
    labelNames: ["worker"],
    registers
  })
  const retries = new Counter({
    name: "loadledger_router_retries_total",
    help: "Requests placed again because they provably never reached an engine, by reason.",
    labelNames: ["reason"],
    registers
  })
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
    help: "1 when the rank's load data is usable (fresh, decoded, at least one load count), 0 when unknown.",
    labelNames: ["rank"],
    registers,
    collect() {
      this.reset()
      for (const s of view().ranks) this.set({ rank: s.id }, s.condition === "known" ? 1 : 0)
    }
  })
  new Gauge({
    name: "loadledger_router_rank_partial",
    help: "1 when the rank is known but its row lacks fields its source publishes (routed on what it reported).",
    labelNames: ["rank"],
    registers,
    collect() {
      this.reset()
      for (const s of view().ranks)
        this.set({ rank: s.id }, s.condition === "known" && s.missing !== undefined ? 1 : 0)
    }
  })
  new Gauge({
    name: "loadledger_router_rank_unhealthy",
    help: "1 while the rank's worker failed its last poll (refused, timed out, non-2xx).",
    labelNames: ["rank"],
    registers,
    collect() {
      this.reset()
      for (const s of view().ranks) this.set({ rank: s.id }, s.condition === "unhealthy" ? 1 : 0)
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
      for (const s of v.ranks) this.set({ rank: s.id }, v.inflightPerRank[s.index]!)
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
    decision: (rankId, mode, fallbackReason) => {
      decisions.inc({ rank: rankId, mode })
      if (fallbackReason !== undefined) fallbacks.inc({ reason: fallbackReason })
    },
    retry: (reason) => retries.inc({ reason }),
    ejection: (workerUrl) => ejections.inc({ worker: workerUrl }),
    decodeSeconds: (seconds) => decodeTime.observe(seconds),
    pollFailure: (workerUrl, kind) => {
      pollFailures.inc({ worker: workerUrl, kind })
      if (kind === "decode") decodeFailures.inc({ worker: workerUrl })
    }
  }
}
