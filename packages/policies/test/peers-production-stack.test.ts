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
