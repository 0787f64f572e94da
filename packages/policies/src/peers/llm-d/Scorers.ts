/**
 * llm-d's scheduling scorers, each a pure function of the candidate endpoints (and the request's
 * prefix-match and uncached-token estimates), returning the raw score per candidate.
 *
 * @since 0.2.0
 */
import type { LlmdEndpoint } from "./Endpoint.js"

/**
 * The scorer types reproduced.
 *
 * @category llm-d
 * @since 0.2.0
 */
export type LlmdScorerType =
  | "queue-scorer"
  | "running-requests-size-scorer"
  | "kv-cache-utilization-scorer"
  | "load-aware-scorer"
  | "active-request-scorer"
  | "token-load-scorer"
  | "prefix-cache-scorer"

/**
 * Per-request inputs some scorers read: the prefix-match info per candidate
 * (`PrefixCacheMatchInfo`) and the uncached request tokens per candidate (token load).
 *
 * @category llm-d
 * @since 0.2.0
 */
export interface LlmdScoreContext {
  readonly prefix?:
    | ReadonlyArray<{
        readonly matchBlocks: number
        readonly totalBlocks: number
        readonly blockSizeTokens: number
      }>
    | undefined
  readonly uncachedTokens?: ReadonlyArray<number> | undefined
}

const minMax = (xs: ReadonlyArray<number>): Array<number> => {
  let mn = Number.POSITIVE_INFINITY
  let mx = Number.NEGATIVE_INFINITY
  for (const x of xs) {
    mn = Math.min(mn, x)
    mx = Math.max(mx, x)
  }
  return xs.map((q) => (mx === mn ? 1.0 : (mx - q) / (mx - mn)))
}

const param = (p: Readonly<Record<string, unknown>> | undefined, k: string): number | undefined =>
  typeof p?.[k] === "number" ? (p[k] as number) : undefined

/**
 * Raw scores of one llm-d scorer over the candidates, in order, before the profile's clamp to [0, 1]:
 * queue / running-requests (`(max - x)/(max - min)`, 1 when all equal), kv-cache-utilization
 * (`1 - usage`), load-aware (`0.5` idle, else `0.5 * (1 - min(q, T)/T)`, T = `threshold` 128),
 * active-request (1 at or below `idleThreshold`, else `(max - c)/max * maxBusyScore`), token-load
 * (`1 - min(t, T)/T` over in-flight + uncached tokens, T = `queueThresholdTokens` 4194304), prefix-cache
 * (`mlw * min(1, match*bs/scale)^2 + (1 - mlw) * match/total`, 0 with no blocks).
 *
 * **When to use**: the numbers an llm-d profile weighs; {@link runLlmdProfile} combines them.
 *
 * Upstream: llm-d/llm-d-router `pkg/epp/framework/plugins/scheduling/scorer/{queuedepth/queue.go,
 * runningrequests/runningrequest.go, kvcacheutilization/kvcache_utilization.go, loadaware/load_aware.go,
 * activerequest/active_request.go, tokenload/token_load.go, prefix/plugin.go}` at
 * ebab687927f5331c1b39defcb579a07951bce56c.
 *
 * @example
 * ```ts
 * import { LlmD } from "@loadledger/policies"
 * const eps = [10, 5, 0].map((q, i) => ({ id: `w${i}`, metrics: { waitingQueueSize: q } }))
 * LlmD.llmdScores("queue-scorer", undefined, eps, {}) // => [0, 0.5, 1]
 * LlmD.llmdScores("load-aware-scorer", { threshold: 10 }, eps, {}) // => [0, 0.25, 0.5]
 * ```
 *
 * @category llm-d
 * @since 0.2.0
 */
export const llmdScores = (
  type: LlmdScorerType,
  params: Readonly<Record<string, unknown>> | undefined,
  eps: ReadonlyArray<LlmdEndpoint>,
  ctx: LlmdScoreContext
): Array<number> => {
  switch (type) {
    case "queue-scorer":
      return minMax(eps.map((e) => e.metrics.waitingQueueSize ?? 0))
    case "running-requests-size-scorer":
      return minMax(eps.map((e) => e.metrics.runningRequestsSize ?? 0))
    case "kv-cache-utilization-scorer":
      return eps.map((e) => 1 - (e.metrics.kvCacheUsagePercent ?? 0))
    case "load-aware-scorer": {
      const t0 = param(params, "threshold") ?? 128
      const t = t0 <= 0 ? 128 : t0
      return eps.map((e) => {
        const q = e.metrics.waitingQueueSize ?? 0
        return q === 0 ? 0.5 : 0.5 * (1.0 - Math.min(q, t) / t)
      })
    }
    case "active-request-scorer": {
      const idle = Math.max(0, param(params, "idleThreshold") ?? 0)
      const b = param(params, "maxBusyScore") ?? 1.0
      const busy = b < 0 || b > 1 ? 1.0 : b
      const cs = eps.map((e) => e.inFlight?.requests ?? 0)
      let max = 0
      for (const c of cs) max = Math.max(max, c)
      return cs.map((c) => (c <= idle ? 1.0 : ((max - c) / max) * busy))
    }
    case "token-load-scorer": {
      const t0 = param(params, "queueThresholdTokens") ?? 4194304
      const t = t0 <= 0 ? 4194304 : t0
      return eps.map((e, i) => {
        const x = (e.inFlight?.tokens ?? 0) + (ctx.uncachedTokens?.[i] ?? e.uncachedRequestTokens ?? 0)
        return x <= 0 ? 1.0 : 1.0 - Math.min(x, t) / t
      })
    }
    case "prefix-cache-scorer": {
      const w = param(params, "matchLengthWeight") ?? 0.0
      const scale = param(params, "matchLengthScaleTokens") ?? 8192
      return eps.map((_, i) => {
        const m = ctx.prefix?.[i]
        if (m === undefined || m.totalBlocks === 0) return 0.0
        let mls = 0
        if (w > 0 && m.blockSizeTokens > 0) {
          const r = Math.min(1, (m.matchBlocks * m.blockSizeTokens) / scale)
          mls = r * r
        }
        return w * mls + ((1 - w) * m.matchBlocks) / m.totalBlocks
      })
    }
  }
}
