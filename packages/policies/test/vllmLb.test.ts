import { readFileSync } from "node:fs"
import {
  type PolicyError,
  type VllmEngineRow,
  VllmLb,
  type VllmLbState,
  vllmLbCoord,
  vllmLbFinish,
  vllmLbInit,
  vllmLbRoute,
  vllmLbScore
} from "@loadledger/policies"
import fc from "fast-check"
import { describe, expect, it } from "vitest"

const must = <A extends object>(x: A | PolicyError): A => {
  if ("_tag" in x && x._tag === "PolicyError") throw new Error((x as PolicyError).message)
  return x as A
}

describe("vLLM DPLBAsyncMPClient (README section 1)", () => {
  it("score float order: kv 0.5000001, waiting 2 gives 2.0000011999999994, not a tie with 2", () => {
    expect(VllmLb.score([2, 0, 0.5000001], 0, 1)).toBe(2.0000011999999994)
    expect(VllmLb.score([2, 0, 0.5000001], 0, 1)).not.toBe(2)
  })

  it("score: max(C*inflight, waiting+running), penalty only when waiting > 0 and kv > 0.5", () => {
    expect(VllmLb.score([0, 5, 1.0], 0, 1)).toBe(5)
    expect(VllmLb.score([1, 0, 0.4], 0, 1)).toBe(1)
    expect(VllmLb.score([0, 0, 0], 3, 2)).toBe(6)
    // S07 case A rows under vLLM's score: 168 + 117*6*0.5
    expect(VllmLb.score([117, 51, 1.0], 0, 1)).toBe(168 + 351)
    expect(VllmLb.score([1, 0, undefined], 0, 1)).toBe(1)
  })

  it("start index is floor(N * clientIndex / clientCount)", () => {
    expect(must(VllmLb.init(8, { clientCount: 3, clientIndex: 1 })).engStartIndex).toBe(2)
    expect(must(VllmLb.init(8, { clientCount: 3, clientIndex: 2 })).engStartIndex).toBe(5)
    expect(must(VllmLb.init(2, { clientCount: 2, clientIndex: 1 })).engStartIndex).toBe(1)
  })

  it("typed errors name the field", () => {
    const e1 = VllmLb.init(0)
    expect("_tag" in e1 && e1.reason).toBe("NoRanks")
    const e2 = VllmLb.init(4, { clientCount: 2, clientIndex: 2 })
    expect("_tag" in e2 && e2.field).toBe("clientIndex")
    const s = must(VllmLb.init(4))
    const e3 = VllmLb.route(s, "a", 4)
    expect("_tag" in e3 && e3.reason).toBe("InvalidRoutedRank")
    const e4 = VllmLb.coord(s, [[0, 0, 0]], 0, false)
    expect("_tag" in e4 && e4.field).toBe("counts")
  })

  it("lb-001 (fixture): ties go to the first engine in scan order and the start rotates", () => {
    let s = must(VllmLb.init(2))
    const chosen: Array<number> = []
    for (let i = 0; i < 7; i++) {
      const r = must(VllmLb.route(s, `r${i}`))
      chosen.push(r.chosen)
      s = r.state
    }
    expect(chosen).toEqual([0, 1, 0, 1, 0, 1, 0])
    expect(s.inflight).toEqual([4, 3])
    expect(s.lbEngines).toEqual([
      [4, 0, 0],
      [3, 0, 0]
    ])
  })

  it("explicit rank: no scores, no bump, no rotation; FIRST_REQ only on the first request", () => {
    const s0 = must(VllmLb.init(4, { clientCount: 2, clientIndex: 1 }))
    const r = must(VllmLb.route(s0, "a", 3))
    expect(r.scores).toBeNull()
    expect(r.firstReq).toBe(true)
    expect(r.state.engStartIndex).toBe(2)
    expect(r.state.lbEngines[3]).toEqual([0, 0, 0])
    expect(r.state.inflight).toEqual([0, 0, 0, 1])
    const r2 = must(VllmLb.route(r.state, "b"))
    expect(r2.firstReq).toBe(false)
    expect(r2.chosen).toBe(2)
    expect(r2.state.lbEngines[2]![0]).toBe(2) // waiting += clientCount
  })

  it("coord replaces the rows (local bumps lost) and stamps later requests with its wave", () => {
    const s0 = must(VllmLb.init(2))
    const s1 = must(VllmLb.route(s0, "a")).state
    const s2 = must(
      VllmLb.coord(
        s1,
        [
          [0, 0, 0],
          [5, 0, 0]
        ],
        7,
        true
      )
    )
    expect(s2.lbEngines[0]).toEqual([0, 0, 0])
    expect(s2.inflight).toEqual([1, 0])
    const r = must(VllmLb.route(s2, "b"))
    expect(r.requestWave).toBe(7)
    expect(r.firstReq).toBe(false)
    expect(must(VllmLb.coord(s2, null, 8, false)).lbEngines).toBe(s2.lbEngines)
  })

  it("finish ignores unknown ids and decrements in order", () => {
    const s0 = must(VllmLb.init(2))
    const a = must(VllmLb.route(s0, "a", 1))
    const b = must(VllmLb.route(a.state, "b", 0))
    const f = VllmLb.finish(b.state, ["unknown-id", "b", "a", "a"])
    expect(f.decremented).toEqual([0, 1])
    expect(f.state.inflight).toEqual([0, 0])
  })

  it("property: the choice is the first minimum in scan order from the start index", () => {
    const row = fc.tuple(fc.nat(20), fc.nat(20), fc.double({ min: 0, max: 1, noNaN: true }))
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 12 }).chain((n) =>
          fc.record({
            n: fc.constant(n),
            rows: fc.array(row, { minLength: n, maxLength: n }),
            c: fc.integer({ min: 1, max: 4 }),
            routes: fc.nat(30)
          })
        ),
        ({ n, rows, c, routes }) => {
          let s: VllmLbState = must(
            VllmLb.coord(must(VllmLb.init(n, { clientCount: c })), rows as Array<VllmEngineRow>, 0, true)
          )
          for (let k = 0; k < routes; k++) {
            const r = must(VllmLb.route(s, `r${k}`))
            const scores = r.scores!
            const order = Array.from({ length: n }, (_, i) => (r.startIndexUsed + i) % n)
            const min = Math.min(...scores)
            expect(r.chosen).toBe(order.find((i) => scores[i] === min))
            expect(r.state.engStartIndex).toBe((s.engStartIndex + 1) % n)
            s = r.state
          }
          expect(s.inflight.reduce((a, b) => a + b, 0)).toBe(routes)
        }
      ),
      { numRuns: 200 }
    )
  })

  it("every lb_cases.json group is exercised by the fixture", () => {
    const cases = JSON.parse(
      readFileSync(new URL("../../../fixtures/reference/vllm/lb_cases.json", import.meta.url), "utf8")
    ) as Array<{ group: string }>
    expect(cases.length).toBe(170)
    expect(new Set(cases.map((c) => c.group))).toEqual(
      new Set([
        "fresh_ties",
        "kv_edges",
        "stale_burst",
        "random_mixed",
        "explicit_rank",
        "multi_client",
        "wave_state"
      ])
    )
  })
})

describe("calling style", () => {
  it("the deprecated flat names are the VllmLb namespace's functions", () => {
    expect(vllmLbInit).toBe(VllmLb.init)
    expect(vllmLbScore).toBe(VllmLb.score)
    expect(vllmLbRoute).toBe(VllmLb.route)
    expect(vllmLbCoord).toBe(VllmLb.coord)
    expect(vllmLbFinish).toBe(VllmLb.finish)
  })
})
