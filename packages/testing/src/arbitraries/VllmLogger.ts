/**
 * The arbitrary for one record of vLLM's periodic logger line (`Engine 000: Avg prompt
 * throughput: ...`), as `decodeVllmLogger` yields it.
 *
 * **When to use**: property tests of code that reads logger records.
 *
 * @since 0.1.0
 */
import type * as S from "@loadledger/schema"
import fc from "fast-check"
import { count, finite, fraction } from "../internal/primitives.js"

/**
 * One vLLM logger record: `engine` (0..999) and `line` (1..100000) always; the throughputs, request
 * counts and cache shares maybe absent.
 *
 * @example
 * ```ts
 * import { VllmLoggerRecord } from "@loadledger/schema"
 * import { vllmLoggerRecord } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(vllmLoggerRecord, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(VllmLoggerRecord)) // => true
 * samples.every((r) => r.line >= 1) // => true
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const vllmLoggerRecord: fc.Arbitrary<S.VllmLoggerRecord> = fc.record(
  {
    engine: fc.nat({ max: 999 }),
    line: fc.integer({ min: 1, max: 100_000 }),
    avgPromptThroughputTokensPerSecond: finite,
    avgGenerationThroughputTokensPerSecond: finite,
    numRunningReqs: count,
    numWaitingReqs: count,
    kvCacheUsage: fraction,
    prefixCacheHitRate: fraction,
    mmCacheHitRate: fraction
  },
  { requiredKeys: ["engine", "line"] }
)
