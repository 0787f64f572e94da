/**
 * AIBrix's SLO routers as loadledger `Policy` values over DP ranks.
 *
 * @since 0.8.0
 */
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import { type Policy, type PolicyError, policyError } from "../../Policy.js"
import { type PeerState, peerPolicy } from "../internal/PeerLedger.js"
import { type AibrixGpuProfile, aibrixPendingConsumption } from "./GpuProfile.js"
import { shuffle } from "./internal/shuffle.js"
import { aibrixSimulatorProfile } from "./SimulatorProfile.js"
import { type AibrixSloPod, aibrixSloBackend, routeAibrixSlo } from "./Slo.js"

/**
 * Options of an AIBrix SLO policy: the strategy (`slo` = `slo-least-load-pulling`,
 * `slo-least-load`, `slo-pack-load`), the GPU profiles (default: upstream's test profile
 * {@link aibrixSimulatorProfile}), each rank's deployment (`deployments[i]`; a rank past the list
 * is in the first profile's deployment), the output tokens the output predictor answers (default
 * 1, upstream's cold prediction), the seed.
 *
 * @category aibrix
 * @since 0.8.0
 */
export interface AibrixSloPolicyOptions {
  readonly name?: string | undefined
  readonly strategy: string
  readonly profiles?: ReadonlyArray<AibrixGpuProfile> | undefined
  readonly deployments?: ReadonlyArray<string> | undefined
  readonly outputTokens?: number | undefined
  readonly seed?: number | undefined
}

/**
 * The SLO strategies registered by name (`aibrix/<strategy>`).
 *
 * @example
 * ```ts
 * import { Aibrix } from "@loadledger/policies"
 * Aibrix.aibrixSloStrategies.length // => 4
 * ```
 *
 * @category aibrix
 * @since 0.8.0
 */
export const aibrixSloStrategies: ReadonlyArray<string> = [
  "slo",
  "slo-least-load-pulling",
  "slo-least-load",
  "slo-pack-load"
]

const table = (x: unknown): x is ReadonlyArray<ReadonlyArray<number>> =>
  Array.isArray(x) && x.every((r) => Array.isArray(r) && r.every((v) => typeof v === "number"))

/**
 * The one check of {@link AibrixSloPolicyOptions}: `strategy` one of {@link aibrixSloStrategies};
 * `outputTokens` an integer >= 0; `profiles` a non-empty list, each with a string `gpu`, `indexes`
 * a table of positive numbers and every other table a table of numbers; `deployments` strings.
 * `undefined` when all hold, else a `PolicyError` `InvalidInput` naming the field.
 *
 * @example
 * ```ts
 * import { Aibrix } from "@loadledger/policies"
 * Aibrix.checkAibrixSloOptions({ strategy: "slo" }) // => undefined
 * Aibrix.checkAibrixSloOptions({ strategy: "slo", outputTokens: -1 })?.field // => "outputTokens"
 * Aibrix.checkAibrixSloOptions({ strategy: "slo", profiles: [] })?.field // => "profiles"
 * ```
 *
 * @category aibrix
 * @since 0.8.0
 */
export const checkAibrixSloOptions = (o: AibrixSloPolicyOptions): PolicyError | undefined => {
  const bad = (field: string, message: string) => policyError("InvalidInput", message, field)
  if (!aibrixSloStrategies.includes(o.strategy))
    return bad("strategy", `strategy must be one of ${aibrixSloStrategies.join(", ")}`)
  if (o.outputTokens !== undefined && !(Number.isSafeInteger(o.outputTokens) && o.outputTokens >= 0))
    return bad("outputTokens", "outputTokens must be an integer >= 0")
  if (o.profiles !== undefined) {
    if (!Array.isArray(o.profiles) || o.profiles.length === 0)
      return bad("profiles", "profiles must be a non-empty list")
    for (let i = 0; i < o.profiles.length; i++) {
      const p = o.profiles[i]!
      if (typeof p?.gpu !== "string") return bad(`profiles[${i}].gpu`, "gpu must be a string")
      if (!table(p.indexes) || p.indexes.some((r: ReadonlyArray<number>) => r.some((v: number) => !(v > 0))))
        return bad(`profiles[${i}].indexes`, "indexes must be rows of positive numbers")
      for (const t of ["tputs", "e2e", "ttft", "tpot"] as const)
        if (p[t] !== undefined && !table(p[t]))
          return bad(`profiles[${i}].${t}`, `${t} must be rows of numbers`)
    }
  }
  if (
    o.deployments !== undefined &&
    !(Array.isArray(o.deployments) && o.deployments.every((d) => typeof d === "string"))
  )
    return bad("deployments", "deployments must be a list of strings")
  return undefined
}

/** The SLO adapter's own state: each rank's pending load and each open request's share of it. */
export interface AibrixSloExtra {
  readonly pendings: ReadonlyArray<number>
  readonly charged: HashMap.HashMap<string, { readonly rank: number; readonly pending: number }>
}

/**
 * An AIBrix SLO router as a `Policy` over DP ranks (rank i is pod `"i"` of deployment
 * `deployments[i]`), the decision {@link routeAibrixSlo} at arrival (elapsed 0).
 *
 * - **Loads**: none read. The running count (least-request fallback) is the gateway's own, charged
 *   on route and released on finish; the pending load (`realtime_normalized_pendings`) is the sum
 *   of the consumptions of the rank's open requests, added on route and subtracted on finish in
 *   event order (`addPodStats` / `donePodStats`).
 * - **One healthy rank**: taken without routing (the gateway's shortcut, `gateway.go`), still charged.
 * - **Held** (every tried pod at capacity): `AllRanksUnavailable`. Upstream queues the request
 *   and retries when a finish drops a pending load under the cap; the queue is not modelled.
 * - **Rejected** (e.g. `slo failure request`: the profile predicts throughput 0): `AllRanksUnavailable`
 *   with upstream's error text, as upstream returns the error to the client.
 * - **Output length**: the model's output predictor (a moving histogram of finished requests) is
 *   not modelled: every request predicts `outputTokens` (default 1, the cold prediction).
 * - **Order and randomness**: the ready list is shuffled (`CryptoShuffle`), then grouped by
 *   deployment; the fallback's least-request draw comes from the same seeded generator.
 *
 * Upstream: vllm-project/aibrix `pkg/plugins/gateway/algorithms/slo.go`,
 * `pkg/plugins/gateway/queue/slo_queue.go`, `pkg/cache/{pending_load_provider,cache_trace}.go`,
 * `pkg/plugins/gateway/gateway.go` at e3e10f9e4aebe9aac5e7d992fb87d2648e01628b.
 *
 * @example
 * ```ts
 * import { Aibrix } from "@loadledger/policies"
 * const p = Aibrix.makeAibrixSloPolicy({ strategy: "slo-pack-load" })
 * let s = p.init(2)
 * const picks: Array<number> = []
 * for (const id of ["a", "b", "c"]) {
 *   const r = p.route(s, { requestId: id, inputLength: 10 }, 0)
 *   if (r._tag === "Routed") { s = r.state; picks.push(r.rank) }
 * }
 * picks[0] === picks[1] && picks[1] === picks[2] // => true
 * ```
 *
 * @category aibrix
 * @since 0.8.0
 */
export const makeAibrixSloPolicy = (o: AibrixSloPolicyOptions): Policy<PeerState<AibrixSloExtra>> => {
  const invalid = checkAibrixSloOptions(o)
  const backend = aibrixSloBackend(o.strategy) ?? "least-load-pulling"
  const profiles = o.profiles ?? [aibrixSimulatorProfile]
  const deployments = o.deployments ?? []
  const home = profiles[0]?.gpu ?? ""
  const outputTokens = o.outputTokens ?? 1
  const deploymentOf = (rank: number): string => deployments[rank] ?? home
  const base = peerPolicy<AibrixSloExtra>({
    name: o.name ?? `aibrix/${o.strategy}`,
    seed: o.seed ?? 0,
    initExtra: (dpSize) => ({ pendings: new Array<number>(dpSize).fill(0), charged: HashMap.empty() }),
    decide: (l, extra, request, _now, draw) => {
      const ready: Array<AibrixSloPod> = []
      for (let i = 0; i < l.dpSize; i++)
        if (l.status[i] === true)
          ready.push({
            id: String(i),
            deployment: deploymentOf(i),
            running: l.requests[i]!,
            pendings: extra.pendings[i]!
          })
      if (ready.length === 0) return policyError("AllRanksUnavailable", "no ready pod", "status")
      const req = { promptTokens: request.inputLength, outputTokens }
      let rank: number
      let consumption: number | undefined
      const scores: Array<number> = new Array<number>(l.dpSize).fill(Number.POSITIVE_INFINITY)
      let details: Record<string, unknown>
      if (ready.length === 1) {
        rank = Number(ready[0]!.id)
        const prof = profiles.find((p) => p.gpu === ready[0]!.deployment)
        const c =
          prof === undefined ? undefined : aibrixPendingConsumption(prof, outputTokens, req.promptTokens)
        consumption = typeof c === "number" ? c : undefined
        scores[rank] = 0
        details = { path: "single ready pod (gateway shortcut)" }
      } else {
        const pods = shuffle(ready, draw)
        const d = routeAibrixSlo(backend, pods, profiles, req, draw)
        if (d._tag === "AibrixSloHeld") return policyError("AllRanksUnavailable", d.message, "status")
        if (d._tag === "AibrixSloRejected")
          return policyError("AllRanksUnavailable", `upstream rejects the request: ${d.error}`, "status")
        rank = Number(pods[d.index]!.id)
        consumption = d.consumption
        d.loads.forEach((x, j) => {
          if (x !== undefined)
            scores[Number(pods[j]!.id)] = d.path === "slo" && backend === "pack-load" ? -x : x
        })
        details = { path: d.path, deployment: d.deployment, ranks: d.ranks, backend }
      }
      const pendings = [...extra.pendings]
      if (consumption !== undefined) pendings[rank] = pendings[rank]! + consumption
      return {
        rank,
        tokens: 0,
        extra: {
          pendings,
          charged: HashMap.set(extra.charged, request.requestId, { rank, pending: consumption ?? 0 })
        },
        explanation: {
          scores,
          tieBreak:
            backend === "pack-load"
              ? "first pod at the highest load under the cap"
              : "last pod at the lowest load",
          details: {
            ...details,
            scores: "pending load + the request's consumption (pack-load: negated); fallback: running count",
            consumption
          }
        }
      }
    }
  })
  return {
    ...base,
    route: (s, request, now) => invalid ?? base.route(s, request, now),
    finish: (s, ids, now) => {
      const next = base.finish(s, ids, now)
      if (next === s) return s
      let charged = next.extra.charged
      const pendings = [...next.extra.pendings]
      for (const id of ids) {
        const c = Option.getOrUndefined(HashMap.get(charged, id))
        if (c === undefined) continue
        charged = HashMap.remove(charged, id)
        if (c.pending !== 0) pendings[c.rank] = pendings[c.rank]! - c.pending
      }
      return { ...next, extra: { pendings, charged } }
    }
  }
}
