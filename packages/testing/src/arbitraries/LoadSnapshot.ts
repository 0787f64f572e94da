/**
 * Arbitraries for SGLang's `LoadSnapshot` (the per-rank shared-memory snapshot), one per wire
 * version, every field present (sections may be `null`).
 *
 * **When to use**: property tests of code that reads snapshots (`assertSchemaLaws` with
 * `LoadSnapshotV1`..`V3`, the policies fed from them).
 *
 * @since 0.1.0
 */
import type * as S from "@loadledger/schema"
import fc from "fast-check"
import { flatV1, flatV2, flatV3, sectionsV1, sectionsV3 } from "../internal/snapshotFields.js"

/**
 * SGLang `LoadSnapshot` v1: the per-rank counters and shares, `dpRank` 0..63, the five sections each
 * present or `null`.
 *
 * @example
 * ```ts
 * import { LoadSnapshotV1 } from "@loadledger/schema"
 * import { loadSnapshotV1 } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(loadSnapshotV1, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(LoadSnapshotV1)) // => true
 * samples.every((s) => Number.isInteger(s.dpRank) && s.dpRank >= 0 && s.dpRank < 64) // => true
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const loadSnapshotV1: fc.Arbitrary<S.LoadSnapshotV1> = fc.record({ ...flatV1, ...sectionsV1 })

/**
 * SGLang `LoadSnapshot` v2: v1 plus `numActiveTokens`, the prefill totals and `decodeMoments`.
 *
 * @example
 * ```ts
 * import { LoadSnapshotV2 } from "@loadledger/schema"
 * import { loadSnapshotV2 } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(loadSnapshotV2, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(LoadSnapshotV2)) // => true
 * samples.every((s) => s.decodeMoments === null || s.decodeMoments.length <= 4) // => true
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const loadSnapshotV2: fc.Arbitrary<S.LoadSnapshotV2> = fc.record({ ...flatV2, ...sectionsV1 })

/**
 * SGLang `LoadSnapshot` v3: v2 plus `decodeMetricsWindows`, with v3's speculative and queue
 * sections.
 *
 * @example
 * ```ts
 * import { LoadSnapshotV3 } from "@loadledger/schema"
 * import { loadSnapshotV3 } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(loadSnapshotV3, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(LoadSnapshotV3)) // => true
 * samples.every((s) => "decodeMetricsWindows" in s) // => true
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const loadSnapshotV3: fc.Arbitrary<S.LoadSnapshotV3> = fc.record({ ...flatV3, ...sectionsV3 })
