import { findPolicy, type Policy, type RouteRequest, Trtllm } from "@loadledger/policies"
import { describe, expect, it } from "vitest"
import { pyShuffle } from "../src/trtllm/internal/pyRandom.js"

const st = (...xs: ReadonlyArray<readonly [number, number]>) =>
  xs.map(([a, t], rank) => ({ rank, numActiveRequests: a, numActiveTokens: t }))
const reqs = (n: number, len = 10) => Array.from({ length: n }, (_, id) => ({ id, inputLength: len }))

describe("CPython's random.Random(seed).shuffle", () => {
  // printed by CPython 3.11.7: x = list(range(8)); random.Random(s).shuffle(x)
  it.each([
    [0, [4, 1, 5, 2, 0, 3, 7, 6]],
    [1, [3, 6, 1, 5, 7, 0, 4, 2]],
    [7, [6, 7, 2, 4, 0, 3, 1, 5]],
    [123456789, [0, 2, 1, 3, 6, 5, 4, 7]],
    [2 ** 40 + 5, [1, 2, 3, 6, 7, 0, 5, 4]]
  ])("seed %i", (seed, out) => {
    expect(pyShuffle([0, 1, 2, 3, 4, 5, 6, 7], seed)).toEqual(out)
  })
})

describe("DefaultADPRouter", () => {
  it("balances longest first on the (tokens, requests, rank) heap under the fair-share cap", () => {
    const a = Trtllm.assignDefault(
      st([0, 0], [0, 0]),
      [
        { id: "s", inputLength: 5 },
        { id: "l", inputLength: 50 },
        { id: "m", inputLength: 20 },
        { id: "t", inputLength: 1 }
      ],
      10
    )
    // l -> 0 (50), m -> 1 (20), s -> 1 (25), then rank 1 is at the cap 2: t -> 0
    expect(a).toEqual({
      assigned: [
        ["l", "t"],
        ["m", "s"]
      ],
      unassigned: [],
      expectedNumActiveRequests: 2
    })
  })

  it("the later revision caps the target at max_num_active_requests; the rest stays unassigned", () => {
    expect(Trtllm.assignDefault(st([3, 0], [3, 0]), reqs(4), 4)).toEqual({
      assigned: [[0], [1]],
      unassigned: [2, 3],
      expectedNumActiveRequests: 4
    })
    // @1addeb3d: the cap is ceil(10 / 2) = 5, both ranks take two
    expect(Trtllm.assignDefault(st([3, 0], [3, 0]), reqs(4), 4, false).assigned).toEqual([
      [0, 2],
      [1, 3]
    ])
  })

  it("tokens of an explicit placement are not charged to the heap", () => {
    const a = Trtllm.assignDefault(
      st([0, 0], [0, 0]),
      [
        { id: "pin", inputLength: 1000, attentionDpRank: 0, attentionDpRelax: false },
        { id: "x", inputLength: 10 }
      ],
      10
    )
    // both ranks at 0 tokens: x ties on tokens, rank 1 has fewer requests
    expect(a.assigned).toEqual([["pin"], ["x"]])
  })
})

describe("KVCacheAwareADPRouter", () => {
  it("cold-start warm-up sends relaxed requests to the smallest unwarmed rank first", () => {
    const out = Trtllm.assignKvCacheAware(
      st([0, 0], [0, 0], [0, 0]),
      reqs(2, 100),
      10,
      [],
      Trtllm.kvCacheAwareDefaults,
      [0, 1, 2]
    )
    expect(out.assignment.assigned).toEqual([[0], [1], []])
    expect(out.pendingWarmup).toEqual([2])
  })

  it("a match at or below the threshold is ignored: load decides", () => {
    const m = [new Map([[1, 10]]), new Map<number, number>()]
    // 10 / 100 = 0.1 is not above 0.1: rank 0 (50 tokens) loses to rank 1 (0)
    expect(
      Trtllm.assignKvCacheAware(st([1, 50], [0, 0]), [{ id: 1, inputLength: 100 }], 10, m).assignment.assigned
    ).toEqual([[], [1]])
    const m2 = [new Map([[1, 60]]), new Map<number, number>()]
    // 40 + 50/50*100 = 140 against 100: still rank 1; weight 0.1: 40 + 10 = 50 wins
    expect(
      Trtllm.assignKvCacheAware(st([1, 50], [0, 0]), [{ id: 1, inputLength: 100 }], 10, m2, {
        ...Trtllm.kvCacheAwareDefaults,
        loadBalanceWeight: 0.1
      }).assignment.assigned
    ).toEqual([[1], []])
  })
})

describe("ConversationAwareADPRouter", () => {
  it("new conversations go round-robin; a known one returns under the hard cap, past the soft one", () => {
    const s = st([0, 0], [0, 0])
    const first = Trtllm.assignConversationAware(
      s,
      [
        { id: 1, inputLength: 1, conversationId: "a" },
        { id: 2, inputLength: 1, conversationId: "b" }
      ],
      8,
      Trtllm.conversationStart
    )
    expect(first.assignment.assigned).toEqual([[1], [2]])
    const next = Trtllm.assignConversationAware(
      st([1, 0], [1, 0]),
      [1, 2, 3, 4].map((i) => ({ id: i, inputLength: 1, conversationId: "a" })),
      8,
      first.memory
    )
    // soft cap ceil(2 * ceil(6 / 2)) = 6, sticky to rank 0 under 8
    expect(next.assignment.assigned).toEqual([[1, 2, 3, 4], []])
    expect(next.assignment.expectedNumActiveRequests).toBe(6)
  })

  it("the LRU map forgets the oldest conversation past max_sessions", () => {
    const one = (id: number, conv: string, m: Trtllm.ConversationMemory) =>
      Trtllm.assignConversationAware(
        st([0, 0], [0, 0]),
        [{ id, inputLength: 1, conversationId: conv }],
        8,
        m,
        2,
        1
      )
    const a = one(1, "a", Trtllm.conversationStart)
    const b = one(2, "b", a.memory)
    expect(b.memory.sessions).toEqual([["b", 1]])
  })
})

describe("the registered policies", () => {
  const run = (
    p: Policy<unknown>,
    n: number,
    rs: ReadonlyArray<Partial<RouteRequest>>,
    finishAfter?: number
  ) => {
    let s = p.init(n)
    return rs.map((r, i) => {
      const x = p.route(s, { requestId: `r${i}`, inputLength: 100, ...r }, 0)
      if (x._tag !== "Routed") return x.reason
      s = x.state
      if (finishAfter === i) s = p.finish(s, ["r0"], 0)
      return x.rank
    })
  }
  it("trtllm/default: fewest active tokens, finishes release them", () => {
    const p = findPolicy("trtllm/default")!.make({})
    // the 4th: rank 1 has fewer tokens (60 < 100) but is at the per-decision cap ceil(4 / 2) = 2
    expect(
      run(p, 2, [{ inputLength: 100 }, { inputLength: 30 }, { inputLength: 30 }, { inputLength: 50 }])
    ).toEqual([0, 1, 1, 0])
    expect(run(p, 2, [{ inputLength: 100 }, { inputLength: 30 }, { inputLength: 30 }], 1)).toEqual([0, 1, 0])
  })
  it("trtllm/default: a pin is attention_dp_rank; the cap is max_num_active_requests", () => {
    const p = findPolicy("trtllm/default")!.make({ maxRunningRequests: 1 })
    expect(run(p, 2, [{ routedDpRank: 1 }, {}, {}])).toEqual([1, 0, "AllRanksUnavailable"])
  })
  it("trtllm/kv-cache-aware: a shared prefix returns to the rank that cached it", () => {
    const p = findPolicy("trtllm/kv-cache-aware")!.make({})
    const h = { prefixHashes: ["a", "b", "c", "d"] }
    // r2 on rank 0: (100 - 99) + 100 / 200 * 100 = 51 against 100 + 50 = 150 on rank 1
    expect(run(p, 2, [h, { inputLength: 100 }, h])).toEqual([0, 1, 0])
  })
  it("trtllm/conversation-affinity: sessions stick", () => {
    const p = findPolicy("trtllm/conversation-affinity")!.make({})
    expect(run(p, 3, [{ sessionId: "x" }, { sessionId: "y" }, { sessionId: "x" }, {}])).toEqual([0, 1, 0, 2])
  })
})
