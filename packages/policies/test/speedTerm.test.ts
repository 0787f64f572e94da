import { describe, expect, it } from "vitest"
import {
  makeLedgerBalanced,
  makeStepTimeAware,
  ownPolicyConfigs,
  policyFromConfig,
  withSpeed
} from "../src/index.js"
import {
  emptySpeeds,
  observeSpeeds,
  pollsToRecover,
  type SpeedEstimate
} from "../src/own/internal/speedTerm.js"

/** Rows of one lockstep report: forward time a + b·tokens at nominal speed, over each rank's speed; utilization over the slowest. */
const report = (
  t: number,
  tokens: ReadonlyArray<number>,
  speeds: ReadonlyArray<number>,
  a = 0.2,
  b = 0.001
) => {
  const busy = tokens.map((x, r) => (a + b * x) / speeds[r]!)
  const step = Math.max(...busy)
  return tokens.map((numTotalTokens, dpRank) => ({
    dpRank,
    timestamp: t,
    numRunningReqs: 4,
    numWaitingReqs: 0,
    numTotalTokens,
    utilization: busy[dpRank]! / step
  }))
}

describe("speed estimator", () => {
  it("learns a slow rank's speed at unequal loads, and the fixed part in tokens", () => {
    let e = emptySpeeds(4)
    const tokens = [800, 400, 600, 1000]
    for (let t = 1; t <= 200; t++) e = observeSpeeds(e, report(t, tokens, [1, 1, 0.7, 1]), t)
    expect(e.speeds.map((s) => Number(s.toFixed(3)))).toEqual([1, 1, 0.7, 1])
    expect(e.fixedTokens).toBeCloseTo(200, 0)
    expect(e.reports).toBe(200)
  })

  it("one bad window moves the belief by the smoothing only, never below the floor", () => {
    let e = emptySpeeds(4)
    e = observeSpeeds(e, report(1, [500, 500, 500, 500], [1, 0.1, 1, 1]), 1)
    // raw 0.1 is floored at 0.3; one report moves 1 -> 1 - 0.1 x 0.7
    expect(e.speeds[1]).toBeCloseTo(0.93, 10)
    for (let t = 2; t <= 100; t++) e = observeSpeeds(e, report(t, [500, 500, 500, 500], [1, 0.1, 1, 1]), t)
    expect(e.speeds[1]).toBeCloseTo(0.3, 4)
  })

  it("recovers within pollsToRecover reports once the rank is back to speed", () => {
    let e = emptySpeeds(4)
    for (let t = 1; t <= 100; t++) e = observeSpeeds(e, report(t, [500, 500, 500, 500], [1, 1, 1, 0.5]), t)
    expect(e.speeds[3]).toBeCloseTo(0.5, 3)
    const n = pollsToRecover(e.speeds[3]!, 0.05, 0.1)
    expect(n).toBe(22)
    for (let t = 101; t < 101 + n; t++) e = observeSpeeds(e, report(t, [500, 500, 500, 500], [1, 1, 1, 1]), t)
    expect(e.speeds[3]).toBeGreaterThanOrEqual(0.95)
    expect(e.speeds[3]).toBeLessThan(0.96)
  })

  it("reads a rank's speed from the others' line: with two token counts among three ranks its own row does not hold its belief", () => {
    // issue 33: fitted over all three, the line ran through the slow rank's own corrected point, and a
    // belief of 0.74 for a rank back at full speed stayed 0.74 for ever
    let e: SpeedEstimate = { ...emptySpeeds(3), speeds: [1, 0.74, 1] }
    for (let t = 1; t <= 60; t++) e = observeSpeeds(e, report(t, [5376, 3584, 5376], [1, 1, 1], 0, 0.001), t)
    expect(e.speeds[1]).toBeGreaterThan(0.99)
    let f = emptySpeeds(3)
    for (let t = 1; t <= 200; t++) f = observeSpeeds(f, report(t, [5376, 3584, 5376], [1, 0.5, 1]), t)
    // the two others hold equal tokens: their line has no slope of its own, and goes through the
    // fixed part learned so far, which they cannot tell; within 0.02 of the truth
    expect(f.speeds[0]).toBe(1)
    expect(f.speeds[2]).toBe(1)
    expect(Math.abs(f.speeds[1]! - 0.5)).toBeLessThan(0.02)
  })

  it("learns nothing from rows without utilization, from idle rows or from a repeated snapshot", () => {
    const e = emptySpeeds(2)
    const noUtil = [0, 1].map((dpRank) => ({ dpRank, timestamp: 1, numTotalTokens: 10 }))
    expect(observeSpeeds(e, noUtil, 1)).toBe(e)
    const idle = [0, 1].map((dpRank) => ({ dpRank, timestamp: 1, numTotalTokens: 0, utilization: 0.01 }))
    expect(observeSpeeds(e, idle, 1)).toBe(e)
    const once = observeSpeeds(e, report(5, [100, 100], [1, 0.5]), 5)
    expect(once.reports).toBe(1)
    expect(observeSpeeds(once, report(5, [100, 100], [1, 0.5]), 6)).toBe(once)
  })
})

describe("withSpeed", () => {
  it("hands the inner policy each slow rank's tokens in nominal-speed units", () => {
    const p = withSpeed(makeLedgerBalanced())
    let s = p.init(2)
    for (let t = 1; t <= 300; t++) s = p.observe(s, report(t, [1000, 1000], [1, 0.5], 0, 0.001), t)
    expect(s.estimate.speeds[1]).toBeCloseTo(0.5, 3)
    // equal tokens: rank 1 takes twice as long, so the next request goes to rank 0
    const r = p.route(s, { requestId: "a", inputLength: 10 }, 301)
    if (r._tag !== "Routed") throw new Error(r.message)
    expect(r.rank).toBe(0)
    const speeds = r.explanation.details?.["speeds"] as ReadonlyArray<number> | undefined
    expect(speeds?.[1]).toBeCloseTo(0.5, 3)
  })

  it("prices a seconds-pricing inner policy (step-time-aware) at each rank's speed", () => {
    const p = withSpeed(makeStepTimeAware())
    let s = p.init(2)
    for (let t = 1; t <= 300; t++) s = p.observe(s, report(t, [1000, 1000], [1, 0.5], 0, 0.001), t)
    expect(s.estimate.speeds[1]).toBeCloseTo(0.5, 3)
    expect(s.inner.speeds).toBe(s.estimate.speeds)
    // its rows are not rescaled: the inner policy saw the tokens as published
    expect(s.inner.ledger.snapshots[1]?.numTotalTokens).toBe(1000)
    const r = p.route(s, { requestId: "a", inputLength: 4000 }, 301)
    if (r._tag !== "Routed") throw new Error(r.message)
    const terms = r.explanation.details?.["terms"] as ReadonlyArray<number>
    // [wait, own, decode, slot, home] per rank: rank 1's own prefill and decode at half speed
    expect(terms[6]! / terms[1]!).toBeCloseTo(1 / s.estimate.speeds[1]!, 10)
    expect(terms[7]! / terms[2]!).toBeCloseTo(1 / s.estimate.speeds[1]!, 10)
    expect(r.rank).toBe(0)
    // the beliefs survive a route (the inner state it returns keeps them)
    if (r.state.inner.speeds !== s.estimate.speeds) throw new Error("speeds lost by a route")
    // a second request: rank 0 now has a's prefill queued (about 0.19 s), still less than rank 1's
    // own prefill at half speed (about 0.38 s), so b goes to rank 0 as well
    const b = p.route(r.state, { requestId: "b", inputLength: 4000 }, 301)
    expect(b._tag === "Routed" && b.rank).toBe(0)
  })

  it("is its inner policy decision for decision when the rows carry no utilization", () => {
    const inner = makeLedgerBalanced()
    const p = withSpeed(inner)
    const rows = [300, 100, 200].map((numTotalTokens, dpRank) => ({
      dpRank,
      timestamp: 1,
      numRunningReqs: 0,
      numWaitingReqs: 0,
      numTotalTokens
    }))
    let a = inner.observe(inner.init(3), rows, 1)
    let b = p.observe(p.init(3), rows, 1)
    for (let i = 0; i < 12; i++) {
      const ra = inner.route(a, { requestId: `r${i}`, inputLength: 50 + i }, 1)
      const rb = p.route(b, { requestId: `r${i}`, inputLength: 50 + i }, 1)
      if (ra._tag !== "Routed" || rb._tag !== "Routed") throw new Error("not routed")
      expect(rb.rank).toBe(ra.rank)
      a = ra.state
      b = rb.state
    }
  })

  it("ignores an observe at a non-finite time", () => {
    const p = withSpeed(makeLedgerBalanced())
    const s = p.init(2)
    expect(p.observe(s, report(1, [1, 1], [1, 1]), Number.NaN)).toBe(s)
  })

  it("is the speed-aware configuration, and a JSON configuration may name the wrapper", () => {
    expect(ownPolicyConfigs["speed-aware"]!.wrappers).toEqual(["speed"])
    expect(ownPolicyConfigs["speed-aware"]!.kind).toBe("step-time")
    const registered = policyFromConfig(ownPolicyConfigs["speed-aware"])
    expect("_tag" in registered ? registered : registered.name).toBe("speed-aware")
    const p = policyFromConfig({
      kind: "scored",
      name: "mine",
      terms: [{ term: "tokens", weight: 1 }],
      wrappers: ["speed"]
    })
    expect("_tag" in p ? p : p.name).toBe("mine")
    expect(
      policyFromConfig({ kind: "scored", terms: [{ term: "tokens", weight: 1 }], wrappers: ["sped"] })
    ).toEqual({
      _tag: "PolicyConfigError",
      field: "wrappers[0]",
      message: 'unknown wrapper "sped" (known: staleness, kv-admission, speed)'
    })
  })
})
