/**
 * vLLM's data-parallel load messages: per-engine counts, the coordinator's update, and the
 * scheduler stats an engine reports.
 *
 * Upstream: vllm-project/vllm `vllm/v1/engine/core_client.py`, `vllm/v1/engine/coordinator.py`,
 * `vllm/v1/metrics/stats.py` @ 00080ee13c7a451fce071ccb8d0e94d395acf5a7.
 *
 * @since 0.1.0
 */

import type * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { type DecodeError, decodeWith } from "./DecodeError.js"
import { strictly } from "./internal/numbers.js"
import { wireStruct } from "./internal/wire.js"

/**
 * `[waiting, running, kvCacheUsage]` for one engine; usage is a 0..1 fraction.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { EngineCounts } from "@loadledger/schema"
 * Schema.is(EngineCounts)([117, 51, 1.0]) // => true
 * Schema.is(EngineCounts)([1, 2, 100]) // => false
 * ```
 *
 * **When to use**: the per-engine rows of vLLM's DP balancer.
 *
 * @category vLLM
 * @since 0.1.0
 */
export const EngineCounts = Schema.Tuple([
  Schema.Int,
  Schema.Int,
  Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1 }))
])
/** @category vLLM @since 0.1.0 */
export type EngineCounts = typeof EngineCounts.Type

/**
 * The coordinator's publish to front-ends: `(counts | null, currentWave, enginesRunning)`;
 * `counts` is null for a wave-state-only publish.
 *
 * @example
 * ```ts
 * import { decodeCoordinatorUpdate } from "@loadledger/schema"
 * const r = decodeCoordinatorUpdate([null, 3, true])
 * r._tag === "Success" && r.success[1] // => 3
 * ```
 *
 * **When to use**: decoding the coordinator's publishes to front-ends.
 *
 * @category vLLM
 * @since 0.1.0
 */
export const CoordinatorUpdate = Schema.Tuple([
  Schema.NullOr(Schema.Array(EngineCounts)),
  Schema.Int,
  Schema.Boolean
])
/** @category vLLM @since 0.1.0 */
export type CoordinatorUpdate = typeof CoordinatorUpdate.Type

/**
 * An engine's `SchedulerStats` as far as load balancing reads it: `num_running_reqs`,
 * `num_waiting_reqs`, `kv_cache_usage` (0..1), `step_counter`, `current_wave`.
 *
 * **When to use**: reading an engine's reported stats.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { SchedulerStats } from "@loadledger/schema"
 * Schema.decodeUnknownSync(SchedulerStats)({ num_running_reqs: 8, num_waiting_reqs: 0, kv_cache_usage: 0.4, step_counter: 31, current_wave: 2 }).stepCounter // => 31
 * ```
 *
 * @category vLLM
 * @since 0.1.0
 */
export const SchedulerStats = wireStruct({
  numRunningReqs: Schema.Int,
  numWaitingReqs: Schema.Int,
  kvCacheUsage: Schema.Finite,
  stepCounter: Schema.Int,
  currentWave: Schema.Int
})
/** @category vLLM @since 0.1.0 */
export type SchedulerStats = typeof SchedulerStats.Type

// every number of these messages is a count, a wave number or a 0..1 fraction: never negative
const decCounts = strictly(decodeWith(EngineCounts))
const decUpdate = strictly(decodeWith(CoordinatorUpdate))
const decStats = strictly(decodeWith(SchedulerStats))

/**
 * Decode {@link EngineCounts} from `unknown`. A negative count is an `InvalidField` error (`$[0]`).
 *
 * @example
 * ```ts
 * import { decodeEngineCounts } from "@loadledger/schema"
 * decodeEngineCounts([0, 8, 0.5])._tag // => "Success"
 * decodeEngineCounts([-1, 8, 0.5])._tag // => "Failure"
 * ```
 *
 * **When to use**: validating one row from an untrusted source.
 *
 * @category vLLM
 * @since 0.1.0
 */
export const decodeEngineCounts = (u: unknown): Result.Result<EngineCounts, DecodeError> => decCounts(u)

/**
 * Decode a {@link CoordinatorUpdate} from `unknown` (e.g. a msgpack-decoded message). A negative
 * count or wave is an `InvalidField` error at its path.
 *
 * @example
 * ```ts
 * import { decodeCoordinatorUpdate } from "@loadledger/schema"
 * const r = decodeCoordinatorUpdate([[[0, -1, 0.5]], 3, true])
 * r._tag === "Failure" && r.failure.path // => "$[0][0][1]"
 * ```
 *
 * **When to use**: a front-end subscriber to the coordinator.
 *
 * @category vLLM
 * @since 0.1.0
 */
export const decodeCoordinatorUpdate = (u: unknown): Result.Result<CoordinatorUpdate, DecodeError> =>
  decUpdate(u)

/**
 * Decode {@link SchedulerStats} from `unknown`. Negative, non-finite or above-2^53 numbers are
 * `InvalidField` errors at their wire path.
 *
 * **When to use**: reading engine stats from an untrusted source.
 *
 * @example
 * ```ts
 * import { decodeSchedulerStats } from "@loadledger/schema"
 * const r = decodeSchedulerStats({ num_running_reqs: 8 })
 * r._tag === "Failure" && r.failure.path // => "$.num_waiting_reqs"
 * ```
 *
 * @category vLLM
 * @since 0.1.0
 */
export const decodeSchedulerStats = (u: unknown): Result.Result<SchedulerStats, DecodeError> => decStats(u)
