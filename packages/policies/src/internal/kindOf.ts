/**
 * What a value that is not of its type is, for an error message: `array`, `null` or its `typeof`.
 * Shared by the input checks (`checkRequestFields`, `checkPolicyOptions`, `checkStatus`).
 *
 * @internal
 */

/** `array`, `null` or `typeof x`. @internal */
export const kindOf = (x: unknown): string => (Array.isArray(x) ? "array" : x === null ? "null" : typeof x)

/**
 * `x` for an error message, never throwing: a number, bigint or boolean as written, a string
 * quoted, anything else by its kind (`${x}` throws on a symbol or a null-prototype object).
 *
 * @internal
 */
export const shownValue = (x: unknown): string =>
  typeof x === "number" || typeof x === "bigint" || typeof x === "boolean"
    ? String(x)
    : typeof x === "string"
      ? JSON.stringify(x)
      : x === undefined
        ? "undefined"
        : kindOf(x)
