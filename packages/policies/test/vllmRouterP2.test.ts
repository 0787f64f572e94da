import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { findPolicy, type PolicyOpsCase, replayPolicyOps, Smg, VllmRouter } from "../src/index.js"

// vllm-project/router src/policies/power_of_two.rs, commit fa999f98dc881e20b6b0257be0049cd4c68c8ea0
const cases: ReadonlyArray<PolicyOpsCase> = JSON.parse(
  readFileSync(new URL("../../../fixtures/reference/peers/vllm-router.json", import.meta.url), "utf8")
).cases

const w = (url: string, load: number, healthy = true) => ({ url, healthy, load })
const W3 = [w("http://w1:8000", 10), w("http://w2:8000", 5), w("http://w3:8000", 0)]

describe("vllm-router/power-of-two: vectors", () => {
  for (const c of cases)
    it(c.id, () => {
      expect(replayPolicyOps(c, findPolicy)).toBeUndefined()
    })

  it("a vector with a wrong expectation fails, naming the op", () => {
    const c = cases.find((x) => x.id === "p2-cached-loads")!
    const ops = c.ops.map((o, i) => (i === 1 && o.op === "route" ? { ...o, expect: { rank: 0 } } : o))
    expect(replayPolicyOps({ ...c, ops }, findPolicy)).toBe("op 1 (route r0): rank 0 expected, got rank 1")
  })

  it("the poll-replaces case tells update_loads' replace from SMG's extend", () => {
    const c = cases.find((x) => x.id === "p2-poll-replaces")!
    // what HashMap::extend would leave after the second poll: rank 0 keeps its 10
    const merged = {
      op: "observe" as const,
      now: 0,
      loads: [
        { dpRank: 0, numRunningReqs: 10 },
        { dpRank: 1, numRunningReqs: 5 }
      ]
    }
    const extend = { ...c, ops: c.ops.map((o, i) => (i === 1 ? merged : o)) }
    expect(replayPolicyOps(extend, findPolicy)).toMatch(/rank 0 expected, got rank 1/)
  })
})

describe("vllm-router power_of_two core (explicit draws)", () => {
  it("draws index the healthy list; the second is redrawn while equal to the first", () => {
    const out = VllmRouter.vllmRouterPowerOfTwoSelect(W3, new Map(), [2, 2, 2, 0])
    expect(out).toEqual({ _tag: "Selected", index: 2, candidates: [2, 0], loads: [0, 10], drawsUsed: 4 })
  })

  it("cached + local; the first pick wins ties", () => {
    const cached = new Map([
      ["http://w1:8000", 0],
      ["http://w3:8000", 10]
    ])
    const out = VllmRouter.vllmRouterPowerOfTwoSelect(W3, cached, [2, 0])
    expect(out).toMatchObject({ index: 2, loads: [10, 10] })
    expect(VllmRouter.vllmRouterPowerOfTwoSelect(W3, cached, [0, 2])).toMatchObject({ index: 0 })
  })

  it("unhealthy workers are not drawn: indices are over the healthy list", () => {
    const ws = [w("a", 0, false), w("b", 9), w("c", 4)]
    expect(VllmRouter.vllmRouterPowerOfTwoSelect(ws, new Map(), [0, 1])).toMatchObject({
      index: 2,
      candidates: [1, 2]
    })
  })

  it("none healthy is index undefined; one healthy takes no draw", () => {
    expect(VllmRouter.vllmRouterPowerOfTwoSelect([w("a", 0, false)], new Map(), [])).toMatchObject({
      index: undefined
    })
    expect(VllmRouter.vllmRouterPowerOfTwoSelect([w("a", 3)], new Map(), [])).toMatchObject({
      index: 0,
      drawsUsed: 0
    })
  })

  it("a draw out of range, or draws that run out while equal, is an error naming the draw", () => {
    expect(VllmRouter.vllmRouterPowerOfTwoSelect(W3, new Map(), [3, 0])).toMatchObject({
      _tag: "PolicyError",
      field: "draws[0]"
    })
    expect(VllmRouter.vllmRouterPowerOfTwoSelect(W3, new Map(), [1, 1])).toMatchObject({
      _tag: "PolicyError",
      field: "draws[2]"
    })
  })

  it("is not SMG's power_of_two: the same draws pick differently", () => {
    // SMG: i2 = (i1 + 1 + r2) % n, so draws [0, 1] pair w1 with w3; vllm-router pairs w1 with w2
    const smg = W3.map((x) => ({ ...x, processedRequests: 0, circuitBreakerCanExecute: true }))
    const a = Smg.smgPowerOfTwoSelect({ reports: new Map() }, smg, [0, 1])
    const b = VllmRouter.vllmRouterPowerOfTwoSelect(W3, new Map(), [0, 1])
    expect(a._tag === "SmgSelected" && a.index).toBe(2)
    expect(b._tag === "Selected" && b.index).toBe(1)
  })
})

describe("vllm-router/power-of-two: upstream statistical test as a property", () => {
  it("test_power_of_two_selection: loads 10, 5, 0 -> counts[2] > counts[1] > counts[0] over 100 selects", () => {
    for (const seed of [0, 1, 2, 3, 4]) {
      const p = VllmRouter.makeVllmRouterPowerOfTwo({ seed })
      let s = p.init(3)
      let pin = 0
      for (const [rank, n] of [
        [0, 10],
        [1, 5]
      ] as const)
        for (let i = 0; i < n; i++) {
          const r = p.route(s, { requestId: `pin${pin++}`, inputLength: 1, routedDpRank: rank }, 0)
          if (r._tag === "Routed") s = r.state
        }
      const counts = [0, 0, 0]
      for (let i = 0; i < 100; i++) {
        const r = p.route(s, { requestId: `q${i}`, inputLength: 1 }, 0)
        if (r._tag !== "Routed") throw new Error(r.message)
        counts[r.rank]! += 1
        s = p.finish(r.state, [`q${i}`], 0)
      }
      expect(counts[2]!).toBeGreaterThan(counts[1]!)
      expect(counts[1]!).toBeGreaterThan(counts[0]!)
      expect(counts[0]).toBe(0)
    }
  })

  it("the seed is in the state: the same seed gives the same sequence, another seed another", () => {
    const seq = (seed: number) => {
      const p = VllmRouter.makeVllmRouterPowerOfTwo({ seed })
      let s = p.init(4)
      const out: Array<number> = []
      for (let i = 0; i < 12; i++) {
        const r = p.route(s, { requestId: `q${i}`, inputLength: 1 }, 0)
        if (r._tag !== "Routed") throw new Error(r.message)
        out.push(r.rank)
        s = p.finish(r.state, [`q${i}`], 0)
      }
      return out
    }
    expect(seq(9)).toEqual(seq(9))
    expect(seq(9)).not.toEqual(seq(10))
  })
})
