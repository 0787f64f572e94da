// `loadledger calibrate --shape`: intervals and identification per parameter, and the held-out
// report by (model, phase, GPU), on splitwise's two models.
import { describe, expect, it } from "vitest"
import { runCaptured } from "./runCli.js"

const dir = new URL("../../../fixtures/calibration/splitwise/", import.meta.url).pathname
const profiles = [`${dir}perf_model_llama2-70b.csv`, `${dir}perf_model_bloom-176b.csv`]

describe("calibrate --shape", () => {
  it("--json: per GPU every parameter with an interval around its value and a status; both fold kinds", async () => {
    const r = await runCaptured("calibrate", "--profile", ...profiles, "--shape", "--json")
    expect(r.code).toBe(0)
    const j = JSON.parse(r.out)
    expect(Object.keys(j.fit.gpus).sort()).toEqual(["a100-80gb", "h100-80gb", "h100-80gb-pcap"])
    for (const g of Object.values(j.fit.gpus) as Array<{
      estimates: Array<{ value: number; low: number; high: number; status: string }>
    }>) {
      expect(g.estimates).toHaveLength(14)
      for (const e of g.estimates) {
        expect(e.low).toBeLessThanOrEqual(e.value * (1 + 1e-9))
        expect(e.high).toBeGreaterThanOrEqual(e.value * (1 - 1e-9))
      }
    }
    // splitwise's rows cannot tell the per-request step overhead from the per-request per-layer cost
    const a100 = j.fit.gpus["a100-80gb"].estimates
    expect(
      a100.find((e: { label: string }) => e.label === "perRequestOverheadSeconds (splitwise)").status
    ).toBe("not identified")
    expect(j.leaveOneModelOut.map((c: { fold: string }) => c.fold)).toContain("bloom-176b")
    expect(new Set(j.leaveOneGpuOut.map((c: { fold: string }) => c.fold))).toEqual(
      new Set(["a100-80gb", "h100-80gb", "h100-80gb-pcap"])
    )
    expect(j.leaveOneModelOut).toHaveLength(12)
  }, 60_000)
  it("text: NOT IDENTIFIED spelled out, each held-out cell marked against the 10% target", async () => {
    const r = await runCaptured("calibrate", "--profile", ...profiles, "--shape")
    expect(r.code).toBe(0)
    expect(r.out.split("\n")[0]).toBe("a100-80gb: 840 rows, shape-aware fit (95% intervals: covariance)")
    expect(r.out).toMatch(
      /NOT IDENTIFIED apart: perRequestSecondsPerLayer \(splitwise\) \+ perRequestOverheadSeconds \(splitwise\)/
    )
    expect(r.out).toMatch(
      /│ bloom-176b\s+│ bloom-176b\s+│ splitwise decode\s+│ h100-80gb\s+│ 105\s+│ 6\.1\s+│ 6\.0\s+│ ok/
    )
    expect(r.out).toMatch(/MISS by \d+\.\d/)
  }, 60_000)
  it("--bootstrap n must be a positive integer", async () => {
    const r = await runCaptured("calibrate", "--profile", profiles[0]!, "--shape", "--bootstrap", "0")
    expect(r.code).toBe(1)
    expect(r.err).toMatch(/--bootstrap: expected a positive integer, got 0/)
  })
})
