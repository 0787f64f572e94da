// What engines and gateways emit around the 0.0.4 grammar (issue 32 item 2): OpenMetrics pages
// (`# EOF`, exemplars, float timestamps, `_created`, info / unknown / gaugehistogram), Prometheus 3
// quoted names, the 0.0.4 blanks, repeated HELP/TYPE, `__name__`, underflow.
import { describe, expect, it } from "vitest"
import { parseExposition } from "../src/internal/prometheus.js"
import { decodeLedgerReport } from "../src/Ledger.js"

const ok = <A>(r: { _tag: string; success?: A; failure?: unknown }): A => {
  if (r._tag !== "Success") throw new Error(`expected success, got ${JSON.stringify(r.failure)}`)
  return r.success as A
}
const err = (r: { _tag: string; failure?: unknown }) => {
  if (r._tag !== "Failure") throw new Error("expected a failure")
  return r.failure as { _tag: string; line?: number; message: string }
}

describe("OpenMetrics pages", () => {
  const page = [
    "# TYPE sglang:num_running_reqs gauge",
    'sglang:num_running_reqs{dp_rank="0"} 3 1700000000.250',
    "# TYPE sglang:prompt_tokens counter",
    'sglang:prompt_tokens_total{dp_rank="0"} 10 # {trace_id="abc"} 1.0 1700000000.1',
    'sglang:prompt_tokens_created{dp_rank="0"} 1699999999.5',
    "# TYPE sglang:build info",
    'sglang:build_info{version="0.5"} 1',
    "# TYPE sglang:q gaugehistogram",
    'sglang:q_bucket{le="+Inf"} 2',
    "sglang:q_gcount 2",
    "sglang:q_gsum 5",
    "# TYPE sglang:other unknown",
    "sglang:other 1",
    "# EOF",
    ""
  ].join("\n")
  it("reads float timestamps (seconds) and exemplars, and counts _created / info / gaugehistogram series", () => {
    const e = ok(parseExposition(page))
    expect(e.openMetrics).toBe(true)
    expect(e.samples[0]).toEqual({
      name: "sglang:num_running_reqs",
      labels: { dp_rank: "0" },
      value: 3,
      line: 2,
      timestamp: 1700000000.25
    })
    expect(e.samples.map((s) => s.name)).toContain("sglang:prompt_tokens_created")
    const r = ok(decodeLedgerReport(page))
    expect(r.rows).toEqual([{ dpRank: 0, numRunningReqs: 3 }])
    const unknown = r.notices
      .filter((n) => n._tag === "UnknownSeries")
      .map((n) => n._tag === "UnknownSeries" && n.series)
    expect(unknown).toEqual(["sglang:prompt_tokens", "sglang:build", "sglang:q", "sglang:other"])
  })
  it("# EOF ends the page: the samples after it are not read, and a notice names them", () => {
    const text = `${page}sglang:num_running_reqs{dp_rank="0"} 99\nsglang:num_running_reqs{dp_rank="1"} 5\n`
    const r = ok(decodeLedgerReport(text))
    expect(r.rows).toEqual([{ dpRank: 0, numRunningReqs: 3 }])
    expect(r.notices.find((n) => n._tag === "AfterEof")).toMatchObject({ line: 15, lines: 2 })
  })
  it("without # EOF the 0.0.4 rules hold: integer millisecond timestamps, no exemplars", () => {
    expect(ok(parseExposition("a 1 1700000000250\n")).samples[0]!.timestamp).toBe(1700000000.25)
    expect(err(parseExposition("a 1 1700000000.25\n")).message).toContain("integer (milliseconds)")
    expect(err(parseExposition('a 1 # {t="x"} 1\n'))._tag).toBe("SyntaxError")
  })
})

describe("0.0.4 whitespace and Prometheus 3 names", () => {
  it("a blank between the name and {, tabs in the label set, no blank after } before the value", () => {
    const e = ok(parseExposition('sglang:num_running_reqs {\tdp_rank = "2" ,\t}7\n'))
    expect(e.samples[0]).toMatchObject({ labels: { dp_rank: "2" }, value: 7 })
  })
  it("quoted UTF-8 metric and label names decode to rows like legacy ones", () => {
    const r = ok(decodeLedgerReport('{"sglang:num_running_reqs", "dp_rank"="1", "pod.name"="a"} 4\n'))
    expect(r.rows).toEqual([{ dpRank: 1, numRunningReqs: 4 }])
  })
  it("CRLF line ends are line ends", () => {
    expect(ok(parseExposition("# TYPE a gauge\r\na 1\r\nb 2\r\n")).samples.map((s) => s.line)).toEqual([2, 3])
  })
})

describe("what is reported, never taken silently", () => {
  it("a second HELP or TYPE of a family is an error on its line; a TYPE after the family's samples too", () => {
    expect(err(parseExposition("# HELP a x\n# TYPE a gauge\n# HELP a y\n"))).toMatchObject({ line: 3 })
    expect(err(parseExposition("a 1\n# TYPE a gauge\n"))).toMatchObject({ line: 2 })
  })
  it("two pasted scrapes (HELP/TYPE repeated) decode to the last one with a MultipleScrapes notice", () => {
    const scrape = (v: number) =>
      `# HELP sglang:num_running_reqs r\n# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{dp_rank="0"} ${v}\n`
    const r = ok(decodeLedgerReport(scrape(1) + scrape(2)))
    expect(r.rows).toEqual([{ dpRank: 0, numRunningReqs: 2 }])
    expect(r.notices.find((n) => n._tag === "MultipleScrapes")).toMatchObject({ scrapes: 2, line: 4 })
  })
  it("a __name__ label is refused with its line", () => {
    expect(err(parseExposition('a 1\nb{__name__="c"} 1\n'))).toMatchObject({ _tag: "SyntaxError", line: 2 })
  })
  it("1e-400 reads as 0 (as the reference does) with an Underflow notice; 1e400 is no float", () => {
    const r = ok(decodeLedgerReport('sglang:token_usage{dp_rank="0"} 1e-400\n'))
    expect(r.rows).toEqual([{ dpRank: 0, tokenUsage: 0, kvCacheUsage: 0 }])
    expect(r.notices.find((n) => n._tag === "Underflow")).toMatchObject({
      series: "sglang:token_usage",
      line: 1
    })
    expect(err(parseExposition("a 1e400\n")).message).toContain("expected a float")
  })
  it("invalid UTF-8 bytes are an error on their line", () => {
    const bytes = new Uint8Array([...Buffer.from('a 1\nb{l="'), 0xbd, ...Buffer.from('"} 2\n')])
    expect(err(parseExposition(bytes))).toMatchObject({ _tag: "SyntaxError", line: 2 })
  })
  it("only the kept series are materialised; the rest are counted with their rank labels", () => {
    const text = 'x_bucket{engine="3",le="1"} 1\nx_bucket{engine="4",le="1"} 1\nkeep{engine="0"} 2\n'
    const e = ok(parseExposition(text, { keep: (n) => n === "keep", rankLabels: ["engine"] }))
    expect(e.samples).toHaveLength(1)
    const o = e.others.get("x_bucket")!
    expect([o.samples, o.line, [...o.ranks.get("engine")!]]).toEqual([2, 1, ["3", "4"]])
  })
})
