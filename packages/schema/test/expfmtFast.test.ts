// The exposition parser's fast path (internal/expfmtFast.ts) against the general line reader
// (readSample): on any line it accepts, it reads what readSample reads (name, value, underflow,
// timestamp, line end, every label span); on any line readSample rejects, it says false.
import { fc, test } from "@fast-check/vitest"
import { describe, expect, it } from "vitest"
import { fastSample, fastState } from "../src/internal/expfmtFast.js"
import { Fail, labelName, labelValue, line, readSample, scratch } from "../src/internal/expfmtLine.js"
import { parseExposition } from "../src/internal/prometheus.js"

type Read =
  | {
      ok: true
      name: string
      value: number
      underflow: boolean
      raw: string
      timestamp?: number
      end: number
      labels: Array<[string, string]>
    }
  | { ok: false }

const snapshot = (t: string, s: ReturnType<typeof scratch>): Read => ({
  ok: true,
  name: line.name,
  value: line.value,
  underflow: line.underflow,
  raw: line.raw,
  ...(line.timestamp === undefined ? {} : { timestamp: line.timestamp }),
  end: line.end,
  labels: Array.from({ length: s.n }, (_, k) => [labelName(t, s, k), labelValue(t, s, k)] as [string, string])
})

const slow = (t: string, prev: string): Read => {
  const s = scratch()
  line.name = prev
  try {
    readSample(t, 0, false, s, [], (m) => {
      throw new Fail({ _tag: "SyntaxError", message: m } as never)
    })
  } catch (e) {
    if (e instanceof Fail) return { ok: false }
    throw e
  }
  return snapshot(t, s)
}

const fast = (t: string, prev: string): Read | undefined => {
  const s = scratch()
  line.name = prev
  const before = { ...line }
  const st = fastState(t)
  st.name = prev
  if (!fastSample(t, 0, s, [], st)) {
    // a false leaves what the caller keeps as it was
    expect({ ...line }).toEqual(before)
    return undefined
  }
  return snapshot(t, s)
}

const pick = (xs: ReadonlyArray<string>) => fc.constantFrom(...xs)
const piece = fc.oneof(
  { weight: 6, arbitrary: pick(["a", "b", "le", "dp_rank", "worker", "x_1", "__name__", "_"]) },
  { weight: 1, arbitrary: pick(["", " ", "\t", "1a", '"q"', "a.b", "\\"]) }
)
const value = fc.oneof(
  pick([
    "0",
    "1",
    "42",
    "007",
    "1.5",
    "-2",
    "1e-400",
    "1e400",
    "+Inf",
    "NaN",
    "0x1",
    "",
    "1 2",
    "3\r",
    "1.",
    "123456789012345678"
  ]),
  fc.double().map(String)
)
const labelValueText = fc.oneof(
  pick(["0", "http://10.0.0.1:30000", "/generate", "a\\nb", 'q\\"', "\\x", "", "tab\there"]),
  fc.string({ maxLength: 6 })
)
const lineText = fc
  .record({
    name: fc.oneof(
      { weight: 5, arbitrary: pick(["m", "sglang:num_running_reqs", "m_bucket"]) },
      { weight: 1, arbitrary: pick(["", "9m", "m.x", "m m"]) }
    ),
    labels: fc.option(fc.array(fc.tuple(piece, labelValueText), { maxLength: 4 })),
    sep: pick([",", ",", ", ", ",,"]),
    after: pick([" ", " ", " ", "", "  ", "\t"]),
    open: pick(["{", "{", " {"]),
    value,
    tail: pick(["\n", "\n", "\n", " 1700000000000\n", "\r\n", " x\n", ""])
  })
  .map(({ name, labels, sep, after, open, value, tail }) => {
    const set = labels === null ? "" : `${open}${labels.map(([k, v]) => `${k}="${v}"`).join(sep)}}`
    return `${name}${set}${after}${value}${tail}`
  })

describe("the fast path reads what readSample reads", () => {
  test.prop([lineText, pick(["", "m", "m_bucket"])], { numRuns: 3000 })("on generated lines", (t, prev) => {
    const f = fast(t, prev)
    if (f !== undefined) expect(f).toEqual(slow(t, prev))
  })

  it("takes the common forms (and a page of them parses as before)", () => {
    const lines = [
      'sglang:num_running_reqs{worker="http://10.0.0.1:30000",dp_rank="3"} 7\n',
      'm_bucket{dp_rank="0",le="0.005"} 12\n',
      "m 1.5\n",
      'm{a="1e-400"} 1e-400\n'
    ]
    for (const t of lines) {
      const f = fast(t, "")
      expect(f).toBeDefined()
      expect(f).toEqual(slow(t, ""))
    }
    const e = parseExposition(lines.join(""))
    expect(e._tag).toBe("Success")
    if (e._tag === "Success") expect(e.success.samples.map((s) => s.value)).toEqual([7, 12, 1.5, 0])
  })

  it("never takes a quoted UTF-8 name for a legacy one", () => {
    const e = parseExposition('{"m.x"} 1\nm.x 2\n')
    expect(e._tag).toBe("Failure")
    if (e._tag === "Failure") expect(e.failure.line).toBe(2)
    const ok = parseExposition('{"m.x"} 1\nm 2\nm 3\nm_sum 4\n')
    expect(ok._tag === "Success" && ok.success.samples.map((x) => [x.name, x.value])).toEqual([
      ["m.x", 1],
      ["m", 2],
      ["m", 3],
      ["m_sum", 4]
    ])
  })

  it("leaves to readSample what it is not sure of", () => {
    for (const t of [
      'm{a="x",a="y"} 1\n',
      'm{__name__="x"} 1\n',
      'm{a="x\\"y"} 1\n',
      'm{a="x"} 1 1700000000000\n',
      'm {a="x"} 1\n',
      'm{a="x"}1\n',
      'm{a="x",} 1\n',
      'm{a="x"} 1\r\n',
      'm{a="x"} 1'
    ])
      expect(fast(t, "")).toBeUndefined()
  })
})
