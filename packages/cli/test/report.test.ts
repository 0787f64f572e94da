// The report's data shaping and chart options, without a browser.
import { fc, test } from "@fast-check/vitest"
import { IMBALANCE_BUCKETS, type PolicyResult } from "@loadledger/sim"
import { describe, expect, it } from "vitest"
import { gridChart } from "../src/commands/report/grid.js"
import { latencyCharts, niceBound } from "../src/commands/report/latency.js"
import { cdfPoints, downsampleMax, nonEmptyRange } from "../src/commands/report/model.js"
import { imbalanceChart, loadHeatmaps } from "../src/commands/report/ranks.js"
import { renderReport } from "../src/commands/simulateReport.js"

const qs = Array.from({ length: 101 }, (_, i) => i / 100)
const result = (over: Partial<PolicyResult> = {}): PolicyResult => ({
  policy: "p",
  status: { _tag: "Completed" },
  requests: { total: 10, finished: 10, unfinished: 0, rejected: 0, stalled: 0 },
  ttftSeconds: { count: 10, p50: 0.2, p90: 0.9, p99: 3 },
  itlSeconds: { count: 100, p50: 0.02, p90: 0.03, p99: 0.5 },
  e2eSeconds: { count: 10, p50: 2, p90: 5, p99: 9 },
  outputTokensPerSecond: 100,
  imbalanceHistogram: { le: IMBALANCE_BUCKETS, counts: IMBALANCE_BUCKETS.map(() => 0).concat(0) },
  syncWaitShare: 0.2,
  idleRankStepShare: 0.1,
  prefixCacheHitRate: 0,
  forwardStallSeconds: 0,
  retractions: 0,
  requestsPerRank: [5, 5],
  steps: 10,
  simulatedSeconds: 10,
  firstArrivalSeconds: 0,
  lastArrivalSeconds: 9.9,
  tokens: { prefillComputed: 0, prefillCached: 0, decode: 0, outputFromPrefill: 0, output: 0 },
  latencyCdf: {
    quantiles: qs,
    ttftSeconds: qs.map((q) => 0.1 + 3 * q ** 4),
    e2eSeconds: qs.map((q) => 1 + 8 * q ** 2)
  },
  loadSamples: {
    seconds: [0, 1],
    perRank: [
      [1, 2],
      [0, 3]
    ]
  },
  ...over
})

describe("downsampleMax", () => {
  test.prop([
    fc.integer({ min: 1, max: 6 }).chain((ranks) =>
      fc.record({
        cols: fc.array(fc.array(fc.nat(50), { minLength: ranks, maxLength: ranks }), { maxLength: 300 }),
        max: fc.integer({ min: 1, max: 120 })
      })
    )
  ])("at most maxPoints columns, every rank's peak kept, times from the input in order", ({ cols, max }) => {
    const seconds = cols.map((_, i) => i * 0.5)
    const ranks = cols[0]?.length ?? 1
    const perRank = Array.from({ length: ranks }, (_, r) => cols.map((c) => c[r]!))
    const out = downsampleMax(seconds, perRank, max)
    expect(out.seconds.length).toBe(Math.min(cols.length, max))
    for (const t of out.seconds) expect(seconds).toContain(t)
    expect([...out.seconds].sort((a, b) => a - b)).toEqual(out.seconds)
    perRank.forEach((ys, r) => {
      expect(out.perRank[r]!).toHaveLength(out.seconds.length)
      if (ys.length > 0) expect(Math.max(...out.perRank[r]!)).toBe(Math.max(...ys))
    })
  })
})

describe("trimming and axes", () => {
  it("nonEmptyRange / cdfPoints on edge cases", () => {
    expect(nonEmptyRange([])).toBeUndefined()
    expect(nonEmptyRange([[0, 0, 5]])).toEqual([2, 2])
    expect(cdfPoints([0, 1], [0, 0])).toEqual([])
  })

  it("imbalance buckets: only those holding a step, labelled as ranges", () => {
    const counts = IMBALANCE_BUCKETS.map(() => 0).concat(0)
    counts[3] = 4 // 1.1 - 1.25
    counts[6] = 1 // 2 - 3
    const chart = imbalanceChart([
      { engine: "sglang", result: result({ imbalanceHistogram: { le: IMBALANCE_BUCKETS, counts } }) }
    ])!
    const o = chart.option as { xAxis: { data: Array<string> }; series: Array<{ data: Array<number> }> }
    expect(o.xAxis.data).toEqual(["1.1 - 1.25", "1.25 - 1.5", "1.5 - 2", "2 - 3"])
    expect(o.series[0]!.data).toEqual([80, 0, 0, 20])
    expect(imbalanceChart([{ engine: "sglang", result: result() }])).toBeUndefined()
  })

  it("latency x axes run from the 1-2-5 value at or below the fastest point to the one at or above the slowest (round ends, no blank decade)", () => {
    const charts = latencyCharts([{ engine: "sglang", result: result() }])
    expect(charts.map((c) => c.id)).toEqual(["cdf-ttftSeconds", "cdf-itlSeconds", "cdf-e2eSeconds"])
    const ttft = charts[0]!.option as { xAxis: { min: number; max: number } }
    expect(ttft.xAxis.min).toBe(0.1)
    expect(ttft.xAxis.max).toBe(5) // the slowest point is 3.1 s
    expect([0.01235, 57.91, 0.2, 1].map((x) => niceBound(x, false))).toEqual([0.01, 50, 0.2, 1])
    expect([0.01235, 57.91, 0.2, 1].map((x) => niceBound(x, true))).toEqual([0.02, 100, 0.2, 1])
    // a result without an ITL CDF still shows its ITL percentiles as markers, no line
    const itl = charts[1]!.option as {
      xAxis: { min: number; max: number }
      series: Array<{ data: Array<unknown>; markPoint: { data: Array<{ name: string }> } }>
    }
    expect(itl.series[0]!.data).toEqual([])
    expect(itl.series[0]!.markPoint.data.map((m) => m.name)).toEqual(["p50", "p90", "p99"])
    expect([itl.xAxis.min, itl.xAxis.max]).toEqual([0.02, 0.5])
  })

  it("heat maps share one colour scale: the highest load of any run", () => {
    const a = result({
      loadSamples: {
        seconds: [0, 1],
        perRank: [
          [1, 2],
          [0, 3]
        ]
      }
    })
    const b = result({
      loadSamples: {
        seconds: [0, 1],
        perRank: [
          [9, 0],
          [0, 0]
        ]
      }
    })
    const maps = loadHeatmaps([
      { engine: "sglang", result: a },
      { engine: "vllm", result: b, label: "b @ 2x" }
    ])
    expect(maps.map((m) => (m.option as { visualMap: { max: number } }).visualMap.max)).toEqual([9, 9])
    expect(maps[1]!.title).toBe("b @ 2x (vllm): requests on each rank over time")
    expect((maps[0]!.option as { series: Array<{ data: unknown }> }).series[0]!.data).toEqual([
      [0, 0, 1],
      [1, 0, 2],
      [0, 1, 0],
      [1, 1, 3]
    ])
  })

  it("a long run stays small: 20,000 load samples x 16 ranks are drawn as 400 columns", async () => {
    const n = 20_000
    const long = result({
      loadSamples: {
        seconds: Array.from({ length: n }, (_, i) => i * 0.1),
        perRank: Array.from({ length: 16 }, (_, r) => Array.from({ length: n }, (_, i) => (i * (r + 1)) % 17))
      }
    })
    const html = await renderReport({ title: "long", runs: [{ engine: "sglang", result: long }] })
    const data = JSON.parse(
      html.match(/<script type="application\/json" id="chart-data">(.*?)<\/script>/s)![1]!
    )
    const heat = data.find((c: { id: string }) => c.id === "load-0")
    expect(heat.option.xAxis.data).toHaveLength(400)
    expect(heat.option.series[0].data).toHaveLength(400 * 16)
    // the page is the chart library (~1.1 MB) plus well under 0.5 MB of data
    expect(html.length).toBeLessThan(1_600_000)
  })

  it("names are escaped in the HTML and cannot close the data script", async () => {
    const html = await renderReport({
      title: "<b>t</b>",
      runs: [{ engine: "sglang", result: result({ policy: "</script><script>alert(1)</script>" }) }]
    })
    expect(html).toContain("<title>&lt;b&gt;t&lt;/b&gt;</title>")
    expect(html).not.toContain("<script>alert(1)")
  })

  it("grid cells are coloured by their ratio to the column's best; columns sort numerically", () => {
    const chart = gridChart(
      {
        title: "t",
        metric: "retractions",
        xName: "rate",
        better: "lower",
        cells: [
          { policy: "a", x: 10, value: 0 },
          { policy: "b", x: 10, value: 3 },
          { policy: "a", x: 2, value: 4 },
          { policy: "b", x: 2, value: 2 },
          { policy: "a", x: 1 }
        ]
      },
      "grid-0"
    )
    const o = chart.option as {
      xAxis: { data: Array<string> }
      series: Array<{ data: Array<{ value: unknown }> }>
    }
    expect(o.xAxis.data).toEqual(["1", "2", "10"])
    expect(o.series[0]!.data.map((d) => d.value)).toEqual([
      [2, 0, 1, 0], // the best of rate 10 (0 retractions)
      [2, 1, 1e9, 3], // 3 / 0: as bad as it gets
      [1, 0, 2, 4],
      [1, 1, 1, 2],
      [0, 0, "-", "-"] // did not run: blank, not 0
    ])
  })
})
