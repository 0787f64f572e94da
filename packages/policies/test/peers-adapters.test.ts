import { describe, expect, it } from "vitest"
import { Aibrix, Dynamo, findPolicy, LlmD, type Policy, type RankLoad } from "../src/index.js"

const row = (dpRank: number, o: Partial<RankLoad> = {}): RankLoad => ({
  dpRank,
  timestamp: 1,
  numRunningReqs: 0,
  numWaitingReqs: 0,
  numTotalTokens: 0,
  kvCacheUsage: 0,
  ...o
})

const unknownRow = (dpRank: number) =>
  ({ dpRank, unknown: { reason: "stale", message: "older than 1 s" } }) as unknown as RankLoad

const routeAll = (p: Policy<unknown>, s0: unknown, n: number): { ranks: Array<number>; state: unknown } => {
  let s = s0
  const ranks: Array<number> = []
  for (let i = 0; i < n; i++) {
    const r = p.route(s, { requestId: `q${i}`, inputLength: 100 }, 1)
    if (r._tag !== "Routed") throw new Error(r.message)
    ranks.push(r.rank)
    s = r.state
  }
  return { ranks, state: s }
}

describe("unknown is never attractive in the peer adapters", () => {
  for (const name of [
    "llm-d/profile",
    "llm-d/queue-scorer",
    "llm-d/utilization-detector",
    "dynamo/vllm-style"
  ]) {
    it(`${name}: an unknown or never-reported rank is not chosen while a known busy one exists`, () => {
      const p = findPolicy(name)!.make({ seed: 3 })
      // rank 0 known and busy, rank 1 unknown, rank 2 never reported
      const s = p.observe(
        p.init(3),
        [row(0, { numWaitingReqs: 4, numRunningReqs: 9, kvCacheUsage: 0.7 }), unknownRow(1)],
        1
      )
      expect(new Set(routeAll(p, s, 12).ranks)).toEqual(new Set([0]))
    })
  }
  it("aibrix/least-gpu-cache: a pod without KV usage is unscored, never chosen while one is scored", () => {
    const p = findPolicy("aibrix/least-gpu-cache")!.make({ seed: 3 })
    const s = p.observe(p.init(3), [row(0, { kvCacheUsage: 0.9 }), unknownRow(1)], 1)
    expect(new Set(routeAll(p, s, 12).ranks)).toEqual(new Set([0]))
  })
  // The registry law's counterexample: no rank reports KV, so none is fully known and every healthy
  // rank is a candidate; an unknown rank used to read as upstream's 0 (an empty queue) and win.
  for (const name of ["llm-d/profile", "llm-d/queue-scorer", "llm-d/utilization-detector"])
    it(`${name}: with no rank fully known an unknown rank reads the busiest queue, not an empty one`, () => {
      // scraped 500 ms ago: stale for the detector (200 ms), which then fails open to every rank
      const rows = [
        row(0, { numWaitingReqs: 1, timestamp: 0.5 }),
        row(1, { numWaitingReqs: 3, timestamp: 0.5 })
      ].map(({ kvCacheUsage: _, ...r }) => r)
      for (let seed = 0; seed < 16; seed++) {
        const p = findPolicy(name)!.make({ seed })
        const s = p.observe(p.init(3), [...rows, unknownRow(2)], 1)
        expect([seed, routeAll(p, s, 1).ranks]).toEqual([seed, [0]])
      }
    })
  it("llm-d: with no rank known the healthy ranks are all candidates (none preferred for being unknown)", () => {
    const p = findPolicy("llm-d/queue-scorer")!.make({ seed: 3 })
    expect(new Set(routeAll(p, p.init(3), 30).ranks)).toEqual(new Set([0, 1, 2]))
  })
})

describe("in-flight accounting: charged on route, released on finish", () => {
  it("llm-d/active-request-scorer: a routed request makes its rank less attractive until it finishes", () => {
    const p = findPolicy("llm-d/active-request-scorer")!.make({ seed: 1 })
    const a = p.route(p.init(2), { requestId: "a", inputLength: 10 }, 0)
    if (a._tag !== "Routed") throw new Error(a.message)
    const b = p.route(a.state, { requestId: "b", inputLength: 10 }, 0)
    expect(b._tag === "Routed" && b.rank).toBe(1 - a.rank)
    const s = p.finish(a.state, ["a"], 1)
    // after the release both ranks are idle again: score 1.0 each
    const c = p.route(s, { requestId: "c", inputLength: 10 }, 1)
    expect(c._tag === "Routed" && c.explanation.scores).toEqual([-1, -1])
  })
  it("dynamo/kv: prefill tokens and blocks are charged to the chosen rank and released on finish", () => {
    const p = Dynamo.makeDynamoKvPolicy({ blockSize: 16 })
    const a = p.route(p.init(2), { requestId: "a", inputLength: 64 }, 0)
    if (a._tag !== "Routed") throw new Error(a.message)
    expect(a.state.ledger.tokens[a.rank]).toBe(64)
    expect(a.state.ledger.blocks[a.rank]).toBe(4)
    const s = p.finish(a.state, ["a"], 1)
    expect([s.ledger.tokens, s.ledger.blocks, s.ledger.requests]).toEqual([
      [0, 0],
      [0, 0],
      [0, 0]
    ])
    // an unknown id releases nothing and keeps the state
    expect(p.finish(a.state, ["zzz"], 1)).toBe(a.state)
  })
  it("aibrix/least-request: the gateway count is the in-flight count", () => {
    const p = Aibrix.makeAibrixPolicy({ strategy: "least-request", seed: 5 })
    const { state } = routeAll(p as unknown as Policy<unknown>, p.init(3), 6)
    expect((state as ReturnType<typeof p.init>).ledger.requests).toEqual([2, 2, 2])
  })
})

describe("prefix: the trace's block hashes drive the prefix scorers", () => {
  it("llm-d/prefix-cache-scorer: a repeated prefix goes back to the rank that served it", () => {
    const p = LlmD.makeLlmdPolicy({ profile: LlmD.llmdProfiles["llm-d/prefix-cache-scorer"]!, seed: 9 })
    const h = ["11", "12", "13"]
    const a = p.route(p.init(4), { requestId: "a", inputLength: 1500, prefixHashes: h }, 0)
    if (a._tag !== "Routed") throw new Error(a.message)
    const b = p.route(a.state, { requestId: "b", inputLength: 1600, prefixHashes: [...h, "14"] }, 0)
    expect(b._tag === "Routed" && b.rank).toBe(a.rank)
    expect(b._tag === "Routed" && b.explanation.details?.["prefixMatchBlocks"]).toEqual(
      [0, 1, 2, 3].map((r) => (r === a.rank ? 3 : 0))
    )
  })
  it("aibrix/prefix-cache: same, through the match percentage", () => {
    const p = findPolicy("aibrix/prefix-cache")!.make({ seed: 9 })
    const h = ["1", "2"]
    const a = p.route(p.init(4), { requestId: "a", inputLength: 10, prefixHashes: h }, 0)
    if (a._tag !== "Routed") throw new Error(a.message)
    // while a runs, its pod holds 1 of 4 running requests: above mean + 1 std (0.25 + 0.5), so the
    // match is skipped for least-request (upstream's load bound)
    const busy = p.route(a.state, { requestId: "b", inputLength: 10, prefixHashes: h }, 0)
    expect(busy._tag === "Routed" && busy.explanation.tieBreak).toBe("prefix_match_skipped")
    expect(busy._tag === "Routed" && busy.rank !== a.rank).toBe(true)
    const b = p.route(p.finish(a.state, ["a"], 1), { requestId: "b", inputLength: 10, prefixHashes: h }, 1)
    expect(b._tag === "Routed" && [b.rank, b.explanation.tieBreak]).toEqual([a.rank, "prefix_match"])
  })
})

describe("errors are values", () => {
  it("no healthy rank", () => {
    for (const e of ["llm-d/profile", "dynamo/kv", "aibrix/multi"]) {
      const p = findPolicy(e)!.make({})
      const r = p.route(p.setStatus(p.init(2), [false, false]), { requestId: "a", inputLength: 1 }, 0)
      expect(r._tag === "PolicyError" && [r.reason, r.field]).toEqual(["AllRanksUnavailable", "status"])
    }
  })
  it("a negative input length", () => {
    const p = findPolicy("dynamo/kv")!.make({})
    const r = p.route(p.init(2), { requestId: "a", inputLength: -1 }, 0)
    expect(r._tag === "PolicyError" && r.field).toBe("inputLength")
  })
  it("dynamo: a pin to an unhealthy rank", () => {
    const p = findPolicy("dynamo/kv")!.make({})
    const r = p.route(
      p.setStatus(p.init(2), [true, false]),
      { requestId: "a", inputLength: 1, routedDpRank: 1 },
      0
    )
    expect(r._tag === "PolicyError" && [r.reason, r.field]).toEqual(["InvalidRoutedRank", "routedDpRank"])
  })
  it("aibrix: an invalid mix weight is an error value", () => {
    expect(Aibrix.parseAibrixMix("least-request:-1")).toEqual({
      _tag: "AibrixMixError",
      message: 'weight of "least-request:-1" is not an integer in [0, 1000000]'
    })
  })
})
