import { ProductionStack, type RouteRequest } from "@loadledger/policies"
import { describe, expect, it } from "vitest"

const req = (i: number, extra: Partial<RouteRequest> = {}): RouteRequest => ({
  requestId: `r${i}`,
  inputLength: 100,
  ...extra
})

describe("production-stack cores beyond the vectors", () => {
  it("roundrobin keys its cursor by the endpoint set, not the list order (upstream #reorder test)", () => {
    const a = ProductionStack.psRoundRobinSelect({ nextIndex: new Map() }, ["a0", "a1"])
    const b = ProductionStack.psRoundRobinSelect(a.state, ["a1", "a0"])
    const c = ProductionStack.psRoundRobinSelect(b.state, ["a1", "a0", "a2"])
    expect([a.url, b.url, c.url]).toEqual(["a0", "a1", "a0"])
    expect(ProductionStack.psRoundRobinSelect(c.state, []).error).toBe("ValueError")
  })

  it("session: the header wins over the body even when empty; body values hash as Python str()", () => {
    const urls = ["http://engine0.com", "http://engine1.com", "http://engine2.com"]
    const sel = (h: Record<string, string> | undefined, b: Record<string, unknown> | undefined) =>
      ProductionStack.psSessionSelect(urls, new Map(), h, b, "X-User-Id")
    expect(sel({ "x-user-id": "" }, { "X-User-Id": "zzz" }).sessionId).toBe("")
    expect(sel(undefined, { "X-User-Id": 123 }).url).toBe(sel({ "x-user-id": "123" }, undefined).url)
    expect(sel(undefined, { "X-User-Id": true }).sessionId).toBe("True")
    expect(sel(undefined, { "X-User-Id": null }).branch).toBe("qps")
    expect(ProductionStack.psPythonStr(1e-5)).toBe("1e-05")
    expect(ProductionStack.psPythonStr(0.5)).toBe("0.5")
    expect(ProductionStack.psPythonStr(1.5e-7)).toBe("1.5e-07")
    expect(ProductionStack.psPythonStr(2.5e20)).toBe("250000000000000000000")
    expect(ProductionStack.psPythonStr(1.25e17 + 0.5)).toBe("125000000000000000")
    expect(ProductionStack.psPythonStr(0.0001)).toBe("0.0001")
    expect(ProductionStack.psPythonStr({ a: [1, "b"] })).toBe("{'a': [1, 'b']}")
  })

  it("qps routing: NaN and +inf never win; all of them -> undefined", () => {
    expect(
      ProductionStack.psQpsRouting(
        ["a", "b"],
        new Map([
          ["a", Number.NaN],
          ["b", 2]
        ])
      )
    ).toBe("b")
    expect(ProductionStack.psQpsRouting(["a"], new Map([["a", Number.POSITIVE_INFINITY]]))).toBeUndefined()
  })

  it("prefixaware chunks by code point: 128 emoji are one chunk, 129 are two", () => {
    const s0 = ProductionStack.psPrefixAwareInit()
    const one = ProductionStack.psPrefixAwareSelect(s0, ["a"], new Map(), "🙂".repeat(129), [0])
    if (one._tag !== "PsPrefixAwareSelected") throw new Error(one.message)
    const again = ProductionStack.psPrefixAwareSelect(one.state, ["a"], new Map(), "🙂".repeat(129), [0])
    expect(again._tag === "PsPrefixAwareSelected" && again.matchLength).toBe(256)
    const bad = ProductionStack.psPrefixAwareSelect(one.state, ["a", "b"], new Map(), "x", [2])
    expect(bad).toMatchObject({ _tag: "PolicyError", field: "draws[0]" })
  })
})

describe("production-stack Policy adapters", () => {
  it("QPS: ranks never sent a request win first, then the lowest windowed rate", () => {
    const p = ProductionStack.makePsPolicy("session", { qpsWindowSeconds: 10 })
    let s = p.init(3)
    const got: Array<number> = []
    for (const [i, t] of [0, 0, 0, 1, 2, 3].entries()) {
      const r = p.route(s, req(i), t)
      if (r._tag !== "Routed") throw new Error(r.message)
      s = r.state
      got.push(r.rank)
    }
    // 0, 1, 2 fill the stats; then every rate is 1/10 or more: first minimum each time
    expect(got).toEqual([0, 1, 2, 0, 1, 2])
    // after the window the old arrivals no longer count: rank 0's last arrival (t=1) leaves at t=11
    const late = p.route(s, req(9), 11.5)
    expect(late._tag === "Routed" && late.rank).toBe(0)
  })

  it("session affinity and health: one session stays; its rank down -> the ring's next", () => {
    const p = ProductionStack.makePsPolicy("session")
    const r = p.route(p.init(4), req(0, { sessionId: "user-42" }), 0)
    if (r._tag !== "Routed") throw new Error(r.message)
    const again = p.route(r.state, req(1, { sessionId: "user-42" }), 1)
    expect(again._tag === "Routed" && again.rank).toBe(r.rank)
    const down = p.setStatus(
      r.state,
      [0, 1, 2, 3].map((i) => i !== r.rank)
    )
    const moved = p.route(down, req(2, { sessionId: "user-42" }), 1)
    expect(moved._tag === "Routed" && moved.rank !== r.rank).toBe(true)
  })

  it("finish releases the charge; no healthy rank is AllRanksUnavailable", () => {
    const p = ProductionStack.makePsPolicy("prefixaware")
    const r = p.route(p.init(2), req(0, { prefixHashes: ["1"] }), 0)
    if (r._tag !== "Routed") throw new Error(r.message)
    expect(r.state.inflight[r.rank]).toBe(1)
    expect(p.finish(r.state, ["r0"], 1).inflight[r.rank]).toBe(0)
    expect(p.route(p.setStatus(p.init(2), [false, false]), req(0), 0)).toMatchObject({
      reason: "AllRanksUnavailable"
    })
  })
})

describe("production-stack loadaware (PR #1035)", () => {
  const blocks = (n: number, tag = "p") => Array.from({ length: n }, (_, i) => `${tag}${i}`)

  it("the adapter: a warm rank wins until its in-flight lead outweighs the cached fraction", () => {
    const p = ProductionStack.makePsPolicy("loadaware")
    let s = p.init(2)
    // nothing cached: the QPS fallback (rank 0 never got a request: first missing from the stats)
    const r0 = p.route(s, req(0, { inputLength: 1024, prefixHashes: blocks(2) }), 0)
    if (r0._tag !== "Routed") throw new Error(r0.message)
    expect([r0.rank, r0.explanation?.details?.branch]).toEqual([0, "qps"])
    s = r0.state
    // rank 0 holds 2 blocks = 1024 tokens of this 1024-token prompt; loads 1/0 (mean 0.5 -> clamp 1):
    // rank-0 1 - 0.5 = 0.5, rank-1 0 + 0.5 = 0.5: a tie, the smaller url (rank-0)
    const r1 = p.route(s, req(1, { inputLength: 1024, prefixHashes: blocks(2) }), 1)
    if (r1._tag !== "Routed") throw new Error(r1.message)
    expect(r1.rank).toBe(0)
    expect(r1.explanation?.details?.scores).toEqual({ "rank-0": 0.5, "rank-1": 0.5 })
    s = r1.state
    // loads 2/0: mean 1, relative +1 / -1: rank-0 1 - 1 = 0 < rank-1 0 + 1 = 1
    const r2 = p.route(s, req(2, { inputLength: 1024, prefixHashes: blocks(2) }), 2)
    expect(r2._tag === "Routed" && [r2.rank, r2.explanation?.details?.scores]).toEqual([
      1,
      { "rank-0": 0, "rank-1": 1 }
    ])
    // beta 0.25: the same fleet stays on the warm rank (1 - 0.25 = 0.75 > 0.25)
    const q = ProductionStack.makePsPolicy("loadaware", { beta: 0.25 })
    let t = q.init(2)
    for (const i of [0, 1]) {
      const r = q.route(t, req(i, { inputLength: 1024, prefixHashes: blocks(2) }), i)
      if (r._tag !== "Routed") throw new Error(r.message)
      t = r.state
    }
    const r3 = q.route(t, req(2, { inputLength: 1024, prefixHashes: blocks(2) }), 2)
    expect(r3._tag === "Routed" && r3.rank).toBe(0)
  })

  it("matches only whole leading blocks; finish lowers the load; a bad beta names beta", () => {
    const p = ProductionStack.makePsPolicy("loadaware")
    const a = p.route(p.init(2), req(0, { inputLength: 2048, prefixHashes: ["x", "y", "z", "w"] }), 0)
    if (a._tag !== "Routed") throw new Error(a.message)
    const s = p.finish(a.state, ["r0"], 0.5)
    // same first block, different second: 1 block = 512 of 2048 tokens; loads 0/0
    const b = p.route(s, req(1, { inputLength: 2048, prefixHashes: ["x", "q", "z", "w"] }), 1)
    expect(b._tag === "Routed" && b.explanation?.details?.matchedTokens).toEqual({ "rank-0": 512 })
    expect(b._tag === "Routed" && b.explanation?.details?.scores).toEqual({ "rank-0": 0.25, "rank-1": 0 })
    const bad = ProductionStack.makePsPolicy("loadaware", { beta: Number.NaN })
    expect(bad.route(bad.init(2), req(0), 0)).toMatchObject({ _tag: "PolicyError", field: "beta" })
  })

  it("a session id takes the ring when nothing is cached; a held prefix on a down rank does not", () => {
    const p = ProductionStack.makePsPolicy("loadaware")
    const a = p.route(p.init(3), req(0, { sessionId: "user-42", prefixHashes: ["k"] }), 0)
    if (a._tag !== "Routed") throw new Error(a.message)
    expect(a.explanation?.details?.branch).toBe("hash_ring")
    const down = p.setStatus(
      a.state,
      [0, 1, 2].map((i) => i !== a.rank)
    )
    const b = p.route(down, req(1, { sessionId: "user-42", prefixHashes: ["k"] }), 1)
    expect(b._tag === "Routed" && b.explanation?.details?.branch).toBe("loadaware")
  })
})
