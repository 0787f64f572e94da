/**
 * SGLang's legacy `/get_load` response (deprecated upstream: "Please use '/v1/loads' instead").
 *
 * Upstream: sgl-project/sglang `python/sglang/srt/entrypoints/http_server.py` (`/get_load`), as
 * described in PR #16976.
 *
 * @since 0.1.0
 */

import type * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { type DecodeError, decodeWith } from "./DecodeError.js"
import { strictly } from "./internal/numbers.js"
import { wireStruct } from "./internal/wire.js"

/**
 * One `/get_load` entry: `dp_rank` (int or null for a single rank), `num_reqs` (= running +
 * waiting), `num_waiting_reqs`, `num_tokens` (= `num_total_tokens`), optional `num_pending_tokens`
 * (= total - used) and `ts_tic` (`time.perf_counter()`: monotonic seconds, **not** epoch).
 * Other keys (`rid`, `http_worker_ipc`) are ignored.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { GetLoadEntry } from "@loadledger/schema"
 * Schema.decodeUnknownSync(GetLoadEntry)({ dp_rank: null, num_reqs: 0, num_waiting_reqs: 0, num_tokens: 0, ts_tic: 2359325.1 }).dpRank // => null
 * ```
 *
 * **When to use**: talking to SGLang servers older than `/v1/loads`.
 *
 * @category GetLoad
 * @since 0.1.0
 */
export const GetLoadEntry = wireStruct({
  dpRank: Schema.optionalKey(Schema.NullOr(Schema.Int)),
  numReqs: Schema.Int,
  numWaitingReqs: Schema.Int,
  numTokens: Schema.Int,
  numPendingTokens: Schema.optionalKey(Schema.Int),
  tsTic: Schema.optionalKey(Schema.Finite)
})
/** @category GetLoad @since 0.1.0 */
export type GetLoadEntry = typeof GetLoadEntry.Type

/**
 * The whole `/get_load` body: a list of {@link GetLoadEntry}.
 *
 * **When to use**: decoding a whole `/get_load` body; prefer `decodeGetLoad`.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { GetLoadResponse } from "@loadledger/schema"
 * Schema.decodeUnknownSync(GetLoadResponse)([{ num_reqs: 3, num_waiting_reqs: 1, num_tokens: 50 }]) // => [{ numReqs: 3, numWaitingReqs: 1, numTokens: 50 }]
 * ```
 *
 * @category GetLoad
 * @since 0.1.0
 */
export const GetLoadResponse = Schema.Array(GetLoadEntry)
/** @category GetLoad @since 0.1.0 */
export type GetLoadResponse = typeof GetLoadResponse.Type

const decode = strictly(decodeWith(GetLoadResponse), new Set(["tsTic"]))

/**
 * Decode a parsed `/get_load` body from `unknown`. A negative, non-finite or above-2^53 count is
 * an `InvalidField` error at its wire path (`$[0].num_reqs`); `ts_tic` is not checked (a clock).
 *
 * @example
 * ```ts
 * import { decodeGetLoad } from "@loadledger/schema"
 * decodeGetLoad([{ num_reqs: "x" }])._tag // => "Failure"
 * const r = decodeGetLoad([{ num_reqs: 1, num_waiting_reqs: -1, num_tokens: 0 }])
 * r._tag === "Failure" && r.failure.path // => "$[0].num_waiting_reqs"
 * ```
 *
 * **When to use**: polling a legacy SGLang server; `decodeLedger` gives the normalized rows.
 *
 * @category GetLoad
 * @since 0.1.0
 */
export const decodeGetLoad = (input: unknown): Result.Result<GetLoadResponse, DecodeError> => decode(input)
