// `loadledger reproduce`: the scenario registry's command, in-process over a synthetic scenario
// (rows, ratio errors, JSON, unknown names) and as a user runs it (built CLI in a subprocess).
import { Command } from "commander"
import { afterEach, describe, expect, it, vi } from "vitest"
import { register } from "../src/commands/reproduce.js"
import { rowsText } from "../src/reproduce/format.js"
import { scenarios } from "../src/reproduce/registry.js"
import type { ReproduceScenario } from "../src/reproduce/Scenario.js"
import { built, run } from "./cliSubprocess.js"

const demo: ReproduceScenario = {
  name: "demo-result",
  title: "a synthetic published result",
  source: { citation: "Nobody, Synthetic figures, 2025", url: "https://example.invalid/demo" },
  assumptions: ["the batch size is 64"],
  run: async () => [
    { metric: "throughput per GPU, tok/s", published: 2000, modelled: 1800 },
    { metric: "mean TTFT, ms", published: 400, modelled: 460 },
    { metric: "unpublished ITL, ms", published: 0, modelled: 30 }
  ]
}

const reproduce = async (...args: Array<string>): Promise<{ out: string; error?: string }> => {
  let out = ""
  const spy = vi.spyOn(process.stdout, "write").mockImplementation((c: string | Uint8Array) => {
    out += String(c)
    return true
  })
  const p = new Command().exitOverride()
  register(p, [demo])
  try {
    await p.parseAsync(["node", "loadledger", "reproduce", ...args])
    return { out }
  } catch (e) {
    return { out, error: (e as Error).message }
  } finally {
    spy.mockRestore()
  }
}

afterEach(() => vi.restoreAllMocks())

describe("reproduce (in-process, a synthetic scenario)", () => {
  it("NAME prints source, assumptions and each row's ratio and ratio error", async () => {
    const { out } = await reproduce("demo-result")
    const lines = out.trimEnd().split("\n")
    expect(lines.slice(0, 4)).toEqual([
      "demo-result: a synthetic published result",
      "source: Nobody, Synthetic figures, 2025 (https://example.invalid/demo)",
      "assumptions (what the publication leaves open):",
      "  - the batch size is 64"
    ])
    expect(lines.find((l) => l.startsWith("throughput"))).toMatch(/2000\s+1800\s+0\.900\s+-10\.0%$/)
    expect(lines.find((l) => l.startsWith("mean TTFT"))).toMatch(/400\.0\s+460\.0\s+1\.150\s+\+15\.0%$/)
    expect(lines.find((l) => l.startsWith("unpublished"))).toMatch(/n\/a\s+n\/a$/)
    expect(lines.at(-1)).toBe("largest |ratio error|: 15.0% (mean TTFT, ms)")
  })
  it("--json prints rows {metric, published, modelled, ratioError}", async () => {
    const j = JSON.parse((await reproduce("demo-result", "--json")).out)
    expect(j.name).toBe("demo-result")
    expect(j.source.url).toBe("https://example.invalid/demo")
    expect(j.rows.map((r: { ratioError: number | null }) => r.ratioError)).toEqual([
      expect.closeTo(-0.1, 12),
      expect.closeTo(0.15, 12),
      null
    ])
  })
  it("--list names each scenario with its source; --list --json with assumptions", async () => {
    expect((await reproduce("--list")).out).toBe(
      "demo-result  a synthetic published result\n             source: Nobody, Synthetic figures, 2025 (https://example.invalid/demo)\n"
    )
    expect(JSON.parse((await reproduce("--list", "--json")).out)).toEqual([
      { name: "demo-result", title: demo.title, source: demo.source, assumptions: demo.assumptions }
    ])
  })
  it("an unknown name is an error naming the nearest scenario; NAME with --list is refused", async () => {
    expect((await reproduce("demo-reslt")).error).toBe(
      'reproduce: unknown scenario "demo-reslt" (did you mean "demo-result"?); one of demo-result'
    )
    expect((await reproduce("demo-result", "--list")).error).toBe(
      "reproduce: give either NAME or --list, not both"
    )
  })
  it("a row with no positive published figure has no ratio; the worst row is by |error|", () => {
    const text = rowsText(demo, [{ metric: "x", published: 10, modelled: 5 }])
    expect(text.split("\n").at(-1)).toBe("largest |ratio error|: 50.0% (x)")
  })
})

describe("the registered scenarios", () => {
  it("each has a unique kebab-case name, a citation with a URL and at least one assumption", () => {
    const names = scenarios().map((s) => s.name)
    expect(new Set(names).size).toBe(names.length)
    for (const s of scenarios()) {
      expect(s.name).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/)
      expect(s.source.url).toMatch(/^https:\/\//)
      expect(s.assumptions.length).toBeGreaterThan(0)
    }
  })
})

describe("sglang-deepseek-large-ep", () => {
  it("published figures of the LMSYS blog beside the model's; the model's throughput is below them (no TBO)", async () => {
    const s = scenarios().find((x) => x.name === "sglang-deepseek-large-ep")!
    const rows = await s.run()
    expect(rows.map((r) => [r.metric.split(",")[0], r.published])).toEqual([
      ["decode output throughput per node (8 GPUs)", 22_300],
      ["prefill input throughput per node (8 GPUs)", 52_300],
      ["decode ITL", 100]
    ])
    // throughput and ITL come from the same decode step: 8 GPUs x 256 requests per step
    expect(rows[0]!.modelled * (rows[2]!.modelled / 1000)).toBeCloseTo(8 * 256, 6)
    expect(rows[0]!.modelled).toBeLessThan(22_300)
    expect(s.assumptions.length).toBeGreaterThanOrEqual(5)
  })
})

describe.skipIf(!built)("reproduce (built loadledger in a subprocess)", () => {
  it("--list --json agrees with the registry; an unknown name exits 1 with one line", () => {
    const r = run(["reproduce", "--list", "--json"])
    expect(r.status).toBe(0)
    expect(JSON.parse(r.stdout).map((s: { name: string }) => s.name)).toEqual(scenarios().map((s) => s.name))
    const bad = run(["reproduce", "no-such-result"])
    expect(bad.status).toBe(1)
    expect(bad.stderr).toMatch(/^loadledger: reproduce: unknown scenario "no-such-result"/)
    expect(bad.stderr.trimEnd().split("\n")).toHaveLength(1)
  })
  it("every registered scenario runs and prints a ratio for each published row", () => {
    for (const s of scenarios()) {
      const r = run(["reproduce", s.name, "--json"])
      expect(r.status).toBe(0)
      const j = JSON.parse(r.stdout)
      expect(j.rows.length).toBeGreaterThan(0)
      for (const row of j.rows) expect(Number.isFinite(row.modelled)).toBe(true)
    }
  }, 120_000)
})
