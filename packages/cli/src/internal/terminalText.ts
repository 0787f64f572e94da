/**
 * Text for a terminal, line by line: every control character of each line escaped as
 * @loadledger/schema's `escapeControl` does (`\x1b`, `\x9b`, `\u202e`), the line breaks kept. For
 * commander's own error messages (which quote the flag values a user or a config gave), written
 * synchronously before any package is loaded, so it cannot import the schema package lazily; the
 * test `terminalText.test.ts` checks it against `escapeControl`.
 *
 * @internal
 */

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

const hex = (c: string, width: number): string => c.charCodeAt(0).toString(16).padStart(width, "0")

/** `s` with every control character but `\n` escaped (`\r` and `\t` by name). @internal */
export const escapeLines = (s: string): string =>
  s.replace(CONTROL, (c) =>
    c === "\r" ? "\\r" : c === "\t" ? "\\t" : c.charCodeAt(0) <= 0xff ? `\\x${hex(c, 2)}` : `\\u${hex(c, 4)}`
  )
