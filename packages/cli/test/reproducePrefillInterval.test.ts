// `loadledger reproduce vllm-prefill-interval` (vllm PR #44558's workload A): the trace, and the
// built CLI in a subprocess (text and --json), asserting the modelled figures this build gives
// (within 2%) and their directions against the published ones. About 1 s of simulation.
import { describe, expect, it } from "vitest"
import { scenarios } from "../src/reproduce/registry.js"
import { prefillIntervalTrace } from "../src/reproduce/vllmPrefillInterval.js"
import { built, run } from "./cliSubprocess.js"

/** What this build models (2026-12-07), by metric: published beside it in the scenario. */
const MODELLED: Readonly<Record<string, number>> = {
  "mean TTFT, ms, interval 1": 687.2,
  "mean TTFT, ms, interval 2": 458.7,
  "mean TTFT ratio, interval 2 / 1": 0.667,
  "P99 TTFT, ms, interval 1": 822.6,
  "P99 TTFT, ms, interval 2": 611.7,
  "P99 TTFT ratio, interval 2 / 1": 0.744,
  "P50 ITL ratio, interval 1 / 2": 8.594,
  "mean ITL ratio, interval 1 / 2": 1.655,
  "throughput, req/s, interval 1": 23.36,
  "throughput, req/s, interval 2": 23.36
}

describe("reproduce vllm-prefill-interval", () => {
  it("is registered with its source, and the trace is deterministic Poisson at 24 req/s", () => {
    const s = scenarios().find((x) => x.name === "vllm-prefill-interval")!
    expect(s.source.url).toBe("https://github.com/vllm-project/vllm/pull/44558")
    expect(s.assumptions.length).toBeGreaterThanOrEqual(5)
    const t = prefillIntervalTrace(4000)
    expect(prefillIntervalTrace(4000)).toEqual(t)
    expect(t[0]!.arrivalSeconds).toBe(0)
    expect(t.every((r) => r.inputLength === 1000 && r.outputLength === 200)).toBe(true)
    const gaps = t.slice(1).map((r, i) => r.arrivalSeconds - t[i]!.arrivalSeconds)
    const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length
    expect(mean).toBeGreaterThan(0.95 / 24)
    expect(mean).toBeLessThan(1.05 / 24)
    // exponential gaps: the standard deviation is about the mean
    const sd = Math.sqrt(gaps.reduce((a, g) => a + (g - mean) ** 2, 0) / gaps.length)
    expect(sd / mean).toBeGreaterThan(0.9)
    expect(sd / mean).toBeLessThan(1.1)
  })
})

describe.skipIf(!built)("reproduce vllm-prefill-interval (built loadledger in a subprocess)", () => {
  it("--json: rows {metric, published, modelled}; the modelled figures as this build gives them", () => {
    const r = run(["reproduce", "vllm-prefill-interval", "--json"])
    expect(r.status).toBe(0)
    const rows: Array<{ metric: string; published: number; modelled: number; ratioError: number }> =
      JSON.parse(r.stdout).rows
    expect(rows.map((x) => x.metric)).toEqual(Object.keys(MODELLED))
    const by = Object.fromEntries(rows.map((x) => [x.metric, x]))
    for (const [metric, modelled] of Object.entries(MODELLED)) {
      expect(by[metric]!.modelled, metric).toBeGreaterThan(0.98 * modelled)
      expect(by[metric]!.modelled, metric).toBeLessThan(1.02 * modelled)
      expect(by[metric]!.ratioError, metric).toBeCloseTo(by[metric]!.modelled / by[metric]!.published - 1, 12)
    }
    // as published: interval 2 lowers mean and P99 TTFT, P50 ITL falls about 8.6x, throughput flat
    expect(by["mean TTFT ratio, interval 2 / 1"]!.modelled).toBeLessThan(0.75)
    expect(by["P99 TTFT ratio, interval 2 / 1"]!.modelled).toBeLessThan(0.8)
    expect(Math.abs(by["P50 ITL ratio, interval 1 / 2"]!.ratioError)).toBeLessThan(0.01)
    expect(Math.abs(by["mean ITL ratio, interval 1 / 2"]!.ratioError)).toBeLessThan(0.05)
    const flat = by["throughput, req/s, interval 2"]!.modelled / by["throughput, req/s, interval 1"]!.modelled
    expect(Math.abs(flat - 1)).toBeLessThan(0.02)
    // the published-vs-modelled errors the README states: mean TTFT ratio +8%, P99 TTFT ratio +25%
    expect(by["mean TTFT ratio, interval 2 / 1"]!.ratioError).toBeCloseTo(0.081, 2)
    expect(by["P99 TTFT ratio, interval 2 / 1"]!.ratioError).toBeCloseTo(0.248, 2)
  }, 30_000)

  it("text: source, assumptions, one line per row with its ratio error, the worst row last", () => {
    const r = run(["reproduce", "vllm-prefill-interval"])
    expect(r.status).toBe(0)
    const lines = r.stdout.trimEnd().split("\n")
    expect(lines[0]).toMatch(/^vllm-prefill-interval: vLLM --prefill-schedule-interval 1 vs 2/)
    expect(lines[1]).toMatch(/PR #44558.*\(https:\/\/github\.com\/vllm-project\/vllm\/pull\/44558\)$/)
    expect(lines.find((l) => l.startsWith("P50 ITL ratio"))).toMatch(/8\.564\s+8\.59\d\s+1\.00\d\s+\+0\.\d%$/)
    expect(lines.at(-1)).toMatch(/^largest \|ratio error\|: 6\d\.\d% \(P99 TTFT, ms, interval 1\)$/)
  }, 30_000)

  it("reproduce --list names it with its source", () => {
    const r = run(["reproduce", "--list"])
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(
      /vllm-prefill-interval\s+vLLM --prefill-schedule-interval.*\n\s+source: njhill, .*PR #44558.*\(https:\/\/github\.com\/vllm-project\/vllm\/pull\/44558\)/
    )
  })
})
