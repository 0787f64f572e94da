/**
 * Arbitraries for the per-engine and per-rank gauges decoded from Prometheus `/metrics` text:
 * vLLM's `VllmEngineMetrics` and SGLang's `SglangRankMetrics`. Only the engine / rank index is
 * always present; every gauge may be absent.
 *
 * **When to use**: property tests of code that reads decoded metrics (`toEngineCounts`, the
 * ledger built from them).
 *
 * @since 0.1.0
 */
import type * as S from "@loadledger/schema"
import fc from "fast-check"
import { count, finite, fraction } from "../internal/primitives.js"

/**
 * One vLLM engine's `/metrics` gauges: `engine` (0..63) always; running and waiting requests and the
 * KV / GPU cache usage maybe absent.
 *
 * @example
 * ```ts
 * import { VllmEngineMetrics } from "@loadledger/schema"
 * import { vllmEngineMetrics } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(vllmEngineMetrics, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(VllmEngineMetrics)) // => true
 * samples.every((m) => Number.isInteger(m.engine) && m.engine < 64) // => true
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const vllmEngineMetrics: fc.Arbitrary<S.VllmEngineMetrics> = fc.record(
  {
    engine: fc.nat({ max: 63 }),
    numRequestsRunning: count,
    numRequestsWaiting: count,
    kvCacheUsagePerc: fraction,
    gpuCacheUsagePerc: fraction
  },
  { requiredKeys: ["engine"] }
)

/**
 * One SGLang rank's `/metrics` gauges: `dpRank` (0..63) always; every gauge (requests, tokens,
 * shares, limits) maybe absent.
 *
 * @example
 * ```ts
 * import { SglangRankMetrics } from "@loadledger/schema"
 * import { sglangRankMetrics } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(sglangRankMetrics, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(SglangRankMetrics)) // => true
 * samples.some((m) => m.numRunningReqs === undefined) // => true
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const sglangRankMetrics: fc.Arbitrary<S.SglangRankMetrics> = fc.record(
  {
    dpRank: fc.nat({ max: 63 }),
    numRunningReqs: count,
    numQueueReqs: count,
    numWaitingReqs: count,
    numWaitingUncachedTokens: count,
    numUsedTokens: count,
    numTotalTokens: count,
    numActiveTokens: count,
    tokenUsage: fraction,
    genThroughput: finite,
    cacheHitRate: fraction,
    utilization: fraction,
    maxTotalNumTokens: count,
    maxRunningRequests: count,
    maxPrefillTokens: count,
    contextLen: count
  },
  { requiredKeys: ["dpRank"] }
)
