import type { Policy } from "@loadledger/policies"
import { describe, expect, it } from "vitest"
import { findCapacity, type SimConfig, type TraceRequest } from "../src/index.js"

// every rank needs exactly 1 s per request (one request at a time, one step, 1 s): a group of n
// ranks serves n requests per second, whatever the arrival pattern
const config = (dpSize: number): SimConfig => ({
  dpSize,
  maxRunningRequests: 1,
  stepModel: (ranks) => ({
    stepSeconds: 1,
    tokenImbalanceRatio: 1,
    ranks: ranks.map(() => ({ syncWaitSeconds: 0 }))
  })
})
const rr = (dp: number) => {
  const policy: Policy<number> = {
    name: "rr",
    init: () => 0,
    observe: (s) => s,
    finish: (s) => s,
    setStatus: (s) => s,
    route: (s) => ({ _tag: "Routed", rank: s % dp, state: s + 1, explanation: {} })
  }
  return { name: "rr", make: () => policy as Policy<unknown> }
}
// one request every 2 s: 0.5 requests/s at rate 1
const trace: ReadonlyArray<TraceRequest> = Array.from({ length: 400 }, (_, i) => ({
  requestId: `${i}`,
  arrivalSeconds: i * 2,
  inputLength: 1,
  outputLength: 1
}))

describe("findCapacity", () => {
  it.each([1, 2, 4])("finds n requests per second for %i one-request-per-second ranks", (dp) => {
    const found = findCapacity(config(dp), trace, rr(dp))
    if (found._tag !== "Capacity") throw new Error(found.message)
    // rate 2n is exactly n requests/s: kept up; the tolerance lets a little more through
    expect(found.rate).toBeGreaterThanOrEqual(2 * dp)
    expect(found.rate).toBeLessThan(2 * dp * 1.03)
    expect(found.requestsPerSecond).toBeCloseTo(dp * (found.rate / (2 * dp)), 10)
    expect(found.failedRate / found.rate).toBeLessThanOrEqual(1.01)
    // the answer is the boundary between a probe that kept up and one that did not
    const at = (r: number) => found.probes.find((p) => p.rate === r)!
    expect(at(found.rate).keepsUp).toBe(true)
    expect(at(found.failedRate).keepsUp).toBe(false)
    expect(at(found.failedRate).backlog).toBeGreaterThan(0.02)
    expect(at(found.rate).backlog).toBeLessThanOrEqual(0.02)
  })

  it("is deterministic and starts where told: doubling up, or halving down", () => {
    const a = findCapacity(config(1), trace, rr(1), { start: 0.5 })
    const b = findCapacity(config(1), trace, rr(1), { start: 0.5 })
    expect(a).toEqual(b)
    expect(a.probes.slice(0, 4).map((p) => p.rate)).toEqual([0.5, 1, 2, 4])
    const down = findCapacity(config(1), trace, rr(1), { start: 16 })
    expect(down.probes.slice(0, 4).map((p) => p.rate)).toEqual([16, 8, 4, 2])
    expect(down._tag === "Capacity" && a._tag === "Capacity" && down.rate / a.rate).toBeCloseTo(1, 1)
  })

  it("a coarser precision stops sooner", () => {
    const fine = findCapacity(config(1), trace, rr(1))
    const coarse = findCapacity(config(1), trace, rr(1), { precision: 0.2 })
    expect(coarse._tag === "Capacity" && coarse.failedRate / coarse.rate).toBeLessThanOrEqual(1.2)
    expect(coarse.probes.length).toBeLessThan(fine.probes.length)
  })

  it("bad options, a trace spanning no time and no bracket are typed errors naming the cause", () => {
    for (const [field, options] of [
      ["start", { start: 0 }],
      ["precision", { precision: -1 }],
      ["tolerance", { tolerance: Number.NaN }],
      ["maxProbes", { maxProbes: 0 }]
    ] as const) {
      const e = findCapacity(config(1), trace, rr(1), options)
      expect(e._tag === "CapacityError" && [e.field, e.probes.length]).toEqual([field, 0])
    }
    const short = findCapacity(config(1), trace.slice(0, 99), rr(1))
    expect(short._tag === "CapacityError" && [short.message, short.probes.length]).toEqual([
      "the trace has 99 requests: at least 100 are needed to tell a backlog",
      0
    ])
    const same = findCapacity(
      config(1),
      trace.map((r) => ({ ...r, arrivalSeconds: 5 })),
      rr(1)
    )
    expect(same._tag === "CapacityError" && same.message).toMatch(/span no time/)
    const few = findCapacity(config(1), trace, rr(1), { start: 0.01, maxProbes: 3 })
    expect(few._tag === "CapacityError" && [few.field, few.probes.length]).toEqual(["maxProbes", 3])
  })
})
