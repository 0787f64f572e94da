/**
 * SGLang's `LoadStat` message and the frame it is published in:
 * `["load", 8-byte big-endian sequence number, msgpack(["LoadStat", ...fields])]`.
 *
 * Field order of the tagged array follows the struct: `num_running_reqs, num_waiting_reqs,
 * num_tokens, max_total_num_tokens, attn_dp_rank` (issue 2; msgspec array-like tagged struct).
 *
 * @since 0.1.0
 */
import { decode as msgpackDecode, encode as msgpackEncode } from "@msgpack/msgpack"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { type DecodeError, decodeError, decodeWith } from "./DecodeError.js"
import { msgpackLimits } from "./internal/msgpack.js"
import { checkNumbers } from "./internal/numbers.js"
import { wireStruct } from "./internal/wire.js"

/**
 * `LoadStat`: `numRunningReqs`, `numWaitingReqs`, `numTokens`, `maxTotalNumTokens`, `attnDpRank`
 * (ints; the attention-DP rank that publishes it).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { LoadStat } from "@loadledger/schema"
 * Schema.decodeUnknownSync(LoadStat)({ num_running_reqs: 3, num_waiting_reqs: 2, num_tokens: 256, max_total_num_tokens: 4096, attn_dp_rank: 1 }).attnDpRank // => 1
 * ```
 *
 * **When to use**: reading SGLang's published per-rank load messages.
 *
 * @category LoadStat
 * @since 0.1.0
 */
export const LoadStat = wireStruct({
  numRunningReqs: Schema.Int,
  numWaitingReqs: Schema.Int,
  numTokens: Schema.Int,
  maxTotalNumTokens: Schema.Int,
  attnDpRank: Schema.Int
})
/** @category LoadStat @since 0.1.0 */
export type LoadStat = typeof LoadStat.Type

/**
 * The msgpack payload: the tagged array `["LoadStat", running, waiting, tokens, maxTotal, rank]`.
 *
 * **When to use**: working with the raw msgpack payload.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { LoadStatTagged } from "@loadledger/schema"
 * Schema.is(LoadStatTagged)(["LoadStat", 3, 2, 256, 4096, 0]) // => true
 * ```
 *
 * @category LoadStat
 * @since 0.1.0
 */
export const LoadStatTagged = Schema.Tuple([
  Schema.Literal("LoadStat"),
  Schema.Int,
  Schema.Int,
  Schema.Int,
  Schema.Int,
  Schema.Int
])
/** @category LoadStat @since 0.1.0 */
export type LoadStatTagged = typeof LoadStatTagged.Type

const decodeTagged = decodeWith(LoadStatTagged)

/**
 * Convert a decoded tagged array (JSON or msgpack) to a {@link LoadStat}. A negative (the -1 of
 * sglang#32070), non-finite or above-2^53 element is an `InvalidField` error at `$[i]`.
 *
 * @example
 * ```ts
 * import { loadStatFromTagged } from "@loadledger/schema"
 * const r = loadStatFromTagged(["LoadStat", 3, 2, 256, 4096, 0])
 * r._tag === "Success" && r.success.numTokens // => 256
 * loadStatFromTagged(["LoadStat", -1, 2, 256, 4096, 0])._tag // => "Failure"
 * ```
 *
 * **When to use**: a payload already decoded from msgpack or JSON.
 *
 * @category LoadStat
 * @since 0.1.0
 */
export const loadStatFromTagged = (input: unknown): Result.Result<LoadStat, DecodeError> =>
  Result.map(
    Result.flatMap(decodeTagged(input), (t) => checkNumbers(t)),
    ([, numRunningReqs, numWaitingReqs, numTokens, maxTotalNumTokens, attnDpRank]) => ({
      numRunningReqs,
      numWaitingReqs,
      numTokens,
      maxTotalNumTokens,
      attnDpRank
    })
  )

const topic = new TextEncoder().encode("load")

/**
 * Encode a published frame: `[b"load", seq as 8 bytes big-endian, msgpack(["LoadStat", ...])]`.
 *
 * @example
 * ```ts
 * import { encodeLoadStatFrame } from "@loadledger/schema"
 * const [, seq] = encodeLoadStatFrame(7n, { numRunningReqs: 1, numWaitingReqs: 0, numTokens: 10, maxTotalNumTokens: 100, attnDpRank: 0 })
 * seq[7] // => 7
 * ```
 *
 * **When to use**: test doubles and simulators that publish like SGLang.
 *
 * @category LoadStat
 * @since 0.1.0
 */
export const encodeLoadStatFrame = (
  seq: bigint,
  stat: LoadStat
): readonly [Uint8Array, Uint8Array, Uint8Array] => {
  const s = new Uint8Array(8)
  new DataView(s.buffer).setBigUint64(0, BigInt.asUintN(64, seq), false)
  const payload = msgpackEncode([
    "LoadStat",
    stat.numRunningReqs,
    stat.numWaitingReqs,
    stat.numTokens,
    stat.maxTotalNumTokens,
    stat.attnDpRank
  ])
  return [topic.slice(), s, payload]
}

/**
 * Decode the msgpack payload of a frame to a {@link LoadStat}. Fails with `SyntaxError` on bad
 * msgpack and `InvalidField` (path `$[i]`) on a bad element.
 *
 * @example
 * ```ts
 * import { decodeLoadStatPayload, encodeLoadStatFrame } from "@loadledger/schema"
 * const f = encodeLoadStatFrame(1n, { numRunningReqs: 1, numWaitingReqs: 2, numTokens: 3, maxTotalNumTokens: 4, attnDpRank: 5 })
 * const r = decodeLoadStatPayload(f[2])
 * r._tag === "Success" && r.success.attnDpRank // => 5
 * ```
 *
 * **When to use**: a subscriber that already split the frame.
 *
 * @category LoadStat
 * @since 0.1.0
 */
export const decodeLoadStatPayload = (bytes: Uint8Array): Result.Result<LoadStat, DecodeError> => {
  let value: unknown
  try {
    value = msgpackDecode(bytes, { useBigInt64: false, ...msgpackLimits(bytes) })
  } catch (e) {
    return Result.fail(
      decodeError("SyntaxError", `invalid msgpack: ${e instanceof Error ? e.message : String(e)}`)
    )
  }
  return loadStatFromTagged(value)
}

/**
 * Decode a 3-part frame to `{ seq, stat }`; the topic must be `load` and the sequence number
 * exactly 8 bytes.
 *
 * @example
 * ```ts
 * import { decodeLoadStatFrame, encodeLoadStatFrame } from "@loadledger/schema"
 * const f = encodeLoadStatFrame(42n, { numRunningReqs: 1, numWaitingReqs: 2, numTokens: 3, maxTotalNumTokens: 4, attnDpRank: 0 })
 * const r = decodeLoadStatFrame(f)
 * r._tag === "Success" && r.success.seq // => 42n
 * ```
 *
 * **When to use**: a subscriber receiving the 3-part message.
 *
 * @category LoadStat
 * @since 0.1.0
 */
export const decodeLoadStatFrame = (
  frames: ReadonlyArray<Uint8Array>
): Result.Result<{ readonly seq: bigint; readonly stat: LoadStat }, DecodeError> => {
  if (frames.length !== 3)
    return Result.fail(decodeError("InvalidField", `expected 3 frames, got ${frames.length}`, { path: "$" }))
  const [t, s, p] = frames as readonly [Uint8Array, Uint8Array, Uint8Array]
  if (new TextDecoder().decode(t) !== "load")
    return Result.fail(decodeError("InvalidField", "topic is not 'load'", { path: "$[0]" }))
  if (s.byteLength !== 8)
    return Result.fail(
      decodeError("InvalidField", `sequence number has ${s.byteLength} bytes, expected 8`, { path: "$[1]" })
    )
  const seq = new DataView(s.buffer, s.byteOffset, 8).getBigUint64(0, false)
  return Result.map(decodeLoadStatPayload(p), (stat) => ({ seq, stat }))
}
