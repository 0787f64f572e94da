/**
 * The first difference of two JSON values, which every conformance format reports as a failed
 * case's `firstDiff` (`op 3 (route).rank: expected 2, got 1`).
 *
 * @since 0.1.0
 */

const isObj = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === "object"

/**
 * First difference between an expected JSON value and an actual one, as `path: expected X, got Y`;
 * `undefined` when equal. Arrays compare by length then item by item; objects key by key over both
 * key sets (an actual key the expectation lacks is a difference too); numbers with `===` (so `2.0`
 * and `2` are equal, as in JSON), or within `tol` relative to `max(1, |expected|)` when `tol > 0`;
 * anything else with `===`.
 *
 * **When to use**: to compare a replayed case's output with its golden expectation; use
 * {@link diffExpect} when the expectation lists only some of the keys.
 *
 * @example
 * ```ts
 * import { firstDiff } from "./diff.js"
 * firstDiff({ rank: 2, loads: [1, 2] }, { rank: 2, loads: [1, 3] }, "op 0") // => "op 0.loads[1]: expected 2, got 3"
 * firstDiff({ rank: 2 }, { rank: 2, extra: 1 }, "op 0") // => "op 0.extra: expected undefined, got 1"
 * firstDiff([0.3], [0.1 + 0.2], "p") // => "p[0]: expected 0.3, got 0.30000000000000004"
 * firstDiff([0.3], [0.1 + 0.2], "p", 1e-12) // => undefined
 * ```
 *
 * @category conformance
 * @since 0.1.0
 */
export const firstDiff = (expected: unknown, actual: unknown, path: string, tol = 0): string | undefined => {
  const show = () => `${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) return show()
    for (let i = 0; i < expected.length; i++) {
      const d = firstDiff(expected[i], actual[i], `${path}[${i}]`, tol)
      if (d !== undefined) return d
    }
    return undefined
  }
  if (isObj(expected)) {
    if (!isObj(actual) || Array.isArray(actual)) return show()
    const keys = new Set([...Object.keys(expected), ...Object.keys(actual)])
    for (const k of keys) {
      const d = firstDiff(expected[k], actual[k], `${path}.${k}`, tol)
      if (d !== undefined) return d
    }
    return undefined
  }
  if (typeof expected === "number" && typeof actual === "number") {
    if (expected === actual) return undefined
    if (tol > 0 && Math.abs(expected - actual) <= tol * Math.max(1, Math.abs(expected))) return undefined
    return show()
  }
  return expected === actual ? undefined : show()
}

/**
 * {@link firstDiff} over only the keys the expectation lists (a port matches `worker` and what it
 * computes; keys it reports beyond those are not compared).
 *
 * **When to use**: for vector formats whose expectations are partial (SMG, production-stack).
 *
 * @example
 * ```ts
 * import { diffExpect } from "./diff.js"
 * diffExpect({ worker: "w1" }, { worker: "w1", counter_after: 3 }, "step 0 (route)") // => undefined
 * diffExpect({ worker: "w1" }, { worker: "w0" }, "step 0 (route)") // => 'step 0 (route).worker: expected "w1", got "w0"'
 * ```
 *
 * @category conformance
 * @since 0.1.0
 */
export const diffExpect = (
  expect: Readonly<Record<string, unknown>>,
  actual: Readonly<Record<string, unknown>>,
  where: string
): string | undefined => {
  for (const k of Object.keys(expect)) {
    const d = firstDiff(expect[k], actual[k], `${where}.${k}`)
    if (d !== undefined) return d
  }
  return undefined
}
