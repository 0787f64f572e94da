/**
 * Reusable laws for effect Schemas and decoders, checked with fast-check.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import fc from "fast-check"

/** Structural equality with `Object.is` on leaves (so -0 and NaN are compared exactly). */
const same = (a: unknown, b: unknown): boolean => {
  if (Object.is(a, b)) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  if (ka.length !== kb.length) return false
  return ka.every((k) => k in b && same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
}

/**
 * Check the laws of a schema against its arbitrary: (1) every generated value passes `Schema.is`
 * (the arbitrary produces only valid values); (2) `decode(encode(a))` equals `a` (the wire
 * encoding loses nothing). Throws fast-check's report (with the counterexample) on failure.
 *
 * **When to use**: once per schema in tests, with the arbitrary from this package or your own.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import fc from "fast-check"
 * import { assertSchemaLaws } from "@loadledger/testing"
 * assertSchemaLaws(Schema.Struct({ n: Schema.Int }), fc.record({ n: fc.integer() }))
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const assertSchemaLaws = <A, I>(
  schema: Schema.Codec<A, I, never, never>,
  arbitrary: fc.Arbitrary<A>,
  params: fc.Parameters<[A]> = {}
): void => {
  const is = Schema.is(schema)
  const encode = Schema.encodeUnknownResult(schema)
  const decode = Schema.decodeUnknownResult(schema)
  fc.assert(
    fc.property(arbitrary, (a) => {
      if (!is(a)) throw new Error(`generated value rejected by Schema.is: ${fc.stringify(a)}`)
      const e = encode(a)
      if (Result.isFailure(e)) throw new Error(`encode failed: ${e.failure.message}`)
      const d = decode(e.success)
      if (Result.isFailure(d)) throw new Error(`decode of the encoded value failed: ${d.failure.message}`)
      if (!same(d.success, a)) throw new Error(`decode(encode(a)) = ${fc.stringify(d.success)}`)
    }),
    params
  )
}

/**
 * Fuzz a decoder: for every generated input it must return (never throw), and a success must pass
 * `Schema.is(schema)` when a schema is given (a decoder never yields a value its schema rejects).
 *
 * @example
 * ```ts
 * import fc from "fast-check"
 * import { decodeGetLoad, GetLoadResponse } from "@loadledger/schema"
 * import { assertDecoderTotal } from "@loadledger/testing"
 * assertDecoderTotal(decodeGetLoad, fc.jsonValue(), GetLoadResponse)
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const assertDecoderTotal = <In, A>(
  decode: (input: In) => Result.Result<A, unknown>,
  inputs: fc.Arbitrary<In>,
  schema?: Schema.Codec<A, unknown, never, never> | Schema.Top,
  params: fc.Parameters<[In]> = {}
): void => {
  const is = schema === undefined ? undefined : Schema.is(schema as Schema.Top)
  fc.assert(
    fc.property(inputs, (input) => {
      const r = decode(input)
      if (!Result.isResult(r)) throw new Error("decoder did not return a Result")
      if (is !== undefined && Result.isSuccess(r) && !is(r.success))
        throw new Error(`decoder yielded a value its schema rejects: ${fc.stringify(r.success)}`)
    }),
    params
  )
}
