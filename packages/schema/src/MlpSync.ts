/**
 * SGLang's MLP-sync batch info: under DP attention every rank all-gathers one row of integers per
 * step, and each rank derives the same global view from the gathered rows.
 *
 * Upstream: sgl-project/sglang `python/sglang/srt/managers/scheduler.py` (`prepare_mlp_sync_batch`,
 * `MlpSyncBatchInfo`), as specified in issue 2. The older 8-column layout is taken to be the first
 * 8 columns of the 11-column one (no draft-graph, health-check and attention-pairs columns).
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { type DecodeError, decodeError, decodeWith } from "./DecodeError.js"
import { strictly } from "./internal/numbers.js"
import { wireStruct } from "./internal/wire.js"

/**
 * One rank's row as a struct: `numTokens`, `numTokensForLogprob`, `canRunDecodeCudaGraph` (0/1),
 * `isExtendInBatch` (0/1), `localCanRunTbo` (0/1), `localForwardMode` (ForwardMode enum value),
 * `canRunPrefillCudaGraph` (0/1), `prefillCudaGraphMaxPrefixLen`, and in the 11-column layout
 * `canRunDraftCudaGraph`, `isHealthCheck`, `attentionPairs`.
 *
 * **When to use**: reading one rank's row by name.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { MlpSyncBatchInfo } from "@loadledger/schema"
 * Schema.decodeUnknownSync(MlpSyncBatchInfo)({ num_tokens: 4, num_tokens_for_logprob: 4, can_run_decode_cuda_graph: 1, is_extend_in_batch: 0, local_can_run_tbo: 0, local_forward_mode: 2, can_run_prefill_cuda_graph: 1, prefill_cuda_graph_max_prefix_len: 0 }).numTokens // => 4
 * ```
 *
 * @category MlpSync
 * @since 0.1.0
 */
export const MlpSyncBatchInfo = wireStruct({
  numTokens: Schema.Int,
  numTokensForLogprob: Schema.Int,
  canRunDecodeCudaGraph: Schema.Int,
  isExtendInBatch: Schema.Int,
  localCanRunTbo: Schema.Int,
  localForwardMode: Schema.Int,
  canRunPrefillCudaGraph: Schema.Int,
  prefillCudaGraphMaxPrefixLen: Schema.Int,
  canRunDraftCudaGraph: Schema.optionalKey(Schema.Int),
  isHealthCheck: Schema.optionalKey(Schema.Int),
  attentionPairs: Schema.optionalKey(Schema.Int)
})
/** @category MlpSync @since 0.1.0 */
export type MlpSyncBatchInfo = typeof MlpSyncBatchInfo.Type

const I = Schema.Int
/**
 * The gathered rows as they are on the wire: arrays of 11 (current) or 8 (older) integers.
 *
 * **When to use**: decoding the gathered tensor as lists of ints.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { MlpSyncRows } from "@loadledger/schema"
 * Schema.is(MlpSyncRows)([[1, 1, 1, 0, 1, 2, 1, 0]]) // => true
 * ```
 *
 * @category MlpSync
 * @since 0.1.0
 */
export const MlpSyncRows = Schema.Array(
  Schema.Union([Schema.Tuple([I, I, I, I, I, I, I, I, I, I, I]), Schema.Tuple([I, I, I, I, I, I, I, I])])
)
/** @category MlpSync @since 0.1.0 */
export type MlpSyncRows = typeof MlpSyncRows.Type

// token counts, 0/1 flags and enum values: never negative
const decodeRows = strictly(decodeWith(MlpSyncRows))

/**
 * Decode gathered rows (`number[][]`, one per rank) to {@link MlpSyncBatchInfo} structs. A
 * negative value is an `InvalidField` error at `$[rank][column]`.
 *
 * @example
 * ```ts
 * import { decodeMlpSyncRows } from "@loadledger/schema"
 * const r = decodeMlpSyncRows([[5, 5, 1, 0, 1, 2, 1, 0, 1, 0, 3]])
 * r._tag === "Success" && r.success[0]?.attentionPairs // => 3
 * decodeMlpSyncRows([[-1, 5, 1, 0, 1, 2, 1, 0]])._tag // => "Failure"
 * ```
 *
 * **When to use**: turning a gathered tensor (as nested lists) into named rows.
 *
 * @category MlpSync
 * @since 0.1.0
 */
export const decodeMlpSyncRows = (
  input: unknown
): Result.Result<ReadonlyArray<MlpSyncBatchInfo>, DecodeError> =>
  Result.map(decodeRows(input), (rows) =>
    rows.map((r) => ({
      numTokens: r[0],
      numTokensForLogprob: r[1],
      canRunDecodeCudaGraph: r[2],
      isExtendInBatch: r[3],
      localCanRunTbo: r[4],
      localForwardMode: r[5],
      canRunPrefillCudaGraph: r[6],
      prefillCudaGraphMaxPrefixLen: r[7],
      ...(r.length === 11 ? { canRunDraftCudaGraph: r[8], isHealthCheck: r[9], attentionPairs: r[10] } : {})
    }))
  )

/**
 * The global view every rank computes after the all-gather.
 *
 * **When to use**: reading what `reduceMlpSync` decided for a step.
 *
 * @category MlpSync
 * @since 0.1.0
 */
export interface MlpSyncGlobal {
  /** `numTokens` of every rank, in rank order. */
  readonly globalNumTokens: ReadonlyArray<number>
  readonly globalNumTokensForLogprob: ReadonlyArray<number>
  /** `attentionPairs` per rank; absent when any row is in the 8-column layout. */
  readonly globalAttentionPairs?: ReadonlyArray<number>
  /** min over ranks: one rank that cannot replay the decode graph makes every rank run eager. */
  readonly canRunDecodeCudaGraph: boolean
  /** max over ranks. */
  readonly isExtendInBatch: boolean
  /** min over ranks. */
  readonly canRunPrefillCudaGraph: boolean
  /** max over ranks. */
  readonly prefillCudaGraphMaxPrefixLen: number
  /** min over ranks of `localCanRunTbo`. */
  readonly canRunTbo: boolean
  /** max `numTokens` > 0: some rank has work, so idle ranks must run an idle (dummy) batch. */
  readonly needIdleBatch: boolean
  /** Ranks with `numTokens` = 0 (they run the idle batch). */
  readonly idleRanks: ReadonlyArray<number>
  /**
   * Whether a decode step may be converted to extend: only when every rank has work. One idle
   * rank makes every rank fall back to eager mode.
   */
  readonly decodeMayConvertToExtend: boolean
}

/**
 * Reduce the gathered rows to {@link MlpSyncGlobal} (pure). Fails on an empty gather.
 *
 * **When to use**: the step-time model and the simulator, to know what every rank does this step.
 *
 * @example
 * ```ts
 * import { reduceMlpSync } from "@loadledger/schema"
 * const row = (n: number) => ({ numTokens: n, numTokensForLogprob: n, canRunDecodeCudaGraph: 1, isExtendInBatch: 0,
 *   localCanRunTbo: 1, localForwardMode: 2, canRunPrefillCudaGraph: 1, prefillCudaGraphMaxPrefixLen: 0 })
 * const r = reduceMlpSync([row(4), row(0)])
 * r._tag === "Success" && r.success.needIdleBatch // => true
 * ```
 *
 * @category MlpSync
 * @since 0.1.0
 */
export const reduceMlpSync = (
  rows: ReadonlyArray<MlpSyncBatchInfo>
): Result.Result<MlpSyncGlobal, DecodeError> => {
  if (rows.length === 0) return Result.fail(decodeError("InvalidField", "no rows gathered", { path: "$" }))
  const col = (f: (r: MlpSyncBatchInfo) => number) => rows.map(f)
  const min = (f: (r: MlpSyncBatchInfo) => number) => Math.min(...col(f))
  const max = (f: (r: MlpSyncBatchInfo) => number) => Math.max(...col(f))
  const pairs = rows.every((r) => r.attentionPairs !== undefined) ? col((r) => r.attentionPairs!) : undefined
  const idleRanks = rows.flatMap((r, i) => (r.numTokens === 0 ? [i] : []))
  const isExtendInBatch = max((r) => r.isExtendInBatch) > 0
  return Result.succeed({
    globalNumTokens: col((r) => r.numTokens),
    globalNumTokensForLogprob: col((r) => r.numTokensForLogprob),
    ...(pairs === undefined ? {} : { globalAttentionPairs: pairs }),
    canRunDecodeCudaGraph: min((r) => r.canRunDecodeCudaGraph) > 0,
    isExtendInBatch,
    canRunPrefillCudaGraph: min((r) => r.canRunPrefillCudaGraph) > 0,
    prefillCudaGraphMaxPrefixLen: max((r) => r.prefillCudaGraphMaxPrefixLen),
    canRunTbo: min((r) => r.localCanRunTbo) > 0,
    needIdleBatch: max((r) => r.numTokens) > 0,
    idleRanks,
    decodeMayConvertToExtend: idleRanks.length === 0
  })
}
