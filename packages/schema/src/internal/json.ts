/**
 * JSON.parse with a located error: on failure, the 1-based line and column of the first offending
 * character (or of the end of input for a truncated document). V8's messages on Node 20 do not
 * always carry a position, so a small scanner finds it. Nesting deeper than `MAX_JSON_DEPTH` is a
 * `LimitExceeded` error before parsing; the scanner is iterative (no recursion to exhaust).
 */
import * as Result from "effect/Result"
import { type DecodeError, decodeError } from "../DecodeError.js"
import { checkJsonTextDepth } from "./bounded.js"

export const parseJson = (text: string): Result.Result<unknown, DecodeError> => {
  const bounded = checkJsonTextDepth(text)
  if (Result.isFailure(bounded)) return bounded
  try {
    return Result.succeed(JSON.parse(text))
  } catch (e) {
    const at = errorOffset(text)
    const before = text.slice(0, at)
    const line = before.split("\n").length
    const column = at - before.lastIndexOf("\n")
    const what =
      at >= text.length ? "unexpected end of JSON input (truncated?)" : `invalid JSON at column ${column}`
    return Result.fail(
      decodeError("SyntaxError", `${what}: ${e instanceof Error ? e.message : String(e)}`, { line })
    )
  }
}

const WS = " \t\n\r"
const NUM = /-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y

/**
 * Offset of the first character where `text` stops being valid JSON (iterative: an explicit stack
 * of open containers, so hostile nesting cannot exhaust the call stack).
 */
export const errorOffset = (text: string): number => {
  let i = 0
  const ws = () => {
    while (i < text.length && WS.includes(text[i]!)) i++
  }
  /** Scan a string starting at its quote; false at the offending char. */
  const str = (): boolean => {
    i++
    for (;;) {
      const c = text[i]
      if (c === undefined) return false
      if (c === '"') {
        i++
        return true
      }
      if (c < " ") return false
      if (c === "\\") {
        const n = text[i + 1]
        if (n === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
            i++
            return false
          }
          i += 6
        } else if (n !== undefined && '"\\/bfnrt'.includes(n)) i += 2
        else {
          i++
          return false
        }
      } else i++
    }
  }
  const lit = (w: string): boolean => {
    for (const c of w) {
      if (text[i] !== c) return false
      i++
    }
    return true
  }
  /** Scan a scalar at i; false at the offending char. */
  const scalar = (): boolean => {
    const c = text[i]
    if (c === '"') return str()
    if (c === "t") return lit("true")
    if (c === "f") return lit("false")
    if (c === "n") return lit("null")
    NUM.lastIndex = i
    const m = NUM.exec(text)
    if (m === null) return false
    i += m[0].length
    return true
  }
  const stack: Array<"[" | "{"> = []
  // state: expecting a value; after a value, expect , or a closer
  for (;;) {
    ws()
    const c = text[i]
    if (c === "[" || c === "{") {
      i++
      ws()
      if (text[i] === (c === "[" ? "]" : "}")) i++
      else {
        stack.push(c)
        if (c === "{") {
          if (text[i] !== '"' || !str()) return i
          ws()
          if (text[i] !== ":") return i
          i++
        }
        continue
      }
    } else if (!scalar()) return i
    // a value is complete: close containers or move to the next element
    for (;;) {
      ws()
      const top = stack[stack.length - 1]
      if (top === undefined) return i
      const n = text[i]
      if (n === ",") {
        i++
        if (top === "{") {
          ws()
          if (text[i] !== '"' || !str()) return i
          ws()
          if (text[i] !== ":") return i
          i++
        }
        break
      }
      if (n === (top === "[" ? "]" : "}")) {
        i++
        stack.pop()
        continue
      }
      return i
    }
  }
}
