/**
 * The strict exposition parser (internal/prometheus.ts), through the public decoders, and its fuzz.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { decodeSglangMetrics, decodeVllmMetrics, formatDecodeError } from "../src/index.js"
import { parseExposition } from "../src/internal/prometheus.js"
import { err, fixture, ok } from "./fixtures.js"

describe("strict Prometheus text parser", () => {
  it("parses every .prom payload: sample counts per file", () => {
    const count = (f: string) => ok(parseExposition(fixture(`payloads/${f}`))).samples.length
    expect(count("sglang_metrics_dp2_qwen3_0.6b__sglang_pr7597.prom")).toBe(2)
    expect(count("sglang_metrics_dp8_deepseek_r1__aibrix_issue1614_part1.prom")).toBe(9)
    expect(count("sglang_metrics_single_llama32_3b__sglang_pr1853.prom")).toBe(5)
    expect(count("vllm_metrics_qwen25coder32b__production_stack_issue318.prom")).toBe(7)
  })
  it("reads labels with escapes, scientific values, special floats and timestamps", () => {
    const e = ok(
      parseExposition(
        'a{x="q\\"uote",y="back\\\\slash",z="nl\\n",} 1.048576e+06 1700000000000\nb NaN\nc -Inf\n'
      )
    )
    expect(e.samples[0]).toEqual({
      name: "a",
      labels: { x: 'q"uote', y: "back\\slash", z: "nl\n" },
      value: 1048576,
      line: 1,
      timestamp: 1700000000
    })
    expect(e.samples[1]!.value).toBeNaN()
    expect(e.samples[2]!.value).toBe(Number.NEGATIVE_INFINITY)
  })
  it("garbage is a SyntaxError with its line number", () => {
    const cases: ReadonlyArray<readonly [string, number]> = [
      ["ok 1\nhello world this is not prom\n", 2],
      ['ok 1\n\nfoo{a="b" 1\n', 3],
      ["foo 1 2 3 4\n", 1],
      ["{{{\n", 1],
      ["foo\n", 1],
      ["# TYPE foo thing\n", 1],
      ['foo{a="b",a="c"} 1\n', 1]
    ]
    for (const [text, line] of cases) {
      const e = err(parseExposition(text))
      expect(e._tag).toBe("SyntaxError")
      expect(e.line).toBe(line)
    }
    expect(formatDecodeError(err(parseExposition("ok 1\nhello world\n")))).toBe(
      "line 2: expected a float as the value of hello, got 'world'"
    )
  })
  it("the same series twice is AmbiguousSeries naming both lines (label order does not matter)", () => {
    const text = 'm{a="1",b="2"} 1\nother 3\nm{b="2",a="1"} 2\n'
    // the reference parser takes repeats; the decoders ask for the error
    expect(ok(parseExposition(text)).samples).toHaveLength(3)
    const e = err(parseExposition(text, { ambiguous: true }))
    expect(e._tag).toBe("AmbiguousSeries")
    expect(e.line).toBe(3)
    expect(e.message).toContain("line 1")
  })
  it("declared metric with no samples is reported, never a 0", () => {
    const m = ok(
      decodeVllmMetrics("# HELP vllm:num_requests_running r\n# TYPE vllm:num_requests_running gauge\n")
    )
    expect(m.records).toEqual([])
    expect(m.declaredWithoutSamples).toEqual(["vllm:num_requests_running"])
  })
  it("/v1/loads?format=prometheus gauges sglang_<key>{dp_rank} map to snapshot fields per rank", () => {
    const m = ok(
      decodeSglangMetrics(
        [
          'sglang_num_running_reqs{dp_rank="0"} 116',
          'sglang_num_waiting_reqs{dp_rank="0"} 40',
          'sglang_num_total_tokens{dp_rank="0"} 386102',
          'sglang_num_running_reqs{dp_rank="1"} 195',
          'sglang_token_usage{dp_rank="1"} 0.5164',
          ""
        ].join("\n")
      )
    )
    expect(m.records).toEqual([
      { dpRank: 0, numRunningReqs: 116, numWaitingReqs: 40, numTotalTokens: 386102 },
      { dpRank: 1, numRunningReqs: 195, tokenUsage: 0.5164 }
    ])
    expect(m.cutLine).toBeUndefined()
  })
  it("a last line with no newline after it may be cut off: left out and named in cutLine, never read", () => {
    const m = ok(
      decodeSglangMetrics('sglang_num_running_reqs{dp_rank="0"} 116\nsglang_token_usage{dp_rank="1"} 0.5')
    )
    expect(m.records).toEqual([{ dpRank: 0, numRunningReqs: 116 }])
    expect(m.cutLine).toBe(2)
    const v = ok(
      decodeVllmMetrics('vllm:num_requests_running{engine="0"} 12.0\nvllm:num_requests_running{eng')
    )
    expect(v.records).toEqual([{ engine: 0, numRequestsRunning: 12 }])
    expect(v.cutLine).toBe(2)
  })
  it("a text whose only line is cut is a SyntaxError on it (was: no records), saying why where the text shows it", () => {
    const one = err(decodeVllmMetrics('vllm:num_requests_running{engine="0"} 12.0'))
    expect(one.line).toBe(1)
    expect(one.message).toMatch(/^line 1 does not end with a newline.*it is the only line/)
    // lines ending in CR alone are one line to the exposition format
    const cr = err(
      decodeSglangMetrics('sglang:num_running_reqs{dp_rank="0"} 4\rsglang:num_running_reqs{dp_rank="1"} 5\r')
    )
    expect(cr.message).toContain("carriage return alone (old Mac line endings)")
    const json = err(decodeSglangMetrics('{"loads":[{"dp_rank":0,"num_running_reqs":2}]}'))
    expect(json.message).toContain("the text is JSON, not sglang-metrics text")
    // a blank last line is no cut
    expect(ok(decodeVllmMetrics('vllm:num_requests_running{engine="0"} 1\n  ')).cutLine).toBeUndefined()
  })
  it("no exposition at all is a SyntaxError before any line is read: empty, JSON, lines ending in CR alone", () => {
    // fresh-user trial: each was an empty success (CR-only text whose first line is a # HELP comment
    // swallowed the rest) or a bare 'expected a metric name'
    expect(err(decodeVllmMetrics("")).message).toBe(
      "the text is empty: no vllm-metrics page to read (a failed scrape?)"
    )
    expect(err(decodeSglangMetrics(" \n\n")).line).toBe(1)
    const json = '{\n  "loads": [{"dp_rank": 0, "num_running_reqs": 2}]\n}\n'
    expect(err(decodeVllmMetrics(json)).message).toMatch(/^the text is JSON, not vllm-metrics text/)
    const lf =
      '# HELP vllm:num_requests_running Running.\n# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine="0"} 3.0\n'
    expect(ok(decodeVllmMetrics(lf)).records).toEqual([{ engine: 0, numRequestsRunning: 3 }])
    // every line feed but the last a carriage return, and every one
    for (const cr of [`${lf.slice(0, -1).replaceAll("\n", "\r")}\n`, lf.replaceAll("\n", "\r")]) {
      const e = err(decodeVllmMetrics(cr))
      expect([e._tag, e.line]).toEqual(["SyntaxError", 1])
      expect(e.message).toContain("old Mac line endings")
    }
    // CRLF is fine, and a CR alone on a later line is named on that line
    expect(ok(decodeVllmMetrics(lf.replaceAll("\n", "\r\n"))).records).toEqual([
      { engine: 0, numRequestsRunning: 3 }
    ])
    expect(err(decodeVllmMetrics(lf.replace("gauge\n", "gauge\r"))).line).toBe(2)
  })
  it("a non-numeric rank label or a NaN load gauge is an error with its line", () => {
    expect(err(decodeVllmMetrics('vllm:num_requests_running{engine="x"} 1\n')).line).toBe(1)
    expect(err(decodeSglangMetrics('ok 1\nsglang:token_usage{dp_rank="0"} NaN\n')).line).toBe(2)
  })
  it("fuzz: any text either parses or fails with a line inside the text; never throws", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (t) => {
        const r = parseExposition(t)
        if (r._tag === "Failure") {
          expect(r.failure.line).toBeGreaterThanOrEqual(1)
          expect(r.failure.line).toBeLessThanOrEqual(t.split(/\r?\n/).length)
        }
      }),
      { numRuns: 2000, seed: 3 }
    )
  })
  it("fuzz: printed samples round-trip (name, labels, value)", () => {
    const name = fc.stringMatching(/^[a-zA-Z_:][a-zA-Z0-9_:]{0,10}$/)
    const labels = fc.dictionary(
      fc.stringMatching(/^[a-zA-Z_][a-zA-Z0-9_]{0,6}$/),
      fc.string({ maxLength: 8 }),
      {
        maxKeys: 3
      }
    )
    fc.assert(
      fc.property(name, labels, fc.double({ noNaN: true }), (n, l, v) => {
        const esc = (s: string) => s.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")
        const body = Object.entries(l)
          .map(([k, x]) => `${k}="${esc(x)}"`)
          .join(",")
        const text = `# HELP ${n} h\n${n}{${body}} ${String(v).replace("Infinity", "Inf")}\n`
        const s = ok(parseExposition(text)).samples
        expect(s).toHaveLength(1)
        expect(s[0]!.name).toBe(n)
        expect(s[0]!.labels).toEqual(l)
        expect(s[0]!.value).toBe(v === 0 ? 0 : v)
      }),
      { numRuns: 1000, seed: 5 }
    )
  })
})
