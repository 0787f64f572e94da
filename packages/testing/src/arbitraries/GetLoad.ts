/**
 * Arbitraries for SGLang's legacy `/get_load` endpoint: one entry per rank, and the body (an array
 * of at most four entries).
 *
 * **When to use**: property tests of `decodeGetLoad` and of code reading `GetLoadEntry`.
 *
 * @since 0.1.0
 */
import type * as S from "@loadledger/schema"
import fc from "fast-check"
import { count, finite, nullOr } from "../internal/primitives.js"

/**
 * A legacy `/get_load` entry: request, waiting and token counts always; `dpRank` (0..63 or `null`),
 * pending tokens and `tsTic` maybe absent.
 *
 * @example
 * ```ts
 * import { GetLoadEntry } from "@loadledger/schema"
 * import { getLoadEntry } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(getLoadEntry, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(GetLoadEntry)) // => true
 * samples.some((e) => e.dpRank === null) // => true
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const getLoadEntry: fc.Arbitrary<S.GetLoadEntry> = fc.record(
  {
    dpRank: nullOr(fc.nat({ max: 63 })),
    numReqs: count,
    numWaitingReqs: count,
    numTokens: count,
    numPendingTokens: count,
    tsTic: finite
  },
  { requiredKeys: ["numReqs", "numWaitingReqs", "numTokens"] }
)

/**
 * A legacy `/get_load` body: at most four entries.
 *
 * @example
 * ```ts
 * import { GetLoadResponse } from "@loadledger/schema"
 * import { getLoadResponse } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(getLoadResponse, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(GetLoadResponse)) // => true
 * samples.every((r) => r.length <= 4) // => true
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const getLoadResponse: fc.Arbitrary<S.GetLoadResponse> = fc.array(getLoadEntry, { maxLength: 4 })
