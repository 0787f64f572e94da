/**
 * The input rules every policy's `route` applies first, so every policy refuses bad input alike
 * with a `PolicyError` `InvalidInput` naming the field: a request's `inputLength`
 * (`checkInputLength`, `isTokenCount`), the clock (`checkNow`), and its optional fields
 * (`checkRequestFields`, `isTokenId`).
 *
 * @since 0.1.0
 */
import { kindOf, shownValue } from "./internal/kindOf.js"
import { type PolicyError, policyError, type RouteRequest } from "./Policy.js"

/**
 * Whether `n` is a token count: a safe non-negative integer (`0`, `512`; not `-1`, `1.5`, `NaN`,
 * `Infinity` or `2 ** 53`). The one rule for a request's `inputLength` (see {@link checkInputLength}).
 *
 * **When to use**: to validate a token count where it enters, e.g. a trace reader or a router API.
 *
 * @example
 * ```ts
 * import { isTokenCount } from "@loadledger/policies"
 * isTokenCount(512) // => true
 * isTokenCount(1.5) // => false
 * isTokenCount(-1) // => false
 * ```
 *
 * @category guards
 * @since 0.1.0
 */
export const isTokenCount = (n: number): boolean => Number.isSafeInteger(n) && n >= 0

/**
 * Whether `n` is a token id: an integer in `0..2^32-1` (`0`, `151643`; not `-1`, `1.5`, `NaN` or
 * `2 ** 32`), the `u32` upstream routers hash (SMG `prefix_hash` reads `&[u32]`). The one rule for
 * each entry of a request's `tokenIds` (see {@link checkRequestFields}).
 *
 * **When to use**: to validate token ids where they enter, e.g. a trace reader or a router API.
 *
 * @example
 * ```ts
 * import { isTokenId } from "@loadledger/policies"
 * isTokenId(151643) // => true
 * isTokenId(-1) // => false
 * isTokenId(2 ** 32) // => false
 * ```
 *
 * @category guards
 * @since 0.5.0
 */
export const isTokenId = (n: unknown): n is number =>
  // `>>> 0` keeps exactly the integers 0..2^32-1 (NaN, 1.5, -1 and 2^32 come out other values):
  // one operation, as `checkRequestFields` runs it on every id of every route
  typeof n === "number" && n >>> 0 === n

/**
 * The one check of a request's prompt length: `undefined` when `inputLength` is a token
 * count ({@link isTokenCount}), else a `PolicyError` `InvalidInput` naming the field `inputLength`.
 * Run where a request enters (the live router's `route`, every policy's `route`), and the code
 * past the check trusts the type.
 *
 * **When to use**: at a boundary that accepts `RouteRequest`s from outside.
 *
 * @example
 * ```ts
 * import { checkInputLength } from "@loadledger/policies"
 * checkInputLength(100) // => undefined
 * checkInputLength(-1)?.field // => "inputLength"
 * checkInputLength(0.5)?.message
 * // => "inputLength must be a token count, got 0.5"
 * ```
 *
 * @category guards
 * @since 0.1.0
 */
export const checkInputLength = (inputLength: number): PolicyError | undefined =>
  isTokenCount(inputLength)
    ? undefined
    : policyError(
        "InvalidInput",
        `inputLength must be a token count, got ${shownValue(inputLength)}`,
        "inputLength"
      )

/**
 * The one check of a policy call's time: `undefined` when `now` is a finite number of seconds
 * (negative ones included: a clock may start anywhere), else a `PolicyError` `InvalidInput` naming
 * the field `now` (`NaN`, `Infinity`, `-Infinity`). Every policy's `route` runs it right after
 * {@link checkInputLength} (so a request bad in both gets the `inputLength` error); `observe`,
 * which cannot return an error, ignores a call with such a `now` and returns its state unchanged.
 * One comparison: it costs nothing measurable on a route.
 *
 * **When to use**: at a boundary that takes a time from outside (a trace reader, a router API),
 * or in a new policy's `route`.
 *
 * @example
 * ```ts
 * import { checkNow } from "@loadledger/policies"
 * checkNow(12.5) // => undefined
 * checkNow(-3) // => undefined
 * checkNow(Number.NaN)?.field // => "now"
 * checkNow(Number.POSITIVE_INFINITY)?.message
 * // => "now must be finite seconds, got Infinity"
 * ```
 *
 * @category guards
 * @since 0.1.0
 */
export const checkNow = (now: number): PolicyError | undefined =>
  Number.isFinite(now)
    ? undefined
    : policyError("InvalidInput", `now must be finite seconds, got ${shownValue(now)}`, "now")

/**
 * The one check of a request's other fields, by their types: `requestId` a string; `bootstrapRoom`
 * absent, a string or a bigint (its value is the room policies' business); `sessionId` absent or a
 * string; `prefixHashes` absent or an array of strings; `tokenIds` absent or an array of token ids
 * ({@link isTokenId}); `routedDpRank` absent or a number (whether it is a rank is the policy's
 * check). `undefined` when all hold, else a `PolicyError` `InvalidInput` naming the first field at
 * fault in that order (`prefixHashes[i]` for a hash that is not a string, `tokenIds[i]` for an id
 * that is not a token id, e.g. `-1` or `2.5`; `InvalidRoutedRank` for the pin), so a request from
 * untyped code (JSON, JavaScript) with `prefixHashes: "abc"` is refused instead of read as three
 * one-letter hashes. Every policy's `route` runs it right after {@link checkInputLength} and
 * {@link checkNow} (so a request bad there too gets their error first). Cost: a few `typeof` tests
 * plus one loop over `prefixHashes` and one over `tokenIds`, O(blocks + ids).
 *
 * **When to use**: at a boundary that accepts `RouteRequest`s from outside, or in a new policy's
 * `route`.
 *
 * @example
 * ```ts
 * import { checkRequestFields } from "@loadledger/policies"
 * checkRequestFields({ requestId: "a", inputLength: 3, prefixHashes: ["h0", "h1"] }) // => undefined
 * const bad = { requestId: "a", inputLength: 3, prefixHashes: "abc" } as never
 * checkRequestFields(bad)?.field // => "prefixHashes"
 * checkRequestFields(bad)?.message
 * // => "prefixHashes must be absent or an array of strings, got string"
 * checkRequestFields({ requestId: "a", inputLength: 3, prefixHashes: ["h0", 7] } as never)?.field
 * // => "prefixHashes[1]"
 * checkRequestFields({ requestId: "a", inputLength: 3, tokenIds: [1, -2] })?.message
 * // => "tokenIds[1] must be a token id (an integer 0..4294967295), got -2"
 * ```
 *
 * @category guards
 * @since 0.1.0
 */
export const checkRequestFields = (request: RouteRequest): PolicyError | undefined => {
  const { requestId, bootstrapRoom, sessionId, prefixHashes, tokenIds, routedDpRank } = request
  if (typeof requestId !== "string")
    return policyError("InvalidInput", `requestId must be a string, got ${kindOf(requestId)}`, "requestId")
  // a pin of another type is no rank; whether a number is one is each policy's (upstream's) check
  if (routedDpRank !== undefined && typeof routedDpRank !== "number")
    return policyError(
      "InvalidRoutedRank",
      `routedDpRank must be absent or a number (an integer rank), got ${shownValue(routedDpRank)}`,
      "routedDpRank"
    )
  if (bootstrapRoom !== undefined && typeof bootstrapRoom !== "string" && typeof bootstrapRoom !== "bigint")
    return policyError(
      "InvalidInput",
      `bootstrapRoom must be absent, a string or a bigint, got ${kindOf(bootstrapRoom)}`,
      "bootstrapRoom"
    )
  if (sessionId !== undefined && typeof sessionId !== "string")
    return policyError(
      "InvalidInput",
      `sessionId must be absent or a string, got ${kindOf(sessionId)}`,
      "sessionId"
    )
  if (prefixHashes !== undefined) {
    if (!Array.isArray(prefixHashes))
      return policyError(
        "InvalidInput",
        `prefixHashes must be absent or an array of strings, got ${kindOf(prefixHashes)}`,
        "prefixHashes"
      )
    for (let i = 0; i < prefixHashes.length; i++)
      if (typeof prefixHashes[i] !== "string")
        return policyError(
          "InvalidInput",
          `prefixHashes[${i}] must be a string, got ${kindOf(prefixHashes[i])}`,
          `prefixHashes[${i}]`
        )
  }
  if (tokenIds === undefined) return undefined
  if (!Array.isArray(tokenIds))
    return policyError(
      "InvalidInput",
      `tokenIds must be absent or an array of token ids, got ${kindOf(tokenIds)}`,
      "tokenIds"
    )
  for (let i = 0; i < tokenIds.length; i++)
    if (!isTokenId(tokenIds[i]))
      return policyError(
        "InvalidInput",
        `tokenIds[${i}] must be a token id (an integer 0..4294967295), got ${shownValue(tokenIds[i])}`,
        `tokenIds[${i}]`
      )
  return undefined
}
