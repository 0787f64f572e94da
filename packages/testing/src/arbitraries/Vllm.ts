/**
 * Arbitraries for vLLM's data-parallel coordination wire: one engine's
 * `[waiting, running, kvCacheUsage]`, the coordinator's update `[counts | null, wave, running]`,
 * and the engine core's `SchedulerStats`.
 *
 * **When to use**: property tests of the vLLM balancer and coordinator inputs.
 *
 * @since 0.1.0
 */
import type * as S from "@loadledger/schema"
import fc from "fast-check"
import { count, fraction, nullOr } from "../internal/primitives.js"

/**
 * vLLM's per-engine `[waiting, running, kvCacheUsage]` (counts, and a share in [0, 1]).
 *
 * @example
 * ```ts
 * import { EngineCounts } from "@loadledger/schema"
 * import { engineCounts } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(engineCounts, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(EngineCounts)) // => true
 * samples.every(([waiting, running, kv]) => waiting >= 0 && running >= 0 && kv >= 0 && kv <= 1) // => true
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const engineCounts: fc.Arbitrary<S.EngineCounts> = fc.tuple(count, count, fraction)

/**
 * vLLM's coordinator update `[counts, wave, running]`: at most eight engines' counts or `null`, the
 * wave number, whether a wave runs.
 *
 * @example
 * ```ts
 * import { CoordinatorUpdate } from "@loadledger/schema"
 * import { coordinatorUpdate } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(coordinatorUpdate, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(CoordinatorUpdate)) // => true
 * samples.some(([counts]) => counts === null) // => true
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const coordinatorUpdate: fc.Arbitrary<S.CoordinatorUpdate> = fc.tuple(
  nullOr(fc.array(engineCounts, { maxLength: 8 })),
  count,
  fc.boolean()
)

/**
 * vLLM's `SchedulerStats`: running and waiting requests, KV cache usage, the step counter and the
 * current wave.
 *
 * @example
 * ```ts
 * import { SchedulerStats } from "@loadledger/schema"
 * import { schedulerStats } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(schedulerStats, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(SchedulerStats)) // => true
 * Object.keys(samples[0]!) // => ["numRunningReqs", "numWaitingReqs", "kvCacheUsage", "stepCounter", "currentWave"]
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const schedulerStats: fc.Arbitrary<S.SchedulerStats> = fc.record({
  numRunningReqs: count,
  numWaitingReqs: count,
  kvCacheUsage: fraction,
  stepCounter: count,
  currentWave: count
})
