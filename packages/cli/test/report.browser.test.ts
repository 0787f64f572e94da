// The report opened in real headless Chromium (Debian's package, driven by playwright-core): no
// console errors, every chart drawn, the table sorts, and a screenshot that is not blank.
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Page } from "playwright-core"
import { PNG } from "pngjs"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { chromiumPath, launchChromium } from "../../../test-support/browser.js"
import { PALETTE } from "../src/commands/report/model.js"
import { renderReport } from "../src/commands/simulateReport.js"
import { loadledger, mooncake, reportChartIds, simulateMooncake } from "./runCli.js"

const dir = mkdtempSync(join(tmpdir(), "loadledger-report-"))
// CI installs chromium (.ci/run); elsewhere the test is skipped when it is absent
const browserMissing = chromiumPath() === undefined && !process.env.CI

let browser: Awaited<ReturnType<typeof launchChromium>> | undefined
let reportFile = ""

beforeAll(async () => {
  if (browserMissing) return
  reportFile = join(dir, "report.html")
  vi.spyOn(process.stdout, "write").mockImplementation(() => true)
  const code = await simulateMooncake(
    "round-robin,total-tokens,follow-bootstrap-room",
    300,
    ...["--dp", "4", "--quiet", "--report", reportFile]
  )
  vi.restoreAllMocks()
  expect(code).toBe(0)
  browser = await launchChromium({ width: 1400, height: 900 })
})
afterAll(async () => {
  await browser?.close()
})

/** Open a file, collecting console errors and uncaught exceptions; wait for the charts. */
const open = async (file: string): Promise<{ page: Page; errors: Array<string> }> => {
  const page = await browser!.context.newPage()
  const errors: Array<string> = []
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text())
  })
  page.on("pageerror", (e) => errors.push(String(e)))
  // offline: any request off file:// is a failure
  await page.route(/^(?!file:|data:)/, (route) => {
    errors.push(`network request: ${route.request().url()}`)
    return route.abort()
  })
  await page.goto(`file://${file}`)
  await page.waitForFunction(() => (globalThis as unknown as PageGlobals).__charts !== undefined)
  return { page, errors }
}

/** Sizes of the canvas in every `.chart` (0 x 0 when a chart drew nothing). */
const chartCanvases = (page: Page) =>
  page.$$eval(".chart", (els) =>
    els.map((el) => {
      const c = el.querySelector("canvas")
      const r = c?.getBoundingClientRect()
      return { id: el.id, width: r?.width ?? 0, height: r?.height ?? 0 }
    })
  )

/** Distinct colours and the share of non-white pixels of a PNG. */
const pngStats = (png: Buffer) => {
  const { width, height, data } = PNG.sync.read(png)
  const colours = new Set<number>()
  let ink = 0
  for (let i = 0; i < data.length; i += 4) {
    colours.add((data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!)
    if (data[i]! < 240 || data[i + 1]! < 240 || data[i + 2]! < 240) ink++
  }
  return { width, height, colours: colours.size, ink: ink / (width * height) }
}

/** What the page script leaves on `window` (the test runs in Node: no DOM types here). */
interface PageGlobals {
  readonly __charts?: ReadonlyArray<{
    getOption: () => {
      series: Array<{ data: Array<{ label: { formatter: string } }> }>
      yAxis?: Array<{ data?: Array<string> }>
    }
  }>
}

describe.skipIf(browserMissing)("simulate --report in headless Chromium", () => {
  let page: Page
  let errors: Array<string>
  beforeAll(async () => {
    ;({ page, errors } = await open(reportFile))
  })
  it("loads offline with no console error; every chart has a drawn canvas", async () => {
    const charts = await chartCanvases(page)
    // 3 latency CDFs, shares, requests and tokens per rank, imbalance, one heat map per policy
    expect(charts.map((c) => c.id)).toEqual(reportChartIds(3))
    for (const c of charts) {
      expect(c.width, c.id).toBeGreaterThan(600)
      expect(c.height, c.id).toBeGreaterThan(150)
    }
    // the tail-view button swaps the view (and back) without an error
    await page.click("#cdf-ttftSeconds-alt")
    expect(await page.textContent("#cdf-ttftSeconds-alt")).toBe("CDF view")
    await page.click("#cdf-ttftSeconds-alt")
    expect(errors).toEqual([])
  })

  it("the heat map marks each rank's kind from the diagnosis of the run", async () => {
    const labels = await page.evaluate(() => {
      const w = globalThis as unknown as PageGlobals & {
        document: { getElementById: (id: string) => unknown }
      }
      const charts = w.__charts ?? []
      return charts.map((c) => c.getOption().yAxis?.[0]?.data ?? [])
    })
    const heat = labels.filter((l) => l.length === 4 && l.every((x) => x.startsWith("rank ")))
    expect(heat.length).toBe(3)
    for (const l of heat) {
      expect(l.map((x) => x.replace(/ · .*/, ""))).toEqual(["rank 0", "rank 1", "rank 2", "rank 3"])
      for (const x of l) expect(x).toMatch(/^rank \d · (hardware|load|expert|ok)$/)
    }
    // and on the canvas: the labelled map's left margin holds the axis text
    const shot = pngStats(await page.locator("#load-0").screenshot())
    expect(shot.ink).toBeGreaterThan(0.2)
    expect(errors).toEqual([])
  })

  it("the summary table sorts on a header click, numbers as numbers", async () => {
    const column = (i: number) =>
      page.$$eval(
        `#summary tbody tr`,
        (rows, i) => rows.map((r) => r.children[i]!.getAttribute("data-sort")),
        i
      )
    const ttftP99 = 4
    await page.click(`#summary th[data-col="${ttftP99}"]`)
    const asc = (await column(ttftP99)).map(Number)
    expect(asc).toEqual([...asc].sort((a, b) => a - b))
    expect(await page.getAttribute(`#summary th[data-col="${ttftP99}"]`, "aria-sort")).toBe("ascending")
    await page.click(`#summary th[data-col="${ttftP99}"]`)
    const desc = (await column(ttftP99)).map(Number)
    expect(desc).toEqual([...asc].reverse())
    await page.click(`#summary th[data-col="0"]`)
    expect(await column(0)).toEqual(["follow-bootstrap-room", "round-robin", "total-tokens"])
    // the table is not cut off: its right edge is inside the 1,400 px window
    const right = await page.$eval("#summary", (t) => t.getBoundingClientRect().right)
    expect(right).toBeLessThanOrEqual(1400)
    expect(errors).toEqual([])
  })

  it("renders: screenshots have the charts' colours, not a blank page", async () => {
    // the first screen: title, table, the TTFT CDF
    const shot = join(dir, "report.png")
    const top = pngStats(await page.screenshot({ path: shot }))
    expect(top).toMatchObject({ width: 1400, height: 900 })
    expect(top.colours).toBeGreaterThan(200)
    expect(top.ink).toBeGreaterThan(0.03)
    // a heat map: many shades of its colour scale
    const heat = pngStats(await page.locator("#load-0").screenshot({ path: join(dir, "heatmap.png") }))
    expect(heat.colours).toBeGreaterThan(30)
    expect(heat.ink).toBeGreaterThan(0.2)
    await page.close()
  })

  it("a sweep's grid view: one heat map cell per policy and rate, the best of each rate starred", async () => {
    const cells = [
      { policy: "round-robin", x: 1, value: 2.5 },
      { policy: "total-tokens", x: 1, value: 1.5 },
      { policy: "round-robin", x: 2, value: 4 },
      { policy: "total-tokens", x: 2 }, // a failed cell: empty, not 0
      { policy: "round-robin", x: 4, value: 9 },
      { policy: "total-tokens", x: 4, value: 7 }
    ]
    const file = join(dir, "grid.html")
    writeFileSync(
      file,
      await renderReport({
        title: "sweep",
        runs: [],
        grids: [
          { title: "TTFT p99 by rate", metric: "TTFT p99 s", xName: "rate scale", better: "lower", cells }
        ]
      })
    )
    const { page, errors } = await open(file)
    expect(await chartCanvases(page)).toEqual([
      { id: "grid-0", width: expect.any(Number), height: expect.any(Number) }
    ])
    const labels = await page.evaluate(() =>
      (globalThis as unknown as PageGlobals)
        .__charts![0]!.getOption()
        .series[0]!.data.map((d) => d.label.formatter)
    )
    expect(labels).toEqual(["2.5", "★ 1.5", "★ 4", "-", "9", "★ 7"])
    expect(errors).toEqual([])
    await page.close()
  })
  it("a real sweep's report.html: grids for each metric, per-run charts, no errors", async () => {
    const spec = join(dir, "sweep.yaml")
    writeFileSync(
      spec,
      `name: b\nlimit: 60\ntraces: [{ path: ${mooncake}, rates: [0.1, 0.3] }]\npolicies: [round-robin, total-tokens]\n`
    )
    vi.spyOn(process.stdout, "write").mockImplementation(() => true)
    vi.spyOn(process.stderr, "write").mockImplementation(() => true)
    const out = join(dir, "sweep-out")
    const code = await loadledger("sweep", spec, "--out", out, "--workers", "0", "--quiet")
    vi.restoreAllMocks()
    expect(code).toBe(0)
    const { page, errors } = await open(join(out, "report.html"))
    const ids = (await chartCanvases(page)).map((c) => c.id)
    expect(ids.filter((id) => id.startsWith("grid-"))).toEqual(["grid-0", "grid-1", "grid-2"])
    expect(ids.length).toBeGreaterThan(6)
    const shot = pngStats(await page.locator("#grid-0").screenshot({ path: join(dir, "sweep-grid.png") }))
    expect(shot.colours).toBeGreaterThan(10)
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)

  it("Mooncake at 0.1x, round-robin / total-tokens / vllm-kv-pressure: distinct colours, dashes and markers, round ticks, the tail p90-p99.9 with its points, the light-load note", async () => {
    const file = join(dir, "light.html")
    vi.spyOn(process.stdout, "write").mockImplementation(() => true)
    vi.spyOn(process.stderr, "write").mockImplementation(() => true)
    const code = await simulateMooncake(
      "round-robin,total-tokens,vllm-kv-pressure",
      300,
      ...["--dp", "4", "--rate-scale", "0.1", "--quiet", "--report", file]
    )
    vi.restoreAllMocks()
    expect(code).toBe(0)
    const { page, errors } = await open(file)
    type Series = {
      color: string
      symbol: string
      showSymbol: boolean
      lineStyle: { type: unknown }
      data: Array<[number, number]>
    }
    const itl = () =>
      page.evaluate(() => {
        const c = (
          globalThis as unknown as { __charts: Array<{ getOption: () => unknown; getModel: () => unknown }> }
        ).__charts[1]!
        const o = c.getOption() as { series: Array<unknown>; yAxis: Array<{ min: number; max: number }> }
        // the tick labels as drawn (ECharts' axis model)
        const axis = (
          c.getModel() as {
            getComponent: (
              t: string,
              i: number
            ) => { axis: { getViewLabels: () => Array<{ formattedLabel: string }> } }
          }
        ).getComponent("xAxis", 0).axis
        return {
          series: o.series,
          yAxis: o.yAxis[0]!,
          ticks: axis.getViewLabels().map((l) => l.formattedLabel)
        }
      })
    const cdf = await itl()
    const series = cdf.series as Array<Series>
    expect(series.length).toBe(3)
    expect(new Set(series.map((x) => x.color)).size).toBe(3)
    expect(series.map((x) => x.color)).toEqual(PALETTE.slice(0, 3))
    expect(new Set(series.map((x) => JSON.stringify(x.lineStyle.type))).size).toBe(3)
    expect(new Set(series.map((x) => x.symbol)).size).toBe(3)
    // tick labels in ms / s, 1-2-5 values only (no 0.01235, no 57.91)
    expect(cdf.ticks.length).toBeGreaterThan(1)
    for (const t of cdf.ticks) expect(t).toMatch(/^(1|2|5)(0|00)? (ms|s)$/)
    // the tail view: p90 to p99.9 on a log axis, every point drawn
    await page.click("#cdf-itlSeconds-alt")
    const tail = await itl()
    expect(tail.yAxis).toMatchObject({ min: 0.001, max: 0.1 })
    for (const x of tail.series as Array<Series>) {
      expect(x.showSymbol).toBe(true)
      expect(x.data.length).toBeGreaterThan(1)
      expect(Math.max(...x.data.map((d) => d[1]))).toBeGreaterThanOrEqual(0.1) // starts at p90 or before
    }
    for (const t of tail.ticks) expect(t).toMatch(/^(1|2|5)(0|00)? (ms|s)$/)
    // the screenshot holds each policy's own colour
    const shot = PNG.sync.read(
      await page.locator("#cdf-itlSeconds").screenshot({ path: join(dir, "light-itl.png") })
    )
    const seen = new Set<string>()
    for (let i = 0; i < shot.data.length; i += 4)
      seen.add(
        `#${[0, 1, 2]
          .map((k) => shot.data[i + k]!.toString(16).padStart(2, "0"))
          .join("")
          .toUpperCase()}`
      )
    for (const c of PALETTE.slice(0, 3)) expect(seen.has(c), c).toBe(true)
    // at light load the imbalance chart says that max / mean is inflated
    expect(await page.textContent("#s-imbalance .note")).toContain("light load inflates max / mean")
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)
})
