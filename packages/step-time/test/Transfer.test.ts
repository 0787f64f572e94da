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
// thinSamples (`loadledger calibrate --profile <all fixtures/calibration CSVs> --model llama2-70b
// --thin --leave-one-model-out` prints the same table)
const readme: Record<string, { decode: number; prefill: number; overall: number }> = {
  "llama2-70b": { decode: 21.3, prefill: 23.7, overall: 22.5 },
  "codellama-34b": { decode: 4.9, prefill: 6.5, overall: 5.6 },
  "internlm-20b": { decode: 5.5, prefill: 7.5, overall: 6.4 },
  "llama2-7b": { decode: 8.8, prefill: 7.7, overall: 8.3 },
  "llama3-70b": { decode: 6.1, prefill: 6.3, overall: 6.2 },
  "llama3-8b": { decode: 7.0, prefill: 8.0, overall: 7.6 },
  "phi-2": { decode: 5.9, prefill: 6.1, overall: 6.0 }
}

describe("leave-one-model-out over the shared data (README table)", () => {
  const r = Result.getOrThrow(leaveOneModelOut(sharedSamples()))
  it("reproduces the README figures", () => {
    expect(r.map((m) => m.model).sort()).toEqual(Object.keys(readme).sort())
    for (const m of r) {
      const want = readme[m.model]!
      expect(m.errors.byPhase[`${m.model}/decode`]!.mape).toBeCloseTo(want.decode, 0)
      expect(m.errors.byPhase[`${m.model}/prefill`]!.mape).toBeCloseTo(want.prefill, 0)
      expect(m.errors.overall.mape).toBeCloseTo(want.overall, 0)
    }
  })
  it("every Vidur model meets the target (decode <= 10%, overall <= 15%); Llama-2-70B does not", () => {
    for (const m of r) {
      const decode = m.errors.byPhase[`${m.model}/decode`]!.mape
      const meets = decode <= 10 && m.errors.overall.mape <= 15
      expect(meets).toBe(m.model !== "llama2-70b")
    }
  })
  it("Llama-2-70B: its Vidur layer rows transfer (a40); its splitwise steps on h100-80gb-pcap rest on priors only", () => {
    const l = r.find((m) => m.model === "llama2-70b")!
    // the physical-floor rule drops exactly the three splitwise TP2 batch-64 prefill rows
    expect(r.map((m) => m.excludedRows)).toEqual(r.map((m) => (m.model === "llama2-70b" ? 3 : 0)))
    // the miss, pinned: overall 7.5 points over the target, decode 11.3 points over
    expect(l.errors.overall.mape - 15).toBeCloseTo(7.5, 0)
    expect(l.errors.byPhase["llama2-70b/decode"]!.mape - 10).toBeCloseTo(11.3, 0)
    expect(l.byGpu["a40"]!.mape).toBeLessThan(10)
    expect(l.byGpu["h100-80gb-pcap"]!.priorOnly).toBe(true)
    expect(l.errors.overall.bias).toBeLessThan(0)
  })
})

describe("the physical-floor rule (every row of every source)", () => {
  const all = sharedSamples()
  it("removes exactly the splitwise TP2 batch-64 prefill rows, measured at 11-19% of their floor", () => {
    const { below, kept } = belowPhysicalFloor(all)
    expect(below.map((s) => s.configuration)).toEqual([
      "a100-80gb tp2 batch 64 prompt 512 tokens 128 prefill",
      "h100-80gb tp2 batch 64 prompt 512 tokens 128 prefill",
      "h100-80gb-pcap tp2 batch 64 prompt 512 tokens 128 prefill"
    ])
    for (const s of below) expect(s.measuredSeconds / physicalFloorSeconds(s)).toBeLessThan(0.2)
    // every kept row sits well above its floor: the rule has a wide margin, not a tuned threshold
    expect(Math.min(...kept.map((s) => s.measuredSeconds / physicalFloorSeconds(s)))).toBeGreaterThan(1.15)
  })
})
