import { readFileSync } from "node:fs"
import { roundRobin } from "@loadledger/policies"
import { runningCapacity } from "@loadledger/step-time"
import { describe, expect, it } from "vitest"
import { simulate } from "../src/index.js"
import { asSimPolicy, fixedStep, fixture, req } from "./helpers.js"

// fixtures/cases/scenarios.json, case S20 (sgl-project/sglang issues #38118, #30294), kind step-time:
// DP attention divides --max-running-requests over the ranks; with a steady queue every rank must
// run its full share (16 of 128 over 8 ranks), not one below it.
const cases = JSON.parse(readFileSync(fixture("fixtures/cases/scenarios.json"), "utf8")) as ReadonlyArray<{
  readonly id: string
  readonly inputs: Record<string, number>
  readonly expected: Record<string, number>
}>
const s20 = cases.find((c) => c.id === "S20")!
const dp = s20.inputs["dp"]!
const cap = runningCapacity({ maxRunningRequests: s20.inputs["maxRunningRequests"]!, dpSize: dp })

/** Every rank's batch (tokens: 1-token prompts, so admitted + decoding requests) per step, in order. */
const batchesPerStep = (perRankCap: number): Array<Array<number>> => {
  // 40 queued requests per rank at t=0 (a steady queue of >= 1 per rank), 1-token prompts, 20 outputs
  const trace = Array.from({ length: dp * 40 }, (_, i) => req(i, 0, 1, 20, { dpRank: i % dp }))
  const r = simulate(
    { dpSize: dp, stepModel: fixedStep(0.01), maxRunningRequests: perRankCap, recordSteps: true },
    trace,
    asSimPolicy(roundRobin)
  )
  expect(r.status._tag).toBe("Completed")
  expect(r.requests.finished).toBe(dp * 40)
  return r.stepLog!.map((s) => s.ranks.map((k) => k.tokens))
}

describe("S20 per-rank running batch reaches the DP-attention cap in the simulator", () => {
  it("S20 cap from max_running_requests 128 over DP 8 is 16 per rank", () => {
    expect(cap).toEqual({ perRank: s20.expected["runningPerRank"], fleet: s20.expected["fleetConcurrency"] })
  })

  it("S20 with a steady queue every rank runs 16 (fleet 128), never settling at 15", () => {
    const steps = batchesPerStep(cap.perRank)
    // 40 queued per rank, 16 at a time, 20 steps each: while a queue remains (the first 40 steps) every
    // rank runs its full 16, a freed slot refilled in the same step; the last 8 per rank then drain
    expect(steps).toHaveLength(60)
    for (const step of steps.slice(0, 40)) {
      expect(step).toEqual(Array(dp).fill(16))
      expect(step.reduce((a, b) => a + b, 0)).toBe(s20.expected["fleetConcurrency"])
    }
    for (const step of steps.slice(40)) expect(step).toEqual(Array(dp).fill(8))
    // a scheduler that keeps one slot free (the fault) plateaus at 15 and fails the check above
    const buggy = batchesPerStep(cap.perRank - 1)
    expect(Math.max(...buggy.flat())).toBe(15)
  })
})
