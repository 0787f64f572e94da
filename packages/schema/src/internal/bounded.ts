/**
 * Bounds on the work a payload can cause (issue 11): nesting depth and node counts are checked
 * iteratively, in one pass linear in the input, before anything recursive sees it.
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { type DecodeError, decodeError } from "../DecodeError.js"

/** Deepest nesting of JSON arrays/objects a decoder accepts (SGLang payloads nest at most ~6). */
export const MAX_JSON_DEPTH = 512

/**
 * The deepest nesting of `[`/`{` in a JSON text, in one linear pass that skips strings; stops
 * counting (returns early) once `limit` is exceeded.
 */
export const jsonTextDepth = (text: string, limit = MAX_JSON_DEPTH): number => {
  let depth = 0
  let max = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92)
        i++ // backslash: skip the escaped char
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 91 || c === 123) {
      depth++
      if (depth > max) {
        max = depth
        if (max > limit) return max
      }
    } else if (c === 93 || c === 125) depth--
  }
  return max
}

/** A typed error when a JSON text nests deeper than {@link MAX_JSON_DEPTH}. */
export const checkJsonTextDepth = (text: string): Result.Result<string, DecodeError> =>
  jsonTextDepth(text) > MAX_JSON_DEPTH
    ? Result.fail(
        decodeError("LimitExceeded", `JSON nests deeper than ${MAX_JSON_DEPTH} levels`, { path: "$" })
      )
    : Result.succeed(text)

/**
 * Whether `u` is a JSON value (null, boolean, finite number, string, array, plain object) nesting
 * at most `maxDepth` levels, checked iteratively in O(nodes) (a cycle exceeds the depth and fails).
 */
export const isBoundedJson = (u: unknown, maxDepth = MAX_JSON_DEPTH): boolean => {
  const values: Array<unknown> = [u]
  const depths: Array<number> = [0]
  while (values.length > 0) {
    const v = values.pop()
    const d = depths.pop()!
    if (v === null || typeof v === "boolean" || typeof v === "string") continue
    if (typeof v === "number") {
      if (!Number.isFinite(v)) return false
      continue
    }
    if (typeof v !== "object" || d >= maxDepth) return false
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        values.push(v[i])
        depths.push(d + 1)
      }
    } else {
      const proto = Object.getPrototypeOf(v)
      if (proto !== Object.prototype && proto !== null) return false
      for (const k in v) {
        if (!Object.hasOwn(v, k)) continue
        values.push((v as Record<string, unknown>)[k])
        depths.push(d + 1)
      }
    }
  }
  return true
}

/**
 * An opaque JSON value nesting at most {@link MAX_JSON_DEPTH} levels, checked in linear time (in
 * place of effect's recursive `Schema.Json`, whose work a deeply nested payload can blow up).
 */
export const BoundedJson = Schema.declare((u: unknown): u is Schema.Json => isBoundedJson(u), {
  expected: `a JSON value nesting at most ${MAX_JSON_DEPTH} levels`
})
