import { readFileSync } from "node:fs"
import { roundRobin } from "@loadledger/policies"
import { describe, expect, it } from "vitest"
import { simulate } from "../src/index.js"
import { asSimPolicy, fixedStep, fixture, req } from "./helpers.js"

// fixtures/cases/scenarios.json, case S19 (vllm-project/vllm PR #51984), kind simulator.
const cases = JSON.parse(readFileSync(fixture("fixtures/cases/scenarios.json"), "utf8")) as ReadonlyArray<{
  readonly id: string
  readonly inputs: { readonly dp: number; readonly ep: boolean }
}>
const s19 = cases.find((c) => c.id === "S19")!
const dp: number = s19.inputs.dp
const busy = 5
const trace = [req(0, 1, 300, 6, { dpRank: busy })]
const others = Array.from({ length: dp }, (_, i) => i).filter((i) => i !== busy)

describe("S19 zero-token ranks skip the dummy forward: EP all-to-all deadlock", () => {
  for (const engine of ["sglang", "vllm"] as const) {
    it(`${engine}, normal: every step each of the 15 idle ranks runs >= 1 dummy token and time advances`, () => {
      const r = simulate(
        { dpSize: dp, stepModel: fixedStep(0.01), engine, expertParallel: s19.inputs.ep, recordSteps: true },
        trace,
        asSimPolicy(roundRobin)
      )
      expect(r.status._tag).toBe("Completed")
      expect(r.requests.finished).toBe(1)
      const log = r.stepLog!
      expect(log.length).toBeGreaterThan(0)
      for (const step of log) {
        expect(step.ranks).toHaveLength(dp)
        for (const i of others) expect(step.ranks[i]!.dummyTokens).toBeGreaterThanOrEqual(1)
        expect(step.stepSeconds).toBeGreaterThan(0)
      }
      // one prefill step + five decode steps: 6 tokens out, then the request is done
      expect(log.filter((s) => s.ranks[busy]!.tokens > 0)).toHaveLength(6)
      expect(r.simulatedSeconds).toBeGreaterThan(1)
    })

    it(`${engine}, injected early return: deadlock at the first step naming rank 5 and the 15 skipping ranks`, () => {
      const r = simulate(
        {
          dpSize: dp,
          stepModel: fixedStep(0.01),
          engine,
          expertParallel: true,
          faults: { zeroTokenRanksReturnEarly: true }
        },
        trace,
        asSimPolicy(roundRobin)
      )
      expect(r.status._tag).toBe("Deadlock")
      if (r.status._tag !== "Deadlock") return
      expect(r.status.busyRanks).toEqual([busy])
      expect(r.status.skippingRanks).toEqual(others)
      expect(r.status.skippingRanks).toHaveLength(15)
      // time does not advance past the arrival that made the first (never run) step
      expect(r.status.atSeconds).toBe(1)
      expect(r.simulatedSeconds).toBe(1)
      expect(r.steps).toBe(0)
      expect(r.requests.finished).toBe(0)
      expect(r.requests.unfinished).toBe(1)
    })
  }
})
