/**
 * The shapes SMG (SGLang model gateway) policies read, named after upstream's Rust types:
 * `Worker` (router-local in-flight `load`, `processed_requests`, health, circuit breaker),
 * `WorkerLoadResponse` and `SchedulerLoadSnapshot` (the `/v1/loads` poll the `WorkerMonitor` caches).
 *
 * Upstream: lightseekorg/smg `model_gateway/src/worker/worker.rs`, `crates/protocols/src/worker.rs`,
 * commit 73da68ca9472bbc0ff5f63d31a8a21fbb8696359.
 *
 * @since 0.2.0
 */
import type { PolicyError } from "../../Policy.js"

/**
 * One SMG worker as a policy sees it. `load` is the router-local in-flight count (`Worker::load()`,
 * +1 by `WorkerLoadGuard` on route, -1 when the response ends); `processedRequests` is
 * `Worker::processed_requests()`; a worker is routable when `healthy && circuitBreakerCanExecute`
 * (`prefix_hash` and `consistent_hashing` read `healthy` only).
 *
 * **When to use**: the input of every `smg*Select` core.
 *
 * @example
 * ```ts
 * import type { Smg } from "@loadledger/policies"
 * const w: Smg.SmgWorker = { url: "http://a:8000", healthy: true, load: 0, processedRequests: 0, circuitBreakerCanExecute: true }
 * w.load // => 0
 * ```
 *
 * @category smg
 * @since 0.2.0
 */
export interface SmgWorker {
  readonly url: string
  readonly healthy: boolean
  readonly load: number
  readonly processedRequests: number
  readonly circuitBreakerCanExecute: boolean
}

/**
 * One scheduler's row of a worker's `/v1/loads` report (`SchedulerLoadSnapshot`): counts in
 * requests, token fields in tokens, `tokenUsage` a 0..1 ratio, `genThroughput` tokens/s. A field
 * the report did not carry is absent (never 0); what each reader does with an absent field is in
 * its docstring (the loadledger adapters only hand a core rows carrying what it reads).
 *
 * **When to use**: inside {@link SmgLoadReport}, which `power_of_two`, `least_load`, `cache_aware` and
 * `dp_min_token` read.
 *
 * @example
 * ```ts
 * import type { Smg } from "@loadledger/policies"
 * const row: Smg.SmgSchedulerLoad = { dpRank: 0, numRunningReqs: 1, numWaitingReqs: 0, numWaitingUncachedTokens: 0,
 *   numTotalReqs: 1, numUsedTokens: 10, maxTotalNumTokens: 1000, tokenUsage: 0.01, genThroughput: 50,
 *   cacheHitRate: 0, utilization: 0, maxRunningRequests: 8 }
 * row.tokenUsage // => 0.01
 * ```
 *
 * @category smg
 * @since 0.2.0
 */
export interface SmgSchedulerLoad {
  readonly dpRank: number
  readonly numRunningReqs?: number | undefined
  readonly numWaitingReqs?: number | undefined
  readonly numWaitingUncachedTokens?: number | undefined
  readonly numTotalReqs?: number | undefined
  readonly numUsedTokens?: number | undefined
  readonly maxTotalNumTokens?: number | undefined
  readonly tokenUsage?: number | undefined
  readonly genThroughput?: number | undefined
  readonly cacheHitRate?: number | undefined
  readonly utilization?: number | undefined
  readonly maxRunningRequests?: number | undefined
}

/**
 * A worker's load report (`WorkerLoadResponse`): one {@link SmgSchedulerLoad} per DP rank.
 *
 * **When to use**: the value of a load poll (`smg*Update` functions take `url -> report | null`).
 *
 * @example
 * ```ts
 * import type { Smg } from "@loadledger/policies"
 * const r: Smg.SmgLoadReport = { dpRankCount: 1, loads: [] }
 * r.loads.length // => 0
 * ```
 *
 * @category smg
 * @since 0.2.0
 */
export interface SmgLoadReport {
  readonly dpRankCount: number
  readonly loads: ReadonlyArray<SmgSchedulerLoad>
}

/**
 * What an SMG core decided: `index` into the worker list (`undefined` = upstream `None`), the next
 * core state, whether upstream bumps `processed_requests` on the pick, and `details` (the values
 * the golden vectors check: branch, scores by worker index, candidates, hash keys).
 *
 * **When to use**: reading a core's result; the harness applies `processed` and the load guard.
 *
 * @example
 * ```ts
 * import { Smg } from "@loadledger/policies"
 * const w = { url: "http://a:8000", healthy: true, load: 0, processedRequests: 0, circuitBreakerCanExecute: true }
 * const out = Smg.smgRoundRobinSelect({ counter: 0 }, [w])
 * out._tag === "SmgSelected" && out.index // => 0
 * ```
 *
 * @category smg
 * @since 0.2.0
 */
export interface SmgSelected<S> {
  readonly _tag: "SmgSelected"
  readonly index: number | undefined
  readonly state: S
  readonly processed: boolean
  readonly details: Readonly<Record<string, unknown>>
}

/**
 * A core's result: a selection, or a `PolicyError` for bad input (a missing or out-of-range draw).
 *
 * @category smg
 * @since 0.2.0
 */
export type SmgResult<S> = SmgSelected<S> | PolicyError

/**
 * A load poll delivered to a cache: `url -> report`, `null` meaning "remove the worker's entry"
 * (`power_of_two`, `least_load`) or "the fetch failed" (`dp_min_token`), as each policy documents.
 *
 * @category smg
 * @since 0.2.0
 */
export type SmgPoll = ReadonlyMap<string, SmgLoadReport | null>
