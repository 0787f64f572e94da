/**
 * Capacity and utilisation of a fleet of engines, per engine instance (one DP rank: a pod running
 * DP 8 is eight instances) and in aggregate, from decoded ledgers. Absent stays absent: a field no
 * instance reported is absent from the aggregate, and every aggregate says how many instances
 * reported it.
 *
 * @since 0.3.0
 */
import type { RankLoad, RankUnknown } from "./RankLoad.js"

/**
 * One engine instance (one DP rank of one worker): what it can hold and how full it is.
 *
 * - `tokenCapacity`: KV pool size in tokens (`maxTotalNumTokens`, else `memory.token_capacity`).
 * - `freeTokens`: `kvAvailableTokens` when reported, else `tokenCapacity - numUsedTokens`.
 * - `kvUtilization` (0..1): `numUsedTokens / tokenCapacity` when both are reported, else the
 *   reported `kvCacheUsage` (SGLang `token_usage`, vLLM `kv_cache_usage_perc`).
 * - `requestUtilization` (0..1 or above): `numRunningReqs / maxRunningRequests`.
 * - `unknown`: the row was unknown (stale, negative, duplicate...): the instance counts, its numbers do not.
 *
 * **When to use**: per-instance capacity tables, autoscaling inputs.
 *
 * @category FleetCapacity
 * @since 0.3.0
 */
export interface InstanceCapacity {
  readonly worker: string
  readonly dpRank: number
  readonly unknown?: RankUnknown | undefined
  readonly tokenCapacity?: number | undefined
  readonly maxRunningRequests?: number | undefined
  readonly numUsedTokens?: number | undefined
  readonly numRunningReqs?: number | undefined
  readonly numWaitingReqs?: number | undefined
  readonly freeTokens?: number | undefined
  readonly kvUtilization?: number | undefined
  readonly requestUtilization?: number | undefined
  readonly genThroughput?: number | undefined
}

/**
 * The numeric fields of {@link InstanceCapacity} that {@link fleetCapacity} aggregates.
 *
 * **When to use**: naming an aggregate of `FleetCapacity.fields`.
 *
 * @category FleetCapacity
 * @since 0.3.0
 */
export type CapacityField = Exclude<keyof InstanceCapacity, "worker" | "dpRank" | "unknown">

/**
 * One field over the instances that reported it: `instancesReporting` of `instances`, with sum,
 * mean, min and max over those only.
 *
 * **When to use**: reading `FleetCapacity.fields`.
 *
 * @category FleetCapacity
 * @since 0.3.0
 */
export interface FleetFieldAggregate {
  readonly instancesReporting: number
  readonly sum: number
  readonly mean: number
  readonly min: number
  readonly max: number
}

/**
 * A fleet's capacity: every instance, how many there are and how many are unknown, one aggregate
 * per field that at least one instance reported (others absent), and the fleet KV utilisation
 * `Σ numUsedTokens / Σ tokenCapacity` over the instances that reported both.
 *
 * **When to use**: the result of {@link fleetCapacity}.
 *
 * @category FleetCapacity
 * @since 0.3.0
 */
export interface FleetCapacity {
  readonly instances: ReadonlyArray<InstanceCapacity>
  readonly unknownInstances: number
  readonly fields: { readonly [K in CapacityField]?: FleetFieldAggregate }
  readonly kvUtilization?: { readonly value: number; readonly instancesReporting: number } | undefined
}

const fields: ReadonlyArray<CapacityField> = [
  "tokenCapacity",
  "maxRunningRequests",
  "numUsedTokens",
  "numRunningReqs",
  "numWaitingReqs",
  "freeTokens",
  "kvUtilization",
  "requestUtilization",
  "genThroughput"
]

/**
 * One instance's capacity from its ledger row (see {@link InstanceCapacity} for the rules).
 *
 * **When to use**: a single row; {@link fleetCapacity} does this for every row of every worker.
 *
 * @example
 * ```ts
 * import { instanceCapacity } from "@loadledger/schema"
 * instanceCapacity("pod-a", { dpRank: 3, maxTotalNumTokens: 200000, numUsedTokens: 50000, numRunningReqs: 8, maxRunningRequests: 32 })
 * // => { worker: "pod-a", dpRank: 3, tokenCapacity: 200000, maxRunningRequests: 32, numUsedTokens: 50000, numRunningReqs: 8, freeTokens: 150000, kvUtilization: 0.25, requestUtilization: 0.25 }
 * ```
 *
 * @category FleetCapacity
 * @since 0.3.0
 */
export const instanceCapacity = (worker: string, row: RankLoad): InstanceCapacity => {
  const dpRank = row.workerDpRank ?? row.dpRank
  if (row.unknown !== undefined) return { worker, dpRank, unknown: row.unknown }
  const out: { -readonly [K in keyof InstanceCapacity]: InstanceCapacity[K] } = { worker, dpRank }
  const cap = row.maxTotalNumTokens ?? row.tokenCapacity
  if (cap !== undefined) out.tokenCapacity = cap
  if (row.maxRunningRequests !== undefined) out.maxRunningRequests = row.maxRunningRequests
  if (row.numUsedTokens !== undefined) out.numUsedTokens = row.numUsedTokens
  if (row.numRunningReqs !== undefined) out.numRunningReqs = row.numRunningReqs
  if (row.numWaitingReqs !== undefined) out.numWaitingReqs = row.numWaitingReqs
  const free =
    row.kvAvailableTokens ??
    (cap !== undefined && row.numUsedTokens !== undefined ? Math.max(0, cap - row.numUsedTokens) : undefined)
  if (free !== undefined) out.freeTokens = free
  const kv =
    cap !== undefined && cap > 0 && row.numUsedTokens !== undefined
      ? row.numUsedTokens / cap
      : row.kvCacheUsage
  if (kv !== undefined) out.kvUtilization = kv
  if (row.maxRunningRequests !== undefined && row.maxRunningRequests > 0 && row.numRunningReqs !== undefined)
    out.requestUtilization = row.numRunningReqs / row.maxRunningRequests
  if (row.genThroughput !== undefined) out.genThroughput = row.genThroughput
  return out
}

/**
 * Capacity and utilisation of a fleet from its decoded ledgers, one ledger per worker (URL, pod or
 * engine id): one {@link InstanceCapacity} per row (instances ordered by worker, then rank), an
 * aggregate per field over the instances that reported it (a field no instance reported is
 * absent, never 0), and the fleet KV utilisation. Instance identity is `(worker, workerDpRank ??
 * dpRank)`.
 *
 * **When to use**: dashboards and autoscalers that need "how full is the fleet" without hiding
 * which instances did not say.
 *
 * @example
 * ```ts
 * import { decodeLedger, fleetCapacity } from "@loadledger/schema"
 * const a = decodeLedger('{"loads":[{"dp_rank":0,"num_used_tokens":100,"max_total_num_tokens":1000},{"dp_rank":1,"num_used_tokens":300,"max_total_num_tokens":1000}]}')
 * const b = decodeLedger('vllm:kv_cache_usage_perc{engine="0"} 0.5\n')
 * if (a._tag === "Success" && b._tag === "Success") {
 *   const f = fleetCapacity(new Map([["sglang-pod", a.success], ["vllm-pod", b.success]]))
 *   f.instances.length // => 3
 *   f.fields.tokenCapacity // => { instancesReporting: 2, sum: 2000, mean: 1000, min: 1000, max: 1000 }
 *   f.fields.kvUtilization?.instancesReporting // => 3
 *   f.kvUtilization // => { value: 0.2, instancesReporting: 2 }
 *   f.fields.numWaitingReqs // => undefined
 * }
 * ```
 *
 * @category FleetCapacity
 * @since 0.3.0
 */
export const fleetCapacity = (
  ledgers: ReadonlyMap<string, ReadonlyArray<RankLoad>> | Iterable<readonly [string, ReadonlyArray<RankLoad>]>
): FleetCapacity => {
  const instances: Array<InstanceCapacity> = []
  for (const [worker, rows] of ledgers) for (const row of rows) instances.push(instanceCapacity(worker, row))
  instances.sort((x, y) => (x.worker < y.worker ? -1 : x.worker > y.worker ? 1 : x.dpRank - y.dpRank))
  const agg: { [K in CapacityField]?: FleetFieldAggregate } = {}
  for (const f of fields) {
    let n = 0
    let sum = 0
    let min = Number.POSITIVE_INFINITY
    let max = Number.NEGATIVE_INFINITY
    for (const i of instances) {
      const v = i[f]
      if (v === undefined) continue
      n++
      sum += v
      min = Math.min(min, v)
      max = Math.max(max, v)
    }
    if (n > 0) agg[f] = { instancesReporting: n, sum, mean: sum / n, min, max }
  }
  let used = 0
  let cap = 0
  let both = 0
  for (const i of instances)
    if (i.numUsedTokens !== undefined && i.tokenCapacity !== undefined) {
      used += i.numUsedTokens
      cap += i.tokenCapacity
      both++
    }
  return {
    instances,
    unknownInstances: instances.filter((i) => i.unknown !== undefined).length,
    fields: agg,
    ...(both > 0 && cap > 0 ? { kvUtilization: { value: used / cap, instancesReporting: both } } : {})
  }
}
