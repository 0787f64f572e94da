import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { expandCells } from "../src/sweep/Cells.js"
import { parseSpec } from "../src/sweep/Spec.js"
import { SpecError } from "../src/sweep/SpecTypes.js"
import { mooncake, runCaptured } from "./runCli.js"

const dir = mkdtempSync(join(tmpdir(), "loadledger-gsweep-"))
const slo = "ttft=10s,tpot=100ms,attain=0.9"
const specText = `name: g
limit: 180
goodput: { slo: "${slo}", windows: 3, precision: 0.05 }
traces: [${mooncake}]
dp: [2]
policies: [round-robin, total-tokens]
`

const pathOf = (text: string): string => {
  try {
    parseSpec(text, "/x/s.yaml")
  } catch (e) {
    return e instanceof SpecError ? e.path : "not a SpecError"
  }
  return "accepted"
}

describe("goodput cells in a sweep spec", () => {
  it("adds the clairvoyant reference and the balance bound to every block, with goodput ids", () => {
    const spec = parseSpec(specText, join(dir, "g.yaml"))
    expect(spec.goodput).toMatchObject({ sloText: slo, windows: 3, confidence: 0.95, precision: 0.05 })
    expect(expandCells(spec).map((c) => c.id)).toEqual([
      "conversation_trace_goodput_dp2_sglang1_round-robin",
      "conversation_trace_goodput_dp2_sglang1_total-tokens",
      "conversation_trace_goodput_dp2_sglang1_clairvoyant",
      "conversation_trace_goodput_dp2_sglang1_balance-bound"
    ])
    // the shipped example parses: 1 trace x 2 DP sizes x 2 front ends x (4 policies + 2 references)
    const example = new URL("../../../examples/sweeps/goodput.yaml", import.meta.url)
    const cells = expandCells(parseSpec(readFileSync(example, "utf8"), example.pathname))
    expect(cells).toHaveLength(24)
    expect(cells.every((c) => c.goodput?.slo.name === "mlperf-deepseek-r1" && c.goodput.windows === 10)).toBe(
      true
    )
  })

  it("refuses rates, a bad SLO and bad search fields, naming them", () => {
    const base = "traces: [a.jsonl]\npolicies: [round-robin]\n"
    expect(pathOf(`${base}goodput: {slo: mlperf-deepseek-r1}\nrates: [1]\n`)).toBe("rates")
    expect(
      pathOf(`traces: [{path: a.jsonl, rates: [1]}]\npolicies: [round-robin]\ngoodput: mlperf-deepseek-r1\n`)
    ).toBe("traces[0].rates")
    expect(pathOf(`${base}goodput: {slo: no-such-slo}\n`)).toBe("goodput.slo")
    expect(pathOf(`${base}goodput: {slo: mlperf-deepseek-r1, windows: 1}\n`)).toBe("goodput.windows")
    expect(pathOf(`${base}goodput: {slo: mlperf-deepseek-r1, confidence: 1}\n`)).toBe("goodput.confidence")
    expect(pathOf(`${base}goodput: {slo: mlperf-deepseek-r1, rate: 2}\n`)).toBe("goodput.rate")
    expect(pathOf(`${base}goodput: mlperf-deepseek-r1\n`)).toBe("accepted")
  })
})

describe("loadledger sweep with goodput cells", () => {
  it("gives each policy the goodput `loadledger goodput` gives it, ranked per block with verdicts", async () => {
    const file = join(dir, "g.yaml")
    writeFileSync(file, specText)
    const out = join(dir, "out")
    const sweep = await runCaptured("sweep", "run", file, "--out", out, "--workers", "0", "--quiet")
    expect(sweep.code).toBe(0)
    expect(sweep.out).toContain("**conversation_trace, DP 2, sglang x1**")
    expect(sweep.out).toMatch(
      /^\| 1 \| round-robin \| [\d.]+ \[[\d.]+, [\d.]+\] \| [\d.]+ \| [\d.]+% \| best \|$/m
    )
    expect(sweep.out).toMatch(/^\| {2}\| balance-bound \(ceiling\) \| .* \| 100% \| - \|$/m)
    const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8"))
    expect(summary.missing).toEqual([])
    const [block] = summary.blocks
    expect(block).toMatchObject({
      trace: "conversation_trace",
      dp: 2,
      frontEnd: "sglang x1",
      engine: "sglang"
    })
    // the same searches as the goodput command on the same trace, windows and SLO
    const direct = await runCaptured(
      "goodput",
      "--trace",
      mooncake,
      "--limit",
      "180",
      "--windows",
      "3",
      "--dp",
      "2",
      "--slo",
      slo,
      "--precision",
      "0.05",
      "--policies",
      "round-robin,total-tokens",
      "--no-curves",
      "--no-warm-start",
      "--json"
    )
    expect(direct.code).toBe(0)
    const board = JSON.parse(direct.out).engines[0]
    const windowsOf = (b: { policies: Array<{ policy: string; goodput: { windows: Array<number> } }> }) =>
      Object.fromEntries(b.policies.map((p) => [p.policy, p.goodput.windows]))
    expect(windowsOf(block)).toEqual(windowsOf(board))
    expect(block.best).toBe(board.best)
    expect(block.verdicts).toEqual(board.verdicts)
    expect(Object.keys(windowsOf(block)).sort()).toEqual([
      "balance-bound",
      "clairvoyant",
      "round-robin",
      "total-tokens"
    ])
    expect(readFileSync(join(out, "report.html"), "utf8")).toContain('<table id="summary-1">')
  }, 120_000)
})
