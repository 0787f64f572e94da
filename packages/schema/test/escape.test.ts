import { fc, test } from "@fast-check/vitest"
import { describe, expect, it } from "vitest"
import {
  decodeLedgerReport,
  escapeControl,
  formatDecodeError,
  formatLedgerNotice,
  stringifyJsonSafe
} from "../src/index.js"

// C0, DEL, C1, line separators, bidi marks: none may be left raw in text meant for a terminal
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const RAW = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/

describe("escapeControl", () => {
  it("writes ESC, CSI (C1), newline, bidi override as escapes and keeps the rest", () => {
    expect(escapeControl("a\u001b[2Jb")).toBe("a\\x1b[2Jb")
    expect(escapeControl("\u009b31m")).toBe("\\x9b31m")
    expect(escapeControl("x\ny\r\tz\u007f")).toBe("x\\ny\\r\\tz\\x7f")
    expect(escapeControl("\u202euser\u2066")).toBe("\\u202euser\\u2066")
    expect(escapeControl("ünïcode \\ 漢字")).toBe("ünïcode \\ 漢字")
  })
  test.prop([fc.string({ unit: "binary" })])("never leaves a control character, and is idempotent", (s) => {
    const e = escapeControl(s)
    expect(RAW.test(e)).toBe(false)
    expect(escapeControl(e)).toBe(e)
  })
  test.prop([fc.string({ unit: "binary" })])(
    "stringifyJsonSafe parses back to the same value, nothing raw",
    (s) => {
      const j = stringifyJsonSafe({ s, a: [s] }, 2)!
      expect(RAW.test(j.replace(/\n/g, ""))).toBe(false)
      expect(JSON.parse(j)).toEqual({ s, a: [s] })
    }
  )
})

describe("crafted payloads: no escape sequence survives into an error or a notice", () => {
  const esc = "\u001b]52;c;cHduZWQ=\u0007\u001b[2J\u009b31m\u202e"
  it("an invalid value carrying ESC / OSC 52 / CSI in an exposition", () => {
    const r = decodeLedgerReport(
      `# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{dp_rank="0"} 1${esc}\n`,
      "sglang-metrics"
    )
    expect(r._tag).toBe("Failure")
    if (r._tag !== "Failure") return
    const line = formatDecodeError(r.failure)
    expect(RAW.test(line)).toBe(false)
    expect(RAW.test(r.failure.message)).toBe(false)
    expect(line).toContain("\\x1b]52;c;cHduZWQ=\\x07\\x1b[2J\\x9b31m\\u202e")
  })
  it("an unknown series whose label value holds escapes: the notice is escaped", () => {
    const text = `# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{dp_rank="0"} 1\n# TYPE x${"_y"} gauge\nx_y{v="${esc}"} 2\n`
    const r = decodeLedgerReport(text, "sglang-metrics")
    expect(r._tag).toBe("Success")
    if (r._tag !== "Success") return
    for (const n of r.success.notices) expect(RAW.test(formatLedgerNotice(n))).toBe(false)
  })
  it("a JSON payload with an escape in a key: the error path is escaped", () => {
    const r = decodeLedgerReport(`{"loads":[{"dp_rank":"\\u009b2J\\u001b"}]}`, "v1-loads")
    expect(r._tag).toBe("Failure")
    if (r._tag !== "Failure") return
    expect(RAW.test(formatDecodeError(r.failure))).toBe(false)
  })
  test.prop([fc.string({ unit: "binary", maxLength: 40 })])("any bytes after a sample value", (junk) => {
    const r = decodeLedgerReport(`sglang:num_running_reqs{dp_rank="0"} 1 ${junk}\n`, "sglang-metrics")
    const shown =
      r._tag === "Failure"
        ? formatDecodeError(r.failure)
        : r.success.notices.map(formatLedgerNotice).join("\n")
    expect(RAW.test(shown.replace(/\n/g, ""))).toBe(false)
  })
})
