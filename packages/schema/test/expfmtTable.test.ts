// The reference parser's own test table (prometheus/common expfmt/text_parse_test.go at
// d2417e2cbb82c4c81e4d28d55f354058169a9f08, Apache-2.0; see test/expfmt/README.md): every valid
// input is accepted, every invalid one rejected, under the UTF-8 (Prometheus 3) scheme.
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { parseExposition } from "../src/internal/prometheus.js"

interface Input {
  readonly text?: string
  readonly hex?: string
}
interface Case {
  readonly index: number
  readonly comment: string
  readonly in: Input
  readonly errUTF8?: string
}
const table = JSON.parse(
  readFileSync(new URL("./expfmt/text_parse_cases.json", import.meta.url), "utf8")
) as {
  valid: ReadonlyArray<Case>
  invalid: ReadonlyArray<Case>
}
// inputs that are not valid UTF-8 are given as their bytes (a string could not hold them)
const input = (i: Input): string | Uint8Array => i.text ?? new Uint8Array(Buffer.from(i.hex ?? "", "hex"))

describe("prometheus/common text_parse_test.go: valid inputs are accepted", () => {
  for (const c of table.valid) {
    it(`valid ${c.index}: ${c.comment}`, () => {
      expect(parseExposition(input(c.in))._tag).toBe("Success")
    })
  }
})

describe("prometheus/common text_parse_test.go: invalid inputs are rejected (UTF-8 scheme)", () => {
  for (const c of table.invalid) {
    const accept = c.errUTF8 === ""
    it(`invalid ${c.index}: ${c.comment} (${accept ? "accepted under UTF-8" : c.errUTF8})`, () => {
      expect(parseExposition(input(c.in))._tag).toBe(accept ? "Success" : "Failure")
    })
  }
})
