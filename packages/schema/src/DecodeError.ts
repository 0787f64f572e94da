/**
 * Typed decode failures shared by every decoder in this package.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import { escapeControl } from "./Escape.js"

/**
 * Why a payload could not be decoded. Every failure names where it happened: `path` (a JSONPath
 * into the wire object, e.g. `$.loads[0].queues.grammar`) for structured payloads, `line` (1-based)
 * for text formats (Prometheus exposition, logger lines, JSON syntax errors).
 *
 * - `InvalidField`: a value has the wrong type or a required key is missing.
 * - `SyntaxError`: the text is not valid JSON / exposition text / msgpack.
 * - `AmbiguousSeries`: the same series (metric + label set, or metric + rank) appears more than
 *   once, so no single value can be attributed to a rank (never last-writer-wins).
 * - `InvalidInclude`: a `/v1/loads` `include` token is unknown (SGLang's `LoadSnapshot.to_dict`).
 * - `UnknownFormat`: `decodeLedger`'s `auto` kind recognised no format.
 * - `UnknownSeries`: every sample of a metrics text belongs to series this package does not model
 *   (the message names them); never a silent empty ledger.
 * - `LimitExceeded`: the payload exceeds a work bound (JSON nesting deeper than 512 levels), so
 *   decoding stops before it can stall the caller.
 *
 * **When to use**: match on `_tag`; print with {@link formatDecodeError}.
 *
 * @example
 * ```ts
 * import { formatDecodeError } from "@loadledger/schema"
 * formatDecodeError({ _tag: "InvalidField", path: "$.loads[0].dp_rank", message: "Expected number" })
 * // => "$.loads[0].dp_rank: Expected number"
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export interface DecodeError {
  readonly _tag:
    | "InvalidField"
    | "SyntaxError"
    | "AmbiguousSeries"
    | "InvalidInclude"
    | "UnknownFormat"
    | "UnknownSeries"
    | "LimitExceeded"
  readonly path?: string | undefined
  readonly line?: number | undefined
  readonly message: string
}

/**
 * Build a {@link DecodeError}.
 *
 * **When to use**: in decoders of this package and of packages that extend it.
 *
 * @example
 * ```ts
 * import { decodeError } from "@loadledger/schema"
 * decodeError("SyntaxError", "unexpected token", { line: 3 }).line // => 3
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export const decodeError = (
  tag: DecodeError["_tag"],
  message: string,
  where: { readonly path?: string | undefined; readonly line?: number | undefined } = {}
): DecodeError => ({
  _tag: tag,
  ...(where.path === undefined ? {} : { path: where.path }),
  ...(where.line === undefined ? {} : { line: where.line }),
  message: escapeControl(message.replace(/\s*\n\s*/g, " "))
})

/**
 * Format a path of keys and indices as JSONPath: `["loads", 0, "dp_rank"]` -> `$.loads[0].dp_rank`.
 *
 * @example
 * ```ts
 * import { formatPath } from "@loadledger/schema"
 * formatPath(["loads", 0, "queues"]) // => "$.loads[0].queues"
 * ```
 *
 * **When to use**: building paths for your own `DecodeError`s.
 *
 * @category errors
 * @since 0.1.0
 */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string => {
  let out = "$"
  for (const k of path) {
    if (typeof k === "number") out += `[${k}]`
    else if (typeof k === "string" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) out += `.${k}`
    else out += `[${JSON.stringify(String(k))}]`
  }
  return out
}

/**
 * Convert an effect `Schema.SchemaError` to an `InvalidField` {@link DecodeError} naming the first bad
 * field by its wire path (`prefix` is prepended to the path, for payloads nested in an envelope).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { fromSchemaError } from "@loadledger/schema"
 * const r = Schema.decodeUnknownResult(Schema.Struct({ a: Schema.Number }))({ a: "x" })
 * if (r._tag === "Failure") fromSchemaError(r.failure).path // => "$.a"
 * ```
 *
 * **When to use**: wrapping your own effect Schema decoders so their failures look like this package's.
 *
 * @category errors
 * @since 0.1.0
 */
export const fromSchemaError = (
  error: Schema.SchemaError,
  prefix: ReadonlyArray<PropertyKey> = []
): DecodeError => {
  const out = formatter(error.issue)
  const first = out.issues[0]
  const path = formatPath([...prefix, ...(first?.path ?? []).map((s) => (typeof s === "object" ? s.key : s))])
  return decodeError("InvalidField", first?.message ?? error.message, { path })
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * One line for a human: `$.loads[0].queues.grammar: Missing key`, `line 4: ...`.
 *
 * @example
 * ```ts
 * import { formatDecodeError } from "@loadledger/schema"
 * formatDecodeError({ _tag: "SyntaxError", line: 4, message: "bad value" }) // => "line 4: bad value"
 * ```
 *
 * **When to use**: printing a failure to a person (the CLI does).
 *
 * @category errors
 * @since 0.1.0
 */
export const formatDecodeError = (e: DecodeError): string => {
  const where = e.path !== undefined ? e.path : e.line !== undefined ? `line ${e.line}` : undefined
  return escapeControl(where === undefined ? e.message : `${where}: ${e.message}`)
}

/**
 * Run an effect Schema decoder from `unknown` and map its failure to a {@link DecodeError}.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { decodeWith } from "@loadledger/schema"
 * decodeWith(Schema.Struct({ a: Schema.Number }))({ a: 1 })._tag // => "Success"
 * ```
 *
 * **When to use**: adding a decoder for a new wire schema.
 *
 * @category errors
 * @since 0.1.0
 */
export const decodeWith = <A, I>(
  schema: Schema.Codec<A, I, never, never>,
  prefix: ReadonlyArray<PropertyKey> = []
): ((input: unknown) => Result.Result<A, DecodeError>) => {
  const decode = Schema.decodeUnknownResult(schema)
  return (input) => Result.mapError(decode(input), (e) => fromSchemaError(e, prefix))
}
