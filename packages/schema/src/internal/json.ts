/**
 * JSON.parse with a located error: on failure, the 1-based line and column of the first offending
 * character (or of the end of input for a truncated document). V8's messages on Node 20 do not
 * always carry a position, so a small scanner finds it.
 */
import { Result } from "effect"
import { type DecodeError, decodeError } from "../DecodeError.js"

export const parseJson = (text: string): Result.Result<unknown, DecodeError> => {
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

/** Offset of the first character where `text` stops being valid JSON. */
export const errorOffset = (text: string): number => {
  let i = 0
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i]!)) i++
  }
  class Stop extends Error {}
  const stop = (): never => {
    throw new Stop()
  }
  const lit = (w: string) => {
    for (const c of w)
      if (text[i++] !== c) {
        i--
        stop()
      }
  }
  const str = () => {
    i++
    for (;;) {
      const c = text[i]
      if (c === undefined) stop()
      if (c === '"') return void i++
      if (c! < " ") stop()
      if (c === "\\") {
        const n = text[i + 1]
        if (n === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
            i++
            stop()
          }
          i += 6
        } else if (n !== undefined && '"\\/bfnrt'.includes(n)) i += 2
        else {
          i++
          stop()
        }
      } else i++
    }
  }
  const num = () => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i))
    if (m === null) stop()
    i += m![0].length
  }
  const value = (): void => {
    ws()
    const c = text[i]
    if (c === "{") {
      i++
      ws()
      if (text[i] === "}") return void i++
      for (;;) {
        ws()
        if (text[i] !== '"') stop()
        str()
        ws()
        if (text[i] !== ":") stop()
        i++
        value()
        ws()
        if (text[i] === ",") i++
        else if (text[i] === "}") return void i++
        else stop()
      }
    } else if (c === "[") {
      i++
      ws()
      if (text[i] === "]") return void i++
      for (;;) {
        value()
        ws()
        if (text[i] === ",") i++
        else if (text[i] === "]") return void i++
        else stop()
      }
    } else if (c === '"') str()
    else if (c === "t") lit("true")
    else if (c === "f") lit("false")
    else if (c === "n") lit("null")
    else num()
  }
  try {
    value()
    ws()
    return i
  } catch (e) {
    if (e instanceof Stop) return i
    throw e
  }
}
