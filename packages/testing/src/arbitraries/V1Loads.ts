/**
 * Arbitraries for SGLang's `/v1/loads` responses of every era: the first era (with `dpRankCount`
 * and an `aggregate`), the shared-memory era, and the newest (accelerator fields, v2 or v3
 * entries). At most four entries each; ISO timestamps with a `+00:00` offset, as the server writes.
 *
 * **When to use**: property tests of `/v1/loads` decoding and era detection.
 *
 * @since 0.1.0
 */
import type * as S from "@loadledger/schema"
import fc from "fast-check"
import { count, finite, fraction, opt } from "../internal/primitives.js"
import { loadEntryV1, loadEntryV2, loadEntryV3 } from "./LoadEntry.js"

const iso = fc
  .integer({ min: 0, max: 4_000_000_000_000 })
  .map((ms) => new Date(ms).toISOString().replace("Z", "+00:00"))
const envelope = { timestamp: iso, version: fc.constantFrom("0.4.0", "0.5.9", "0.5.12") }
const newest = {
  ...envelope,
  accelerator: fc.constantFrom("NVIDIA H200", "NVIDIA GB300"),
  numAccelerators: count
}

/**
 * The first era's `aggregate`: totals and averages over the ranks, any key absent.
 *
 * @example
 * ```ts
 * import { V1LoadsAggregate } from "@loadledger/schema"
 * import { v1LoadsAggregate } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(v1LoadsAggregate, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(V1LoadsAggregate)) // => true
 * samples.some((a) => a.totalReqs === undefined) // => true
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const v1LoadsAggregate: fc.Arbitrary<S.V1LoadsAggregate> = opt({
  totalRunningReqs: count,
  totalWaitingReqs: count,
  totalReqs: count,
  totalUsedTokens: count,
  totalTokens: count,
  avgTokenUsage: fraction,
  avgThroughput: finite,
  avgUtilization: fraction
})

/**
 * A first-era `/v1/loads` response: `loads` always, `timestamp`, `version`, `dpRankCount` and
 * `aggregate` each maybe absent.
 *
 * @example
 * ```ts
 * import { V1LoadsResponsePreShm } from "@loadledger/schema"
 * import { v1LoadsResponsePreShm } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(v1LoadsResponsePreShm, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(V1LoadsResponsePreShm)) // => true
 * samples.every((r) => r.loads.length <= 4) // => true
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const v1LoadsResponsePreShm: fc.Arbitrary<S.V1LoadsResponsePreShm> = fc.record(
  {
    ...envelope,
    dpRankCount: count,
    loads: fc.array(loadEntryV1, { maxLength: 4 }),
    aggregate: v1LoadsAggregate
  },
  { requiredKeys: ["loads"] }
)

/**
 * A shared-memory-era `/v1/loads` response: `loads` (v1 entries) and maybe `timestamp` and
 * `version`.
 *
 * @example
 * ```ts
 * import { V1LoadsResponseShmV1 } from "@loadledger/schema"
 * import { v1LoadsResponseShmV1 } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(v1LoadsResponseShmV1, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(V1LoadsResponseShmV1)) // => true
 * samples.every((r) => r.timestamp === undefined || r.timestamp.endsWith("+00:00")) // => true
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const v1LoadsResponseShmV1: fc.Arbitrary<S.V1LoadsResponseShmV1> = fc.record(
  { ...envelope, loads: fc.array(loadEntryV1, { maxLength: 4 }) },
  { requiredKeys: ["loads"] }
)

/**
 * The newest `/v1/loads` response with v2 entries: maybe `accelerator` and `numAccelerators` beside
 * the envelope.
 *
 * @example
 * ```ts
 * import { V1LoadsResponseShmV2 } from "@loadledger/schema"
 * import { v1LoadsResponseShmV2 } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(v1LoadsResponseShmV2, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(V1LoadsResponseShmV2)) // => true
 * samples.some((r) => r.accelerator === "NVIDIA H200") // => true
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const v1LoadsResponseShmV2: fc.Arbitrary<S.V1LoadsResponseShmV2> = fc.record(
  { ...newest, loads: fc.array(loadEntryV2, { maxLength: 4 }) },
  { requiredKeys: ["loads"] }
)

/**
 * The newest `/v1/loads` response with v3 entries.
 *
 * @example
 * ```ts
 * import { V1LoadsResponseShmV3 } from "@loadledger/schema"
 * import { v1LoadsResponseShmV3 } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(v1LoadsResponseShmV3, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(V1LoadsResponseShmV3)) // => true
 * samples.some((r) => r.loads.length > 0) // => true
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const v1LoadsResponseShmV3: fc.Arbitrary<S.V1LoadsResponseShmV3> = fc.record(
  { ...newest, loads: fc.array(loadEntryV3, { maxLength: 4 }) },
  { requiredKeys: ["loads"] }
)
