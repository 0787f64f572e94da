/**
 * Arbitraries for one rank's entry of an SGLang `/v1/loads` response, per wire version; every key
 * may be absent (the server drops what it does not report).
 *
 * **When to use**: property tests of `/v1/loads` decoding and of code that reads `LoadEntry`
 * values; the responses of `V1Loads` are built from these.
 *
 * @since 0.1.0
 */
import type * as S from "@loadledger/schema"
import type fc from "fast-check"
import { count, opt } from "../internal/primitives.js"
import { flatV1, flatV2, flatV3, sectionsV1, sectionsV3 } from "../internal/snapshotFields.js"

/**
 * A `/v1/loads` entry of the first and shared-memory eras: v1's fields, `numTotalReqs` and the
 * sections, any key absent.
 *
 * @example
 * ```ts
 * import { LoadEntryV1 } from "@loadledger/schema"
 * import { loadEntryV1 } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(loadEntryV1, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(LoadEntryV1)) // => true
 * samples.some((e) => e.dpRank === undefined) // => true
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const loadEntryV1: fc.Arbitrary<S.LoadEntryV1> = opt({ ...flatV1, numTotalReqs: count, ...sectionsV1 })

/**
 * A v2 `/v1/loads` entry: v2 snapshot fields and the v1 sections, any key absent.
 *
 * @example
 * ```ts
 * import { LoadEntryV2 } from "@loadledger/schema"
 * import { loadEntryV2 } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(loadEntryV2, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(LoadEntryV2)) // => true
 * samples.some((e) => e.numActiveTokens === undefined) // => true
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const loadEntryV2: fc.Arbitrary<S.LoadEntryV2> = opt({ ...flatV2, ...sectionsV1 })

/**
 * A v3 `/v1/loads` entry: v3 snapshot fields and sections, any key absent.
 *
 * @example
 * ```ts
 * import { LoadEntryV3 } from "@loadledger/schema"
 * import { loadEntryV3 } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(loadEntryV3, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(LoadEntryV3)) // => true
 * samples.some((e) => e.decodeMetricsWindows === undefined) // => true
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const loadEntryV3: fc.Arbitrary<S.LoadEntryV3> = opt({ ...flatV3, ...sectionsV3 })
