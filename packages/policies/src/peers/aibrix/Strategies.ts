/**
 * AIBrix's single routing strategies (`Route` of least-request, throughput, least-kv-cache,
 * least-gpu-cache, least-busy-time, least-latency, random), exact on upstream-shaped inputs with
 * explicit draws for every `rand.Intn`.
 *
 * @since 0.2.0
 */
import { type DrawSource, drawAt } from "../Draws.js"
import { type AibrixPod, gauge, histogramMean } from "./Pods.js"

/**
 * The metric-scored AIBrix strategies (lower is better for all of them).
 *
 * @category aibrix
 * @since 0.2.0
 */
export type AibrixScoredStrategy =
  | "least-request"
  | "throughput"
  | "least-kv-cache"
  | "least-gpu-cache"
  | "least-busy-time"
  | "least-latency"
  | "load-balance"
  | "least-utilization"

/**
 * The AIBrix strategies this module routes with.
 *
 * @category aibrix
 * @since 0.2.0
 */
export type AibrixStrategy = AibrixScoredStrategy | "random"

/**
 * One strategy's raw score per pod (same order as the pods), `undefined` for a pod the strategy does
 * not score (a metric it needs is missing). least-request scores every pod (missing running count =
 * 0); throughput `2*avg_prompt_toks_per_req + avg_generation_toks_per_req`; least-kv-cache
 * `kv_cache_usage_perc + cpu_cache_usage_perc`; least-gpu-cache `gpu_cache_usage_perc`;
 * least-busy-time `gpu_busy_time_ratio`; least-latency `queue + mean(prefill)/ap*guessPrompt +
 * mean(decode)/ag*guessGen` (guesses: mean of the positive prompt / generation averages over the
 * pods, 10 and 100 when none); load-balance (proposed, vllm-project/aibrix#2365) the pending time
 * `realtime_num_requests_running / capacity` of every pod, the count 0 when missing, the capacity
 * the pod's `realtime_running_requests_drain_rate_1m` when positive, else 1; least-utilization (since 0.8.0)
 * `engine_utilization` (only xLLM reports it upstream).
 *
 * **When to use**: the per-pod numbers an AIBrix strategy compares (its `ScoreAll`).
 *
 * Upstream: vllm-project/aibrix `pkg/plugins/gateway/algorithms/{least_request,throughput,
 * least_kv_cache,least_gpu_cache,least_busy_time,least_latency}.go` at
 * e3e10f9e4aebe9aac5e7d992fb87d2648e01628b; load-balance: `load_balance.go` (`ScoreAll`,
 * `capacityOf`) at cd1e1fcc587c6760e14b6a69f774c0395e620006, the head of the open PR #2365.
 *
 * @example
 * ```ts
 * import { Aibrix } from "@loadledger/policies"
 * const pods = [
 *   { id: "p1", metrics: { avg_prompt_toks_per_req: 1, avg_generation_toks_per_req: 2 } },
 *   { id: "p2", metrics: { avg_prompt_toks_per_req: 2 } }
 * ]
 * Aibrix.strategyScores("throughput", pods) // => [4, undefined]
 * Aibrix.strategyScores("least-request", pods) // => [0, 0]
 * const drained = [
 *   { id: "p1", metrics: { realtime_num_requests_running: 8, realtime_running_requests_drain_rate_1m: 4 } },
 *   { id: "p2", metrics: { realtime_running_requests_drain_rate_1m: 0 } }
 * ]
 * Aibrix.strategyScores("load-balance", drained) // => [2, 0]
 * ```
 *
 * @category aibrix
 * @since 0.2.0
 */
export const strategyScores = (
  strategy: AibrixScoredStrategy,
  pods: ReadonlyArray<AibrixPod>
): Array<number | undefined> => {
  switch (strategy) {
    case "least-request":
      return pods.map((p) => gauge(p, "realtime_num_requests_running") ?? 0)
    case "load-balance":
      return pods.map((p) => {
        const drain = gauge(p, "realtime_running_requests_drain_rate_1m")
        return (
          (gauge(p, "realtime_num_requests_running") ?? 0) / (drain !== undefined && drain > 0 ? drain : 1)
        )
      })
    case "throughput":
      return pods.map((p) => {
        const a = gauge(p, "avg_prompt_toks_per_req")
        const b = gauge(p, "avg_generation_toks_per_req")
        return a === undefined || b === undefined ? undefined : 2 * a + b
      })
    case "least-kv-cache":
      return pods.map((p) => {
        const a = gauge(p, "kv_cache_usage_perc")
        const b = gauge(p, "cpu_cache_usage_perc")
        return a === undefined || b === undefined ? undefined : a + b
      })
    case "least-gpu-cache":
      return pods.map((p) => gauge(p, "gpu_cache_usage_perc"))
    case "least-busy-time":
      return pods.map((p) => gauge(p, "gpu_busy_time_ratio"))
    case "least-utilization":
      return pods.map((p) => gauge(p, "engine_utilization"))
    case "least-latency": {
      const guess = (name: string, dflt: number): number => {
        let s = 0
        let n = 0
        for (const p of pods) {
          const v = gauge(p, name)
          if (v !== undefined && v > 0) {
            s += v
            n++
          }
        }
        return n === 0 ? dflt : s / n
      }
      const gp = guess("avg_prompt_toks_per_req", 10.0)
      const gg = guess("avg_generation_toks_per_req", 100.0)
      return pods.map((p) => {
        const q = gauge(p, "request_queue_time_seconds")
        const pr = gauge(p, "avg_prompt_toks_per_req")
        const pf = histogramMean(p, "request_prefill_time_seconds")
        const ge = gauge(p, "avg_generation_toks_per_req")
        const de = histogramMean(p, "request_decode_time_seconds")
        if (q === undefined || pr === undefined || pf === undefined || ge === undefined || de === undefined)
          return undefined
        const ap = pr > 0 ? pr : gp
        const ag = ge > 0 ? ge : gg
        return q + (pf / ap) * gp + (de / ag) * gg
      })
    }
  }
}

/**
 * An AIBrix routing result: the chosen pod's index (into the ready list), the scores compared, whether
 * the random fallback picked it, and how many draws were used; or `AibrixNoPods` when the ready list
 * is empty (upstream `Route` returns an error).
 *
 * @category aibrix
 * @since 0.2.0
 */
export type AibrixRouted =
  | {
      readonly _tag: "AibrixRouted"
      readonly index: number
      readonly scores: ReadonlyArray<number | undefined>
      readonly fallback?: "random" | undefined
      readonly drawsUsed: number
    }
  | { readonly _tag: "AibrixNoPods"; readonly message: string }

const noPods = { _tag: "AibrixNoPods", message: "no ready pods" } as const

/**
 * AIBrix `Route` of a single strategy over the ready pods (already in upstream's shuffled order),
 * with the explicit `rand.Intn` draws: least-request (min, draw among all minima), throughput and
 * least-gpu-cache (min, draw among minima), least-kv-cache (`<=` scan: last minimum, no draw),
 * least-busy-time (strict `<`: first minimum), least-latency (`<=`: last minimum), random (one
 * draw). A metric strategy with no scored pod falls back to one random draw over the list.
 * load-balance (proposed, PR #2365) scans from `Number.MAX_VALUE` with strict `<` and draws among
 * the pods equal to the minimum; no random fallback: a list where no pending time is below
 * `Number.MAX_VALUE` (NaN or Infinity counts) is `AibrixNoPods`, as upstream's `ErrorNoAvailablePod`.
 * least-utilization (`least_util.go`, since 0.8.0) scans the same way but takes the random fallback
 * when no scored pod is below `Number.MAX_VALUE`.
 *
 * **When to use**: replaying the AIBrix gateway's choice with explicit randomness.
 *
 * Upstream: vllm-project/aibrix `pkg/plugins/gateway/algorithms/*.go` (files named in
 * fixtures/reference/peers/README-aibrix.md) at e3e10f9e4aebe9aac5e7d992fb87d2648e01628b.
 *
 * @example
 * ```ts
 * import { Aibrix } from "@loadledger/policies"
 * const pods = [1, 2, 1].map((n, i) => ({ id: `p${i}`, metrics: { realtime_num_requests_running: n } }))
 * const r = Aibrix.routeStrategy("least-request", pods, [1])
 * r._tag === "AibrixRouted" && r.index // => 2
 * const lb = Aibrix.routeStrategy("load-balance", pods, [0])
 * lb._tag === "AibrixRouted" && lb.index // => 0
 * const util = [0.25, 0.5, 0.25].map((u, i) => ({ id: `p${i}`, metrics: { engine_utilization: u } }))
 * const lu = Aibrix.routeStrategy("least-utilization", util, [1])
 * lu._tag === "AibrixRouted" && lu.index // => 2
 * ```
 *
 * @category aibrix
 * @since 0.2.0
 */
export const routeStrategy = (
  strategy: AibrixStrategy,
  pods: ReadonlyArray<AibrixPod>,
  draws: DrawSource
): AibrixRouted => {
  if (pods.length === 0) return noPods
  const random = (scores: ReadonlyArray<number | undefined>): AibrixRouted => ({
    _tag: "AibrixRouted",
    index: drawAt(draws, 0, pods.length),
    scores,
    fallback: "random",
    drawsUsed: 1
  })
  if (strategy === "random") return random([])
  const scores = strategyScores(strategy, pods)
  const scored = scores.some((s) => s !== undefined)
  if (!scored) return random(scores)
  const routed = (index: number, drawsUsed: number): AibrixRouted => ({
    _tag: "AibrixRouted",
    index,
    scores,
    drawsUsed
  })
  if (strategy === "least-kv-cache" || strategy === "least-latency") {
    let best = -1
    let min = Number.MAX_VALUE
    scores.forEach((s, i) => {
      if (s !== undefined && s <= min) {
        min = s
        best = i
      }
    })
    return best < 0 ? random(scores) : routed(best, 0)
  }
  if (strategy === "load-balance" || strategy === "least-utilization") {
    let min = Number.MAX_VALUE
    let ties: Array<number> = []
    scores.forEach((s, i) => {
      if (s! < min) {
        min = s!
        ties = [i]
      } else if (s === min) ties.push(i)
    })
    if (ties.length === 0)
      return strategy === "least-utilization"
        ? random(scores)
        : { _tag: "AibrixNoPods", message: "no pod with a pending time below MaxFloat64" }
    return routed(ties[drawAt(draws, 0, ties.length)]!, 1)
  }
  if (strategy === "least-busy-time") {
    let best = -1
    let min = Number.POSITIVE_INFINITY
    scores.forEach((s, i) => {
      if (s !== undefined && (best < 0 || s < min)) {
        min = s
        best = i
      }
    })
    return routed(best, 0)
  }
  let min = Number.POSITIVE_INFINITY
  for (const s of scores) if (s !== undefined && s < min) min = s
  const ties: Array<number> = []
  scores.forEach((s, i) => {
    if (s !== undefined && s === min) ties.push(i)
  })
  if (ties.length === 0) return random(scores)
  return routed(ties[drawAt(draws, 0, ties.length)]!, 1)
}
