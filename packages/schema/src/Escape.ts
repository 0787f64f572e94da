/**
 * Escaping of input bytes where they are shown: nothing from a payload reaches a terminal raw.
 *
 * @since 0.4.0
 */

// C0 controls, DEL, C1 controls (U+0080-U+009F: U+009B is a one-byte CSI on some terminals),
// line / paragraph separators, and the bidirectional embedding, override and isolate marks
// (U+202A-U+202E, U+2066-U+2069: "Trojan Source", CVE-2021-42574) that reorder what is shown.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g
const JSON_CONTROL = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

const hex = (c: string, width: number): string => c.charCodeAt(0).toString(16).padStart(width, "0")

/**
 * `s` with every control character written as an escape: `\n`, `\r`, `\t` by name, other C0
 * controls, DEL and C1 controls as `\xNN`, line separators and bidirectional marks as `\uNNNN`.
 * Everything else (printable ASCII, other Unicode, the backslash itself) is kept, so a message
 * that holds no control character is returned unchanged, and escaping twice is escaping once.
 *
 * **When to use**: before writing any text that quotes input (a payload's bytes in an error
 * message, a label value in a notice, a log line) to a terminal, a log or an HTTP body meant for
 * people. `formatDecodeError` and `formatLedgerNotice` apply it, and `decodeError` applies it to
 * every message it builds. A crafted page with `ESC [ 2 J` (clear screen) or an OSC 52 clipboard
 * write in a label value is then shown as `\x1b[2J`, never interpreted by the terminal.
 *
 * Shapes: string in, string out; pure, total (no error case).
 *
 * @example
 * ```ts
 * import { escapeControl } from "@loadledger/schema"
 * escapeControl("bad value '\u001b[2J' on\nline 3") // => "bad value '\\x1b[2J' on\\nline 3"
 * escapeControl("plain text \\ stays") // => "plain text \\ stays"
 * escapeControl("\u009b31m\u202e") // => "\\x9b31m\\u202e"
 * ```
 *
 * @category errors
 * @since 0.4.0
 */
export const escapeControl = (s: string): string =>
  s.replace(CONTROL, (c) =>
    c === "\n"
      ? "\\n"
      : c === "\r"
        ? "\\r"
        : c === "\t"
          ? "\\t"
          : c.charCodeAt(0) <= 0xff
            ? `\\x${hex(c, 2)}`
            : `\\u${hex(c, 4)}`
  )

/**
 * `JSON.stringify(value, undefined, indent)` with no control character left raw in the text:
 * `JSON.stringify` already escapes U+0000-U+001F inside strings, but keeps DEL, the C1 controls
 * (U+0080-U+009F), the line separators and bidirectional marks raw; this writes those as `\uNNNN`
 * JSON escapes too. The result parses back (`JSON.parse`) to the same value.
 *
 * **When to use**: a JSON body or JSON output that carries input strings (a worker URL, a label
 * value) and may be shown on a terminal: the CLI's `decode` output, the live router's
 * `/router/ranks`.
 *
 * Shapes: any JSON-serialisable value, the indent as for `JSON.stringify`; returns `undefined`
 * where `JSON.stringify` does (e.g. for `undefined`).
 *
 * @example
 * ```ts
 * import { stringifyJsonSafe } from "@loadledger/schema"
 * stringifyJsonSafe({ worker: "a\u009b2Jb\u001b" }) // => '{"worker":"a\\u009b2Jb\\u001b"}'
 * JSON.parse(stringifyJsonSafe({ w: "\u009b" })!).w === "\u009b" // => true
 * ```
 *
 * @category errors
 * @since 0.4.0
 */
export const stringifyJsonSafe = (value: unknown, indent?: number): string | undefined => {
  const s = JSON.stringify(value, undefined, indent) as string | undefined
  return s === undefined ? undefined : s.replace(JSON_CONTROL, (c) => `\\u${hex(c, 4)}`)
}
