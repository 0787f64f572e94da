/**
 * Arbitraries for SGLang's `LoadStat` (the scheduler's load message), as a struct and as the
 * tagged msgpack tuple `["LoadStat", ...]`. Integers may be negative: the schema keeps what the
 * engine sends.
 *
 * **When to use**: property tests of `LoadStat` decoding (msgpack or JSON).
 *
 * @since 0.1.0
 */
import type * as S from "@loadledger/schema"
import fc from "fast-check"
import { int } from "../internal/primitives.js"

/**
 * `LoadStat` as a struct: running, waiting and token counts, the pool size and the attention DP
 * rank.
 *
 * @example
 * ```ts
 * import { LoadStat } from "@loadledger/schema"
 * import { loadStat } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(loadStat, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(LoadStat)) // => true
 * Object.keys(samples[0]!) // => ["numRunningReqs", "numWaitingReqs", "numTokens", "maxTotalNumTokens", "attnDpRank"]
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const loadStat: fc.Arbitrary<S.LoadStat> = fc.record({
  numRunningReqs: int,
  numWaitingReqs: int,
  numTokens: int,
  maxTotalNumTokens: int,
  attnDpRank: int
})

/**
 * The tagged msgpack payload `["LoadStat", running, waiting, tokens, maxTotalNumTokens,
 * attnDpRank]`.
 *
 * @example
 * ```ts
 * import { LoadStatTagged } from "@loadledger/schema"
 * import { loadStatTagged } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(loadStatTagged, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(LoadStatTagged)) // => true
 * samples.every((t) => t[0] === "LoadStat" && t.length === 6) // => true
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const loadStatTagged: fc.Arbitrary<S.LoadStatTagged> = fc.tuple(
  fc.constant("LoadStat" as const),
  int,
  int,
  int,
  int,
  int
)
