/**
 * Decoding per-rank batches from JSON (the `--ranks` argument of `loadledger step-time`).
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaParser from "effect/SchemaParser"
import type { RankBatch } from "./Batch.js"

const Tokens = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
const PositiveTokens = Schema.Int.check(Schema.isGreaterThan(0))

/**
 * JSON shape of the ranks of one step: an array over ranks, each either an array of decode
 * context lengths (tokens) or `{ "decode": [L, ...], "extend": [{ "prefix": p, "tokens": e }] }`
 * (both keys optional).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { RanksJson } from "@loadledger/step-time"
 * Schema.is(RanksJson)([[8192], { extend: [{ prefix: 0, tokens: 4 }] }]) // => true
 * ```
 *
 * @category schemas
 * @since 0.1.0
 */
export const RanksJson = Schema.Array(
  Schema.Union([
    Schema.Array(Tokens),
    Schema.Struct({
      decode: Schema.optional(Schema.Array(Tokens)),
      extend: Schema.optional(Schema.Array(Schema.Struct({ prefix: Tokens, tokens: PositiveTokens })))
    })
  ])
)

/**
 * Why a ranks document was rejected; `path` is the JSON path of the first bad value (e.g.
 * `2.extend.0.tokens`).
 *
 * @category errors
 * @since 0.1.0
 */
export interface RanksJsonError {
  readonly _tag: "RanksJsonError"
  readonly path: string
  readonly message: string
}

const isDecodeList = (x: unknown): x is ReadonlyArray<number> => Array.isArray(x)

const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * Decode parsed JSON into per-rank batches.
 *
 * **When to use**: on untrusted input before {@link stepTime}. Context lengths must be
 * non-negative integers, extend chunks at least one token; an empty array (or `{}`) is an idle
 * rank; at least one rank is required. Never throws.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { ranksFromJson } from "@loadledger/step-time"
 * const r = ranksFromJson([[8192, 8192], { extend: [{ prefix: 0, tokens: 512 }] }, []])
 * Result.isSuccess(r) && r.success.length // => 3
 * const bad = ranksFromJson([[1], { decode: [-3] }])
 * Result.isFailure(bad) && bad.failure.path // => "1.decode.0"
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const ranksFromJson = (u: unknown): Result.Result<ReadonlyArray<RankBatch>, RanksJsonError> => {
  const r = SchemaParser.decodeUnknownResult(RanksJson)(u)
  if (Result.isFailure(r)) {
    // a union reports every member; report the deepest path, which names the bad value
    const issues = formatIssue(r.failure).issues
    const paths = issues.map((i) => ({
      message: i.message,
      path: (i.path ?? []).map((p) =>
        typeof p === "object" && p !== null && "key" in p ? String(p.key) : String(p)
      )
    }))
    const deepest = paths.reduce(
      (a, b) => (b.path.length > a.path.length ? b : a),
      paths[0] ?? { message: "", path: [] }
    )
    return Result.fail({
      _tag: "RanksJsonError",
      path: deepest.path.join("."),
      message: deepest.message || "invalid ranks"
    })
  }
  if (r.success.length === 0) return Result.fail({ _tag: "RanksJsonError", path: "", message: "no ranks" })
  return Result.succeed(
    r.success.map((x) =>
      isDecodeList(x) ? { decode: x, extend: [] } : { decode: x.decode ?? [], extend: x.extend ?? [] }
    )
  )
}
