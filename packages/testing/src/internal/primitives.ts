/**
 * The value generators every schema arbitrary of this package is built from: the wire's integer,
 * count, finite, fraction and flag fields, and the optional-key and nullable wrappers.
 *
 * @internal
 */
import fc from "fast-check"

/** A wire integer: negative values included (the schemas keep what the engine sends). */
export const int = fc.oneof(fc.integer({ min: -1000, max: 1_000_000 }), fc.maxSafeInteger())
/** A non-negative safe integer, small ones and the largest. */
export const count = fc.oneof(fc.nat({ max: 100_000 }), fc.maxSafeNat())
/** Any finite double. */
export const finite = fc.double({ noNaN: true, noDefaultInfinity: true })
/** A share in [0, 1]. */
export const fraction = fc.double({ min: 0, max: 1, noNaN: true })
/** A 0/1 flag. */
export const flag = fc.integer({ min: 0, max: 1 })
/** A record whose every key may be absent. */
export const opt = <T extends Record<string, fc.Arbitrary<unknown>>>(model: T) =>
  fc.record(model, { requiredKeys: [] })
/** The value or `null`. */
export const nullOr = <A>(a: fc.Arbitrary<A>) => fc.option(a, { nil: null })
