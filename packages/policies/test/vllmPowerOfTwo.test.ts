import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import {
  findPolicy,
  makeVllmPowerOfTwo,
  type PolicyOpsCase,
  type RouteRequest,
  replayPolicyOps,
  vllmP2cPair
} from "../src/index.js"

const cases: ReadonlyArray<PolicyOpsCase> = JSON.parse(
  readFileSync(new URL("./fixtures/vllm/power-of-two.json", import.meta.url), "utf8")
).cases

const idle = (n: number) =>
  Array.from({ length: n }, (_, dpRank) => ({
    dpRank,
    numWaitingReqs: 0,
    numRunningReqs: 0,
    numTotalTokens: 0,
    kvCacheUsage: 0
  }))
const req = (id: string): RouteRequest => ({ requestId: id, inputLength: 3 })

// tests/v1/engine/test_dplb_engine_selection.py at f4604886d88ccf4ecd634b54428c141a411a742d
describe("vllm-power-of-two (vllm-project/vllm#43279): vectors ported from upstream", () => {
  for (const c of cases)
    it(c.id, () => {
      expect(replayPolicyOps(c, findPolicy)).toBeUndefined()
    })

  it("a vector with a wrong expectation fails, naming the op", () => {
    const c = cases.find((x) => x.id === "p2c-returns-sampled")!
    const wrong = { ...c, ops: [c.ops[0]!, { ...c.ops[1]!, expect: { rank: 7 } }] } as PolicyOpsCase
    expect(replayPolicyOps(wrong, findPolicy)).toBe("op 1 (route rid): rank 7 expected, got rank 2")
  })

  it("the full scan would have taken the global least (the vectors tell the two apart)", () => {
    const c = cases.find((x) => x.id === "p2c-returns-sampled")!
    expect(replayPolicyOps({ ...c, policy: "vllm-kv-pressure", options: {} }, findPolicy)).toBe(
      "op 1 (route rid): rank 2 expected, got rank 0"
    )
  })

  it("the pair mapping covers every ordered distinct pair once", () => {
    for (const n of [2, 5, 9]) {
      const seen = new Set<string>()
      for (let a = 0; a < n; a++) for (let b = 0; b < n - 1; b++) seen.add(vllmP2cPair(n, a, b).join(","))
      expect(seen.size).toBe(n * (n - 1))
      for (const k of seen) expect(k.split(",")[0]).not.toBe(k.split(",")[1])
    }
  })

  it("bumps only the chosen engine, by clientCount, and records it in flight", () => {
    const p = makeVllmPowerOfTwo({ draws: [1, 4], clientCount: 3, clientIndex: 0 })
    const r = p.route(p.observe(p.init(8), idle(8), 0), req("r1"), 0)
    if (r._tag !== "Routed") throw new Error(r.reason)
    expect(r.rank).toBe(1)
    expect(r.state.lb.lb.lbEngines.map((row) => row[0])).toEqual([0, 3, 0, 0, 0, 0, 0, 0])
    expect(r.explanation?.details?.candidates).toEqual([1, 5])
  })

  it("a pinned request takes no draw and no bump", () => {
    const p = makeVllmPowerOfTwo({ draws: [5, 0] })
    const loads = [{ ...idle(1)[0]!, numWaitingReqs: 100, numRunningReqs: 100 }, ...idle(8).slice(1)]
    const s = p.observe(p.init(8), loads, 0)
    const pinned = p.route(s, { ...req("p"), routedDpRank: 0 }, 0)
    if (pinned._tag !== "Routed") throw new Error(pinned.reason)
    expect([pinned.rank, pinned.state.drawn, pinned.state.lb.lb.lbEngines[0]![0]]).toEqual([0, 0, 100])
    // the draws are still the first two: engines 5 and 0, and 5 is idle
    const next = p.route(pinned.state, req("n"), 0)
    expect(next._tag === "Routed" && next.rank).toBe(5)
  })

  it("up to four engines takes no draws; above, exactly two per decision", () => {
    for (const n of [1, 2, 3, 4]) {
      const p = makeVllmPowerOfTwo({ seed: 1 })
      const r = p.route(p.init(n), req("a"), 0)
      expect(r._tag === "Routed" && [r.state.drawn, r.state.rng]).toEqual([0, p.init(n).rng])
    }
    const p = makeVllmPowerOfTwo({ seed: 1 })
    const r = p.route(p.init(8), req("a"), 0)
    expect(r._tag === "Routed" && r.state.drawn).toBe(2)
  })

  it("seeded draws starve no engine over 2000 decisions on 16 idle engines", () => {
    const p = makeVllmPowerOfTwo({ seed: 0xbadc0ff })
    let s = p.init(16)
    const seen = new Set<number>()
    for (let i = 0; i < 2000; i++) {
      const r = p.route(p.observe(s, idle(16), 0), req(`r${i}`), 0)
      if (r._tag !== "Routed") throw new Error(r.reason)
      seen.add(r.rank)
      s = p.finish(r.state, [`r${i}`], 0)
    }
    expect(seen.size).toBe(16)
  })

  it("draws only among healthy engines", () => {
    const p = makeVllmPowerOfTwo({ seed: 3 })
    let s = p.setStatus(p.observe(p.init(6), idle(6), 0), [false, true, false, true, false, true])
    const seen = new Set<number>()
    for (let i = 0; i < 200; i++) {
      const r = p.route(s, req(`r${i}`), 0)
      if (r._tag !== "Routed") throw new Error(r.reason)
      seen.add(r.rank)
      s = p.finish(r.state, [`r${i}`], 0)
    }
    expect([...seen].sort()).toEqual([1, 3, 5])
  })

  it("the registry marks the proposal", () => {
    expect(findPolicy("vllm-power-of-two")?.proposed).toBe("vllm-project/vllm#43279")
  })
})
