import { Aibrix, findPolicy, type Policy } from "@loadledger/policies"
import { describe, expect, it } from "vitest"

const c1 = 1.0 / 62.4770592037908 / 0.09952875833841972 // simulator-llama2-7b-a100 at [1 out, <181 in]

const routeAll = <S>(p: Policy<S>, s0: S, ids: ReadonlyArray<string>, inputLength = 10) => {
  let s = s0
  const out: Array<number | string> = []
  for (const id of ids) {
    const r = p.route(s, { requestId: id, inputLength }, 0)
    if (r._tag === "Routed") {
      s = r.state
      out.push(r.rank)
    } else out.push(r.reason)
  }
  return { s, out }
}

describe("aibrix/slo* registry entries", () => {
  it("the four SLO strategies and least-utilization are registered as reference policies", () => {
    for (const n of [
      "slo",
      "slo-least-load-pulling",
      "slo-least-load",
      "slo-pack-load",
      "least-utilization"
    ]) {
      const e = findPolicy(`aibrix/${n}`)
      expect([e?.name, e?.reference, e?.engine]).toEqual([`aibrix/${n}`, true, "any"])
    }
  })

  it("slo-pack-load fills one rank up to the cap (6 x 0.1608), then the next; the 13th is held", () => {
    const p = findPolicy("aibrix/slo-pack-load")!.make({ seed: 1 })
    const { out } = routeAll(
      p,
      p.init(2),
      Array.from({ length: 13 }, (_, i) => `r${i}`)
    )
    const first = out[0]
    expect(out.slice(0, 6)).toEqual(new Array(6).fill(first))
    expect(out.slice(6, 12)).toEqual(new Array(6).fill(1 - (first as number)))
    expect(out[12]).toBe("AllRanksUnavailable")
  })

  it("a finish releases the rank's pending load, so a held request fits again", () => {
    const p = Aibrix.makeAibrixSloPolicy({ strategy: "slo" })
    const r = routeAll(
      p,
      p.init(2),
      Array.from({ length: 12 }, (_, i) => `r${i}`)
    )
    expect(r.out.filter((x) => x === 0).length).toBe(6)
    expect(p.route(r.s, { requestId: "x", inputLength: 10 }, 0)._tag).toBe("PolicyError")
    const s = p.finish(r.s, ["r0"], 1)
    const again = p.route(s, { requestId: "x", inputLength: 10 }, 1)
    expect(again._tag === "Routed" && again.rank).toBe(r.out[0])
  })

  it("pulling spreads: two idle ranks take one request each, pending load = one consumption", () => {
    const p = Aibrix.makeAibrixSloPolicy({ strategy: "slo-least-load-pulling", seed: 3 })
    const { s, out } = routeAll(p, p.init(2), ["a", "b"])
    expect([...out].sort()).toEqual([0, 1])
    expect(s.extra.pendings).toEqual([c1, c1])
  })

  it("push mode (slo-least-load) never holds: 20 requests on 2 ranks all route", () => {
    const p = Aibrix.makeAibrixSloPolicy({ strategy: "slo-least-load" })
    const { out } = routeAll(
      p,
      p.init(2),
      Array.from({ length: 20 }, (_, i) => `r${i}`)
    )
    expect(out.every((x) => typeof x === "number")).toBe(true)
  })

  it("a request the profile gives throughput 0 (2048 in, 512 out) is rejected with upstream's error", () => {
    const p = Aibrix.makeAibrixSloPolicy({ strategy: "slo", outputTokens: 512 })
    const r = p.route(p.init(2), { requestId: "big", inputLength: 2048 }, 0)
    expect(r._tag === "PolicyError" && r.message).toBe("upstream rejects the request: slo failure request")
  })

  it("one healthy rank is taken without routing (the gateway shortcut), even past the cap", () => {
    const p = Aibrix.makeAibrixSloPolicy({ strategy: "slo-pack-load" })
    const { out, s } = routeAll(
      p,
      p.init(1),
      Array.from({ length: 8 }, (_, i) => `r${i}`)
    )
    expect(out).toEqual(new Array(8).fill(0))
    expect(s.extra.pendings[0]).toBeGreaterThan(1)
  })

  it("deployments without a profile fall back to least-request over every rank", () => {
    const p = Aibrix.makeAibrixSloPolicy({ strategy: "slo", deployments: ["x", "y", "z"] })
    const { out, s } = routeAll(p, p.init(3), ["a", "b", "c"])
    expect([...out].sort()).toEqual([0, 1, 2])
    expect(s.extra.pendings).toEqual([0, 0, 0])
  })

  it("bad options are refused at route, naming the field", () => {
    const p = Aibrix.makeAibrixSloPolicy({ strategy: "slo", outputTokens: 1.5 })
    const r = p.route(p.init(2), { requestId: "a", inputLength: 1 }, 0)
    expect(r._tag === "PolicyError" && [r.reason, r.field]).toEqual(["InvalidInput", "outputTokens"])
    const q = Aibrix.makeAibrixSloPolicy({ strategy: "slo", profiles: [{ gpu: "g", indexes: [[0, 2]] }] })
    const e = q.route(q.init(2), { requestId: "a", inputLength: 1 }, 0)
    expect(e._tag === "PolicyError" && e.field).toBe("profiles[0].indexes")
  })
})

describe("aibrix/least-utilization", () => {
  it("routes to the least RankLoad.utilization; with none reported, a random pick", () => {
    const p = findPolicy("aibrix/least-utilization")!.make({ seed: 2 })
    const s = p.observe(
      p.init(3),
      [0.5, 0.2, 0.9].map((u, dpRank) => ({ dpRank, utilization: u })),
      0
    )
    const r = p.route(s, { requestId: "a", inputLength: 10 }, 0)
    expect(r._tag === "Routed" && r.rank).toBe(1)
    const blind = p.route(p.init(3), { requestId: "a", inputLength: 10 }, 0)
    expect(blind._tag === "Routed" && blind.explanation.tieBreak).toBe("random fallback (no pod scored)")
  })

  it("scores in a weighted mix with the least polarity", () => {
    const pods = [0.3, 0.1].map((u, i) => ({ id: `p${i}`, metrics: { engine_utilization: u } }))
    expect(Aibrix.aibrixScorer("least-utilization", pods, [], Aibrix.aibrixPrefixIndex())).toEqual({
      polarity: "least",
      scores: [0.3, 0.1]
    })
  })
})
