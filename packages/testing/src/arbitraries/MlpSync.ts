/**
 * Arbitraries for SGLang's MLP-sync rows (what DP ranks gather before each lockstep step): one row
 * as a struct of 8 or 11 columns, and the gathered rows as on the wire (arrays of 8 or 11 ints).
 *
 * **When to use**: property tests of `MlpSync` decoding and of step-time inputs read from it.
 *
 * @since 0.1.0
 */
import type * as S from "@loadledger/schema"
import fc from "fast-check"
import { count, flag } from "../internal/primitives.js"

const row8 = {
  numTokens: count,
  numTokensForLogprob: count,
  canRunDecodeCudaGraph: flag,
  isExtendInBatch: flag,
  localCanRunTbo: flag,
  localForwardMode: fc.nat({ max: 12 }),
  canRunPrefillCudaGraph: flag,
  prefillCudaGraphMaxPrefixLen: count
}

/**
 * One MLP-sync row as a struct: the 8 columns of older SGLang or the 11 of newer (draft CUDA graph,
 * health check, `attentionPairs`).
 *
 * @example
 * ```ts
 * import { MlpSyncBatchInfo } from "@loadledger/schema"
 * import { mlpSyncBatchInfo } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(mlpSyncBatchInfo, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(MlpSyncBatchInfo)) // => true
 * samples.every((r) => [8, 11].includes(Object.keys(r).length)) // => true
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const mlpSyncBatchInfo: fc.Arbitrary<S.MlpSyncBatchInfo> = fc.oneof(
  fc.record(row8),
  fc.record({ ...row8, canRunDraftCudaGraph: flag, isHealthCheck: flag, attentionPairs: count })
)

/**
 * Gathered MLP-sync rows as on the wire: at most eight rows, each an array of 11 or 8 counts.
 *
 * @example
 * ```ts
 * import { MlpSyncRows } from "@loadledger/schema"
 * import { mlpSyncRows } from "@loadledger/testing"
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * const samples = fc.sample(mlpSyncRows, { numRuns: 50, seed: 1 })
 * samples.every(Schema.is(MlpSyncRows)) // => true
 * samples.every((rows) => rows.every((r) => r.length === 8 || r.length === 11)) // => true
 * ```
 *
 * @category arbitraries
 * @since 0.1.0
 */
export const mlpSyncRows: fc.Arbitrary<S.MlpSyncRows> = fc.array(
  fc.oneof(
    fc.tuple(count, count, count, count, count, count, count, count, count, count, count),
    fc.tuple(count, count, count, count, count, count, count, count)
  ),
  { maxLength: 8 }
)
