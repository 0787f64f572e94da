import { readFileSync } from "node:fs"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import {
  belowPhysicalFloor,
  fit,
  identifiability,
  leaveOneModelOut,
  models,
  physicalFloorSeconds,
  sampleModel,
  splitwiseSamples
} from "../src/index.js"
import { sharedSamples } from "./sharedData.js"

// issue 17: calibration that transfers, reported honestly

describe("identifiability flags the single-model splitwise fit (Llama-2-70B, H100, TP8)", () => {
  const csv = readFileSync(
    new URL("../../../fixtures/calibration/splitwise/perf_model_llama2-70b.csv", import.meta.url),
    "utf8"
  )
  const rows = Result.getOrThrow(
    splitwiseSamples(csv, { model: models["llama2-70b"]!, gpu: "h100-80gb", tp: 8 })
  )
  it("plain least squares: 17% HBM efficiency, zero overheads, a good MAPE, and flagged", () => {
    const f = Result.getOrThrow(fit(rows, { priors: "none" }))
    expect(f.params.memoryEfficiency).toBeCloseTo(0.171, 2)
    expect(f.params.fixedOverheadSeconds).toBe(0)
    expect(f.params.perLayerOverheadSeconds).toBe(0)
    expect(f.mape).toBeLessThan(7)
    const r = identifiability(rows, f.params)
    expect(r.ok).toBe(false)
    expect(r.implausible.map((x) => x.parameter)).toEqual([
      "memoryEfficiency",
      "collectiveLatencySeconds",
      "perLayerOverheadSeconds",
      "fixedOverheadSeconds"
    ])
    expect(r.unseparable[0]).toEqual(
      expect.arrayContaining(["collectiveLatencySeconds", "perLayerOverheadSeconds", "fixedOverheadSeconds"])
    )
    expect(r.conditionNumber).toBeGreaterThan(1e6)
  })
  it("with priors the overheads stay at their priors and the check still says the data cannot separate them", () => {
    const f = Result.getOrThrow(fit(rows))
    const r = identifiability(rows, f.params)
    expect(r.ok).toBe(false)
    expect(r.priorDominated).toEqual(
      expect.arrayContaining(["perLayerOverheadSeconds", "fixedOverheadSeconds"])
    )
  })
})

// the leave-one-model-out figures of the step-time README, over all shared data thinned with
// thinSamples (`loadledger calibrate --profile <all fixtures/calibration CSVs> --thin --evaluate
// --leave-one-model-out` prints the same table)
const readme: Record<string, { decode: number; prefill: number; overall: number }> = {
  "bloom-176b": { decode: 8.0, prefill: 13.5, overall: 10.7 },
  "llama2-70b": { decode: 8.9, prefill: 13.2, overall: 11.0 },
  "codellama-34b": { decode: 5.0, prefill: 6.5, overall: 5.7 },
  "internlm-20b": { decode: 5.6, prefill: 7.5, overall: 6.5 },
  "llama2-7b": { decode: 8.8, prefill: 7.6, overall: 8.3 },
  "llama3-70b": { decode: 6.2, prefill: 6.4, overall: 6.4 },
  "llama3-8b": { decode: 7.1, prefill: 7.5, overall: 7.4 },
  "phi-2": { decode: 5.9, prefill: 6.1, overall: 6.0 }
}
// the two splitwise models' whole steps alone (README: the serving-stack rows apart from Vidur's)
const readmeSteps: Record<string, { decode: number; prefill: number; overall: number }> = {
  "bloom-176b": { decode: 8.0, prefill: 13.5, overall: 10.7 },
  "llama2-70b": { decode: 11.4, prefill: 16.4, overall: 13.9 }
}

describe("leave-one-model-out over the shared data (README table)", () => {
  const all = sharedSamples()
  const r = Result.getOrThrow(leaveOneModelOut(all))
  const byModel = (name: string) => r.find((m) => m.model === name)!
  it("reproduces the README figures", () => {
    expect(r.map((m) => m.model).sort()).toEqual(Object.keys(readme).sort())
    for (const m of r) {
      const want = readme[m.model]!
      expect(m.errors.byPhase[`${m.model}/decode`]!.mape).toBeCloseTo(want.decode, 0)
      expect(m.errors.byPhase[`${m.model}/prefill`]!.mape).toBeCloseTo(want.prefill, 0)
      expect(m.errors.overall.mape).toBeCloseTo(want.overall, 0)
    }
    for (const [name, want] of Object.entries(readmeSteps)) {
      const e = byModel(name).errors.bySource
      expect(e[`${name}/splitwise/decode`]!.mape).toBeCloseTo(want.decode, 0)
      expect(e[`${name}/splitwise/prefill`]!.mape).toBeCloseTo(want.prefill, 0)
      expect(e[`${name}/splitwise`]!.mape).toBeCloseTo(want.overall, 0)
    }
  })
  it("every held-out model meets the target (decode <= 10%, overall <= 15%)", () => {
    for (const m of r) {
      expect(m.errors.byPhase[`${m.model}/decode`]!.mape, m.model).toBeLessThanOrEqual(10)
      expect(m.errors.overall.mape, m.model).toBeLessThanOrEqual(15)
    }
  })
  it("Llama-2-70B's splitwise steps take the splitwise stack's overheads from BLOOM-176B's steps, not from priors", () => {
    const l = byModel("llama2-70b")
    for (const g of ["a100-80gb", "h100-80gb", "h100-80gb-pcap"]) {
      expect(l.byGpu[g]!.priorOnly).toBe(false)
      expect(l.byGpu[g]!.unfittedStacks).toEqual([])
      // the stack's per-request CPU cost, fitted on BLOOM alone: 0.15-0.35 ms per request per step
      const q = l.byGpu[g]!.stacks["splitwise"]!.perRequestOverheadSeconds
      expect(q).toBeGreaterThan(0.15e-3)
      expect(q).toBeLessThan(0.35e-3)
    }
    expect(l.byGpu["a40"]!.mape).toBeLessThan(10)
    // the physical-floor rule drops exactly the three splitwise TP2 batch-64 prefill rows
    expect(r.map((m) => m.excludedRows)).toEqual(r.map((m) => (m.model === "llama2-70b" ? 3 : 0)))
  })
  it("nothing is fitted on the held-out model: its measured times do not move its own parameters", () => {
    // on the power-capped H100 (splitwise steps of both models only), scale every Llama-2-70B row
    // 3x: the parameters that predict Llama-2-70B must not change, its error must
    const pcap = all.filter((s) => s.gpu.name === "h100-80gb-pcap")
    const scaled = pcap.map((s) =>
      sampleModel(s) === "llama2-70b" ? { ...s, measuredSeconds: 3 * s.measuredSeconds } : s
    )
    const llama = (rows: typeof all) =>
      Result.getOrThrow(leaveOneModelOut(rows)).find((m) => m.model === "llama2-70b")!
    const before = llama(pcap)
    const after = llama(scaled)
    expect(after.byGpu["h100-80gb-pcap"]!.stacks).toEqual(before.byGpu["h100-80gb-pcap"]!.stacks)
    expect(after.errors.overall.bias).toBeLessThan(before.errors.overall.bias - 50)
  })
})

describe("the physical-floor rule (every row of every source)", () => {
  const all = sharedSamples()
  it("removes exactly the splitwise TP2 batch-64 prefill rows, measured at 11-19% of their floor", () => {
    const { below, kept } = belowPhysicalFloor(all)
    expect(below.map((s) => s.configuration)).toEqual([
      "llama2-70b a100-80gb tp2 batch 64 prompt 512 tokens 128 prefill",
      "llama2-70b h100-80gb tp2 batch 64 prompt 512 tokens 128 prefill",
      "llama2-70b h100-80gb-pcap tp2 batch 64 prompt 512 tokens 128 prefill"
    ])
    for (const s of below) expect(s.measuredSeconds / physicalFloorSeconds(s)).toBeLessThan(0.2)
    // every kept row sits well above its floor: the rule has a wide margin, not a tuned threshold
    expect(Math.min(...kept.map((s) => s.measuredSeconds / physicalFloorSeconds(s)))).toBeGreaterThan(1.15)
  })
})
