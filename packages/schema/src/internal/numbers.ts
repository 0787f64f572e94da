/**
 * The number rules every public decoder applies after its Schema (issue 11): a load is never
 * negative (the -1 sentinel of sglang#32070), never NaN or ±Infinity, and never above 2^53 - 1
 * (an integer there is no longer exact; a float there is not a load). Walks the decoded value
 * iteratively (no recursion a payload can exhaust), in at most `maxNodes` steps.
 */
import * as Result from "effect/Result"
import { type DecodeError, decodeError, formatPath } from "../DecodeError.js"
import { snake } from "./wire.js"

/** What is wrong with a number, if anything. */
export const numberProblem = (v: number): "negative" | "invalid" | undefined =>
  Number.isNaN(v) || !Number.isFinite(v) || Math.abs(v) > Number.MAX_SAFE_INTEGER
    ? "invalid"
    : v < 0
      ? "negative"
      : undefined

export interface BadNumber {
  readonly path: ReadonlyArray<string | number>
  readonly value: number
  readonly problem: "negative" | "invalid"
}

/**
 * The first bad number in a decoded value (objects with camelCase keys reported in snake_case,
 * arrays by index), skipping the (camelCase) keys in `skip`. `undefined` when every number is fine.
 */
export const firstBadNumber = (
  value: unknown,
  skip: ReadonlySet<string> = new Set(),
  maxNodes = 1_000_000
): BadNumber | undefined => {
  const stack: Array<readonly [unknown, ReadonlyArray<string | number>]> = [[value, []]]
  let nodes = 0
  while (stack.length > 0 && nodes++ < maxNodes) {
    const [v, path] = stack.pop()!
    if (typeof v === "number") {
      const problem = numberProblem(v)
      if (problem !== undefined) return { path, value: v, problem }
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], [...path, i]])
    } else if (typeof v === "object" && v !== null) {
      const keys = Object.keys(v)
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i]!
        if (!skip.has(k)) stack.push([(v as Record<string, unknown>)[k], [...path, snake(k)]])
      }
    }
  }
  return undefined
}

/** The message of a bad number, naming the field. */
export const badNumberMessage = (b: BadNumber): string =>
  b.problem === "negative"
    ? `${String(b.value)} is negative (a count, token number, ratio or time is never below 0)`
    : `${String(b.value)} is not a finite number within ±2^53`

/** Fail with `InvalidField` at the first bad number of a decoded value, else succeed with it. */
export const checkNumbers = <A>(
  value: A,
  skip: ReadonlySet<string> = new Set(),
  prefix: ReadonlyArray<string | number> = []
): Result.Result<A, DecodeError> => {
  const bad = firstBadNumber(value, skip)
  return bad === undefined
    ? Result.succeed(value)
    : Result.fail(
        decodeError("InvalidField", badNumberMessage(bad), { path: formatPath([...prefix, ...bad.path]) })
      )
}

/** A decoder followed by {@link checkNumbers}. */
export const strictly =
  <A>(decode: (u: unknown) => Result.Result<A, DecodeError>, skip: ReadonlySet<string> = new Set()) =>
  (u: unknown): Result.Result<A, DecodeError> =>
    Result.flatMap(decode(u), (a) => checkNumbers(a, skip))
