/**
 * AIBrix's SLO routers (`slo`, `slo-least-load-pulling`, `slo-least-load`, `slo-pack-load`): the
 * SLO queue's decision for the request at its head, over GPU profiles given explicitly.
 *
 * @since 0.8.0
 */
import type { DrawSource } from "../Draws.js"
import {
  type AibrixGpuProfile,
  type AibrixProfileError,
  aibrixPendingConsumption,
  aibrixSloRank
} from "./GpuProfile.js"
import { AIBRIX_CAPACITY, type AibrixLoadRouter, aibrixLoadRoute } from "./LoadRouters.js"
import { routeStrategy } from "./Strategies.js"

/**
 * One ready pod for the SLO routers: its deployment (the `DeploymentIdentifier` label; profiles
 * are looked up by it), the gateway's running count (`realtime_num_requests_running`, for the
 * least-request fallback) and pending load (`realtime_normalized_pendings`: the sum of the
 * consumptions of the requests routed to it and not finished; 0 when never set).
 *
 * @category aibrix
 * @since 0.8.0
 */
export interface AibrixSloPod {
  readonly id: string
  readonly deployment: string
  readonly running: number
  readonly pendings: number
}

/**
 * The request at the head of the SLO queue: prompt tokens, the output tokens the model's output
 * predictor returns (upstream's cold prediction, with no history, is 1), seconds since arrival.
 *
 * @category aibrix
 * @since 0.8.0
 */
export interface AibrixSloRequest {
  readonly promptTokens: number
  readonly outputTokens: number
  readonly elapsedSeconds?: number | undefined
}

/**
 * The SLO routers' decision: `AibrixSloRouted` (the pod's index into the pods as given, `path`
 * `"slo"` through the load router of the profile `deployment`, or `"fallback"` through
 * least-request; `ranks` per profile, ascending as tried; `consumption` the pending load the pick
 * adds, `undefined` when the pod's profile gives none), `AibrixSloHeld` (every tried profile's pods
 * at capacity: upstream keeps the request queued until a finish frees room) or `AibrixSloRejected`
 * (upstream's error, e.g. `slo failure request`).
 *
 * @category aibrix
 * @since 0.8.0
 */
export type AibrixSloDecision =
  | {
      readonly _tag: "AibrixSloRouted"
      readonly index: number
      readonly path: "slo" | "fallback"
      readonly deployment?: string | undefined
      readonly ranks: ReadonlyArray<{ readonly deployment: string; readonly rank: number }>
      readonly loads: ReadonlyArray<number | undefined>
      readonly consumption: number | undefined
      readonly drawsUsed: number
    }
  | { readonly _tag: "AibrixSloHeld"; readonly message: string }
  | { readonly _tag: "AibrixSloRejected"; readonly error: string }

/**
 * The load router behind each SLO strategy name (`NewSLORouter`'s local router manager, `slo.go`):
 * `slo` and `slo-least-load-pulling` -> `least-load-pulling`, `slo-least-load` -> `least-load`,
 * `slo-pack-load` -> `pack-load`; `undefined` for any other name.
 *
 * @example
 * ```ts
 * import { Aibrix } from "@loadledger/policies"
 * Aibrix.aibrixSloBackend("slo") // => "least-load-pulling"
 * Aibrix.aibrixSloBackend("slo-pack-load") // => "pack-load"
 * Aibrix.aibrixSloBackend("random") // => undefined
 * ```
 *
 * @category aibrix
 * @since 0.8.0
 */
export const aibrixSloBackend = (strategy: string): AibrixLoadRouter | undefined =>
  strategy === "slo" || strategy === "slo-least-load-pulling"
    ? "least-load-pulling"
    : strategy === "slo-least-load"
      ? "least-load"
      : strategy === "slo-pack-load"
        ? "pack-load"
        : undefined

/**
 * `PodArray.Indexes`' side effect: pods grouped by deployment in order of first appearance, each
 * group keeping list order (upstream sorts in place with `sort.Slice`, stable for at most 12 pods).
 *
 * @example
 * ```ts
 * import { Aibrix } from "@loadledger/policies"
 * const pods = ["a", "b", "a"].map((d, i) => ({ id: `p${i}`, deployment: d, running: 0, pendings: 0 }))
 * Aibrix.aibrixGroupByDeployment(pods).map((p) => p.id) // => ["p0", "p2", "p1"]
 * ```
 *
 * @category aibrix
 * @since 0.8.0
 */
export const aibrixGroupByDeployment = <P extends { readonly deployment: string }>(
  pods: ReadonlyArray<P>
): Array<P> => {
  const order: Array<string> = []
  for (const p of pods) if (!order.includes(p.deployment)) order.push(p.deployment)
  return order.flatMap((d) => pods.filter((p) => p.deployment === d))
}

const isError = (x: unknown): x is AibrixProfileError =>
  typeof x === "object" && x !== null && (x as AibrixProfileError)._tag === "AibrixProfileError"

/**
 * The SLO queue's decision for one request at the head of its queue, the pods already shuffled.
 * Pods are grouped by deployment (`PodArray.Indexes`). Each deployment's profile (by `gpu`) gives a
 * rank ({@link aibrixSloRank}); no profile for any deployment, or any rank error (e.g. no SLO set,
 * no TTFT table for a TTFT SLO), falls back to least-request over every pod (one draw among the
 * fewest running). Else the profiles are tried by ascending rank (the first always, a later one
 * only while its rank is <= 0) through `backend` over that deployment's pods, utilisation = the
 * pod's pending load, consumption from its profile ({@link aibrixPendingConsumption}), cap 1. A
 * pick ends it; an error other than `load capacity reached` rejects the request; capacity alone
 * holds it (upstream: it stays queued, and a finish that drops a pod's pending load under the cap
 * retries it). The chosen pod's consumption (its own profile's) is what the gateway adds to its
 * pending load (`addPodStats`); none when its profile is missing or answers an error.
 *
 * Upstream: vllm-project/aibrix `pkg/plugins/gateway/queue/slo_queue.go` (`Peek`),
 * `pkg/plugins/gateway/algorithms/{slo,queue_router,least_load,pack_load}.go`,
 * `pkg/cache/{pending_load_provider,cache_trace}.go`, `pkg/utils/pod_array.go` at
 * e3e10f9e4aebe9aac5e7d992fb87d2648e01628b.
 *
 * @example
 * ```ts
 * import { Aibrix } from "@loadledger/policies"
 * const profiles = [Aibrix.aibrixSimulatorProfile]
 * const pods = [0, 0.5].map((u, i) => ({ id: `p${i}`, deployment: "simulator-llama2-7b-a100", running: 0, pendings: u }))
 * const req = { promptTokens: 1, outputTokens: 1 }
 * const pull = Aibrix.routeAibrixSlo("least-load-pulling", pods, profiles, req, [])
 * pull._tag === "AibrixSloRouted" && pull.index // => 0
 * const pack = Aibrix.routeAibrixSlo("pack-load", pods, profiles, req, [])
 * pack._tag === "AibrixSloRouted" && pack.index // => 1
 * Aibrix.routeAibrixSlo("pack-load", pods, profiles, { promptTokens: 2048, outputTokens: 512 }, [])
 * // => { _tag: "AibrixSloRejected", error: "slo failure request" }
 * ```
 *
 * @category aibrix
 * @since 0.8.0
 */
export const routeAibrixSlo = (
  backend: AibrixLoadRouter,
  pods: ReadonlyArray<AibrixSloPod>,
  profiles: ReadonlyArray<AibrixGpuProfile>,
  request: AibrixSloRequest,
  draws: DrawSource
): AibrixSloDecision => {
  if (pods.length === 0) return { _tag: "AibrixSloRejected", error: "no pods to forward request" }
  const grouped = aibrixGroupByDeployment(pods)
  const indexOf = (p: AibrixSloPod): number => pods.indexOf(p)
  const profileOf = (d: string): AibrixGpuProfile | undefined => profiles.find((p) => p.gpu === d)
  const consumptionOf = (p: AibrixSloPod): number | AibrixProfileError => {
    const prof = profileOf(p.deployment)
    return prof === undefined
      ? { _tag: "AibrixProfileError", error: "missing profile" }
      : aibrixPendingConsumption(prof, request.outputTokens, request.promptTokens)
  }
  const charged = (p: AibrixSloPod): number | undefined => {
    const c = consumptionOf(p)
    return isError(c) ? undefined : c
  }
  const deployments: Array<string> = []
  for (const p of grouped) if (!deployments.includes(p.deployment)) deployments.push(p.deployment)
  const ranks: Array<{ deployment: string; rank: number }> = []
  let rankError = false
  for (const d of deployments) {
    const prof = profileOf(d)
    if (prof === undefined) continue
    const r = aibrixSloRank(prof, request.outputTokens, request.promptTokens, request.elapsedSeconds ?? 0)
    if (isError(r)) rankError = true
    else ranks.push({ deployment: prof.gpu, rank: r })
  }
  if (rankError || ranks.length === 0) {
    const r = routeStrategy(
      "least-request",
      grouped.map((p) => ({ id: p.id, metrics: { realtime_num_requests_running: p.running } })),
      draws
    )
    if (r._tag === "AibrixNoPods") return { _tag: "AibrixSloRejected", error: r.message }
    const pod = grouped[r.index]!
    const loads = pods.map(() => undefined as number | undefined)
    grouped.forEach((p, j) => {
      loads[indexOf(p)] = r.scores[j]
    })
    return {
      _tag: "AibrixSloRouted",
      index: indexOf(pod),
      path: "fallback",
      ranks,
      loads,
      consumption: charged(pod),
      drawsUsed: r.drawsUsed
    }
  }
  const tried = [...ranks].sort((a, b) => a.rank - b.rank)
  let last = ""
  for (let i = 0; i < tried.length; i++) {
    const t = tried[i]!
    if (i > 0 && t.rank > 0) break
    const sub = grouped.filter((p) => p.deployment === t.deployment)
    const r = aibrixLoadRoute(
      backend,
      sub.map((p) => {
        const c = backend === "least-load" ? 0 : consumptionOf(p)
        return isError(c)
          ? { utilization: p.pendings, consumptionError: c.error }
          : { utilization: p.pendings, consumption: c }
      }),
      1.0
    )
    if (r._tag === "AibrixLoadPicked") {
      const pod = sub[r.index]!
      const loads = pods.map(() => undefined as number | undefined)
      sub.forEach((p, j) => {
        loads[indexOf(p)] = r.loads[j]
      })
      return {
        _tag: "AibrixSloRouted",
        index: indexOf(pod),
        path: "slo",
        deployment: t.deployment,
        ranks: tried,
        loads,
        consumption: charged(pod),
        drawsUsed: 0
      }
    }
    last = r.error
  }
  return last === AIBRIX_CAPACITY
    ? {
        _tag: "AibrixSloHeld",
        message: "every tried pod at its pending-load capacity (the SLO queue holds the request)"
      }
    : { _tag: "AibrixSloRejected", error: last }
}
