import type { Policy } from "@loadledger/policies"
import { describe, expect, it } from "vitest"
import {
  findCapacity,
  keptUp,
  type SimConfig,
  type SimPolicy,
  simulate,
  type TraceRequest
} from "../src/index.js"

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

// a policy that places no request (as smg/prefix-hash did on a trace without prefix hashes, before token ids)
const refuseAll = (): SimPolicy => {
  const policy: Policy<null> = {
    name: "refuse",
    init: () => null,
    observe: (s) => s,
    finish: (s) => s,
    setStatus: (s) => s,
    route: () => ({ _tag: "PolicyError", reason: "AllRanksUnavailable", message: "no prefix hashes" })
  }
  return { name: "refuse", make: () => policy as Policy<unknown> }
}
// round-robin over `dp` ranks that refuses a request when its rank last reported `queue` or more
// requests running or waiting: admission control, rejections that grow with the load
const bounded = (dp: number, queue: number): SimPolicy => {
  const policy: Policy<{ readonly next: number; readonly held: ReadonlyArray<number> }> = {
    name: "bounded",
    init: () => ({ next: 0, held: Array.from({ length: dp }, () => 0) }),
    observe: (s, loads) => ({
      ...s,
      held: s.held.map((h, i) => {
        const l = loads.find((x) => x.dpRank === i)
        return l === undefined ? h : (l.numRunningReqs ?? 0) + (l.numWaitingReqs ?? 0)
      })
    }),
    finish: (s) => s,
    setStatus: (s) => s,
    route: (s) => {
      const rank = s.next % dp
      if (s.held[rank]! >= queue)
        return { _tag: "PolicyError", reason: "AllRanksUnavailable", message: `rank ${rank} is full` }
      return { _tag: "Routed", rank, state: { ...s, next: s.next + 1 }, explanation: {} }
    }
  }
  return { name: "bounded", make: () => policy as Policy<unknown> }
}

describe("keptUp: a run that rejected requests did not keep up", () => {
  it("every request finished at a sustainable rate: true; every request rejected: false", () => {
    expect(keptUp(simulate(config(1), trace, rr(1)))).toBe(true)
    const none = simulate(config(1), trace, refuseAll())
    expect([none.status._tag, none.requests.finished, none.requests.rejected]).toEqual(["Completed", 0, 400])
    expect(keptUp(none)).toBe(false)
  })

  it("one rejected request of 400, the rest finished with no backlog: false", () => {
    const big = trace.map((r, i) => (i === 7 ? { ...r, inputLength: 50 } : r))
    const r = simulate({ ...config(1), maxRequestTokens: 10 }, big, rr(1))
    expect([r.status._tag, r.requests.finished, r.requests.rejected]).toEqual(["Completed", 399, 1])
    expect(keptUp(r)).toBe(false)
    // fewer than 100 requests: cannot tell, rejected or not
    expect(keptUp({ ...r, requests: { ...r.requests, total: 99 } })).toBeUndefined()
  })
})

describe("findCapacity with rejections", () => {
  it("a policy that rejects every request: a CapacityError saying so after two probes, not a capacity", () => {
    const e = findCapacity(config(1), trace, refuseAll())
    if (e._tag !== "CapacityError") throw new Error(`a capacity: ${e.rate}`)
    expect(e.probes.map((p) => [p.rate, p.keepsUp, p.result.requests.rejected])).toEqual([
      [1, false, 400],
      [0.5, false, 400]
    ])
    expect(e.message).toBe(
      "refuse rejected 400 of 400 requests at 1x and 400 at 0.5x: the rejections do not fall with the rate (too large for the KV pool or the request limit, or the policy cannot place them), so no rate serves every request"
    )
  })

  it("rejections that do not depend on the rate (one request too large) give the same error", () => {
    const big = trace.map((r, i) => (i === 7 ? { ...r, inputLength: 50 } : r))
    const e = findCapacity({ ...config(2), maxRequestTokens: 10 }, big, rr(2), { start: 8 })
    if (e._tag !== "CapacityError") throw new Error(`a capacity: ${e.rate}`)
    expect(e.probes.map((p) => p.result.requests.rejected)).toEqual([1, 1])
    expect(e.message).toMatch(/^rr rejected 1 of 400 requests at 8x and 1 at 4x: the rejections do not fall/)
  })

  it("rejections that grow with the load (admission control) are not keeping up: the capacity is where they start", () => {
    // one rank serving 1 request per second; at and below rate 2 (1 request/s) no queue forms
    const found = findCapacity(config(1), trace, bounded(1, 2), { start: 8 })
    if (found._tag !== "Capacity") throw new Error(found.message)
    expect(found.rate).toBeGreaterThanOrEqual(2)
    expect(found.rate).toBeLessThan(2 * 1.03)
    const at = (r: number) => found.probes.find((p) => p.rate === r)!
    expect(at(found.rate).result.requests.rejected).toBe(0)
    expect(at(found.failedRate).result.requests.rejected).toBeGreaterThan(0)
    // above capacity the policy sheds load instead of queueing it: the queue stays at most 2 requests
    // (about 3 s of a 100 s span, where a backlog that grew with the trace would be tens of seconds)
    expect(at(8).result.requests.rejected).toBeGreaterThan(100)
    expect(at(8).backlog).toBeLessThan(0.05)
  })
})
