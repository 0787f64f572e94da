// Per-rank speed faults (issue 33, item 1): where each kind lands in the result, on a two-rank
// lockstep group with a fixed 10 ms step, one request per rank, so every figure is exact.
import type { Policy } from "@loadledger/policies"
import { describe, expect, it } from "vitest"
import type { SimConfig } from "../src/index.js"
import { applyRankFaults, checkConfig, resolveConfig, simulate } from "../src/index.js"
import { asSimPolicy, fixedStep, req } from "./helpers.js"

const follow = asSimPolicy<null>({
  name: "follow",
  init: () => null,
  observe: (s) => s,
  finish: (s) => s,
  setStatus: (s) => s,
  route: (s, r) => ({ _tag: "Routed", rank: r.routedDpRank ?? 0, state: s, explanation: {} })
} satisfies Policy<null>)

// one request per rank, 100 input tokens and 21 output tokens: 1 prefill step + 20 decode steps
const trace = [req(0, 0, 100, 21, { dpRank: 0 }), req(1, 0, 100, 21, { dpRank: 1 })]
const run = (config: Partial<SimConfig>) =>
  simulate({ dpSize: 2, stepModel: fixedStep(0.01), recordSteps: "loads", ...config }, trace, follow)

describe("a hardware-slow rank (rankFaults speed)", () => {
  const healthy = run({})
  const slow = run({ rankFaults: [{ dpRank: 1, speed: 0.5 }] })

  it("the healthy group never waits", () => {
    expect(healthy.syncWaitShare).toBe(0)
    expect(healthy.simulatedSeconds).toBeCloseTo(0.21, 12)
  })

  it("rank 1 at half speed doubles the group's step, and rank 0 waits half of each step", () => {
    expect(slow.steps).toBe(healthy.steps)
    expect(slow.simulatedSeconds).toBeCloseTo(0.42, 12)
    // rank 0 waits 10 ms of 20 ms each step; rank 1 never: 0.01 / (2 x 0.02)
    expect(slow.syncWaitShare).toBeCloseTo(0.25, 12)
    expect(slow.stepLog![3]!.ranks.map((r) => r.syncWaitSeconds)).toEqual([0.01, 0])
    // tail ITL: every gap of both ranks' requests doubles, the healthy rank's included
    expect(slow.itlSeconds.mean).toBeCloseTo(2 * healthy.itlSeconds.mean!, 12)
    expect(slow.itlSeconds.p99).toBeCloseTo(0.02, 12)
    // no idle rank: the slow rank holds work like the others
    expect(slow.idleRankStepShare).toBe(healthy.idleRankStepShare)
  })

  it("over a window only the steps starting inside it are slow", () => {
    // steps start at 0, 0.01, ...; [0.05, 0.1) holds the steps at 0.05..0.09 (5 steps): then
    // slow steps of 20 ms start at 0.05, 0.07, 0.09 (3 slow steps) and the rest are nominal
    const w = run({ rankFaults: [{ dpRank: 1, speed: 0.5, fromSeconds: 0.05, toSeconds: 0.1 }] })
    expect(w.simulatedSeconds).toBeCloseTo(0.21 + 3 * 0.01, 12)
    expect(w.syncWaitShare).toBeCloseTo((3 * 0.01) / (2 * (0.21 + 0.03)), 12)
  })
})

describe("a per-step CPU overhead on one rank (rankFaults overheadSeconds)", () => {
  it("2 ms on rank 0 lengthens every step by 2 ms and rank 1 waits them", () => {
    const r = run({ rankFaults: [{ dpRank: 0, overheadSeconds: 0.002 }] })
    expect(r.simulatedSeconds).toBeCloseTo(21 * 0.012, 12)
    expect(r.syncWaitShare).toBeCloseTo(0.002 / (2 * 0.012), 12)
    expect(r.itlSeconds.p99).toBeCloseTo(0.012, 12)
  })
})

describe("rankFaults are checked with the field named", () => {
  const stepModel = fixedStep(0.01)
  it.each([
    [[{ dpRank: 2, speed: 0.5 }], "rankFaults[0].dpRank"],
    [[{ dpRank: 0, speed: 1.5 }], "rankFaults[0].speed"],
    [[{ dpRank: 0 }, { dpRank: 1, overheadSeconds: -1 }], "rankFaults[1].overheadSeconds"],
    [[{ dpRank: 0, fromSeconds: 5, toSeconds: 5 }], "rankFaults[0].toSeconds"],
    ["3:0.7", "rankFaults"]
  ])("%j -> %s", (rankFaults, field) => {
    const c = resolveConfig({ dpSize: 2, stepModel, rankFaults: rankFaults as never })
    expect(checkConfig(c)?.field).toBe(field)
    expect(
      simulate({ dpSize: 2, stepModel, rankFaults: rankFaults as never }, trace, follow).status._tag
    ).toBe("InvalidConfig")
  })
})

describe("applyRankFaults", () => {
  it("uses each rank's own time: a slow rank that was waiting may stay hidden", () => {
    // rank 0 busy 30 ms, rank 1 busy 10 ms: rank 1 at 0.5 speed takes 20 ms, still below 30
    const cost = { stepSeconds: 0.03, tokenImbalanceRatio: 3, ranks: [], syncWaitSeconds: [0, 0.02] }
    const c = applyRankFaults(cost, [0, 1], [{ dpRank: 1, speed: 0.5 }], 0)
    expect(c.stepSeconds).toBeCloseTo(0.03, 12)
    expect(c.syncWaitSeconds![1]).toBeCloseTo(0.01, 12)
    expect(c.tokenImbalanceRatio).toBe(3)
  })
  it("faults on ranks outside the group leave the cost untouched", () => {
    const cost = { stepSeconds: 0.03, tokenImbalanceRatio: 1, ranks: [{ syncWaitSeconds: 0 }] }
    expect(applyRankFaults(cost, [4], [{ dpRank: 1, speed: 0.5 }], 0)).toBe(cost)
  })
})
