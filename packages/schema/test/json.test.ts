/**
 * The located JSON syntax errors (internal/json.ts) that decodeLedger reports.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { errorOffset, parseJson } from "../src/internal/json.js"
import { err, ok } from "./fixtures.js"

describe("parseJson with located errors", () => {
  it("names the line of the first bad character, or the end of a truncated document", () => {
    expect(err(parseJson('{\n  "a": 1,\n  "b": ]\n}')).line).toBe(3)
    expect(err(parseJson('{\n  "loads": [\n    {"dp_rank": 0,')).message).toMatch(
      /^unexpected end of JSON input/
    )
    expect(err(parseJson('{\n  "loads": [\n    {"dp_rank": 0,')).line).toBe(3)
    expect(err(parseJson("(Verbatim excerpt")).line).toBe(1)
    expect(ok(parseJson('{"a":[1,2.5e3,"x\\u00e9",true,null]}'))).toEqual({ a: [1, 2500, "xé", true, null] })
  })
  it("fuzz: agrees with JSON.parse on valid documents (offset = end)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.boolean(), (v, pretty) => {
        const t = JSON.stringify(v, null, pretty ? 2 : undefined)
        expect(errorOffset(t)).toBe(t.length)
      }),
      { numRuns: 500, seed: 11 }
    )
  })
  it("fuzz: on a cut or corrupted document the error offset is within it and JSON.parse fails too", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.nat(), fc.constantFrom("", "}", "]", ",", "@"), (v, cut, junk) => {
        const full = JSON.stringify(v, null, 2)
        const t = full.slice(0, cut % (full.length + 1)) + junk
        let valid = true
        try {
          JSON.parse(t)
        } catch {
          valid = false
        }
        const r = parseJson(t)
        expect(r._tag === "Success").toBe(valid)
        if (!valid) {
          expect(errorOffset(t)).toBeLessThanOrEqual(t.length)
          expect(err(r).line).toBeLessThanOrEqual(t.split("\n").length)
        }
      }),
      { numRuns: 500, seed: 13 }
    )
  })
  it("hostile nesting: a typed LimitExceeded error, never a stack overflow", () => {
    const e = err(parseJson("[".repeat(11200)))
    expect(e._tag).toBe("LimitExceeded")
    expect(err(parseJson(`${"[".repeat(513)}${"]".repeat(513)}`))._tag).toBe("LimitExceeded")
    expect(ok(parseJson(`${"[".repeat(512)}${"]".repeat(512)}`))).toBeDefined()
    // the scanner itself is iterative: 200k open brackets end at the end of input
    expect(errorOffset("[".repeat(200_000))).toBe(200_000)
    expect(errorOffset(`${'{"a":'.repeat(50_000)}1${"}".repeat(50_000)}`)).toBe(50_000 * 6 + 1)
  })
})
