/**
 * What a value that is not of its type is, for an error message: `array`, `null` or its `typeof`.
 * Shared by the input checks (`checkRequestFields`, `checkPolicyOptions`, `checkStatus`).
 *
 * @internal
 */

/** `array`, `null` or `typeof x`. @internal */
export const kindOf = (x: unknown): string => (Array.isArray(x) ? "array" : x === null ? "null" : typeof x)
