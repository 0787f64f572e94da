import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  makeLedgerBalanced,
  makeScored,
  makeUncachedTokens,
  ownPolicyConfigs,
  policyFromConfig,
  type ScoredState,
  type Scorer,
  Scorers
} from "../src/index.js"
import { opCaseArb, replay } from "./support/ledgerOps.js"
import { routed, idle as row } from "./support/routed.js"

const fixed = (name: string, costs: ReadonlyArray<number>) => Scorers.perRank(name, (_v, r) => costs[r]!)

/** Route one request on `rows` with `scorers` and return the result. */
const once = (
  scorers: Parameters<typeof makeScored>[0]["scorers"],
  n: number,
  tieBreakers = [] as Array<Scorer>
) => {
  const p = makeScored({ scorers, tieBreakers })
  return p.route(
    p.observe(
      p.init(n),
      Array.from({ length: n }, (_, r) => row(r)),
      1
    ),
    { requestId: "x", inputLength: 10 },
    1
  )
}

describe("makeScored: normalisation and weighting", () => {
  it("min-max maps each term to [0, 1] over the usable ranks, then weights and sums", () => {
    const r = routed(
      once(
        [
          { scorer: fixed("a", [10, 20, 30]), weight: 1 },
          { scorer: fixed("b", [5, 0, 1]), weight: 2 }
        ],
        3
      )
    )
    // a: 0, 0.5, 1; b: 1, 0, 0.2 -> 0 + 2, 0.5 + 0, 1 + 0.4
    expect(r.explanation.scores).toEqual([2, 0.5, 1.4])
    expect(r.rank).toBe(1)
  })
  it("a term whose usable ranks all cost the same scores 0 everywhere (the other terms decide)", () => {
    const r = routed(
      once(
        [
          { scorer: fixed("flat", [7, 7, 7]), weight: 100 },
          { scorer: fixed("b", [3, 1, 2]), weight: 1 }
        ],
        3
      )
    )
    expect(r.explanation.scores).toEqual([1, 0, 0.5])
  })
  it('"max" divides by the largest cost (0 stays 0, all 0 when the largest is 0); "none" keeps raw units', () => {
    expect(
      routed(once([{ scorer: fixed("a", [0, 50, 100]), weight: 1, normalise: "max" }], 3)).explanation.scores
    ).toEqual([0, 0.5, 1])
    expect(
      routed(once([{ scorer: fixed("a", [0, 0]), weight: 1, normalise: "max" }], 2)).explanation.scores
    ).toEqual([0, 0])
    expect(
      routed(
        once(
          [
            { scorer: fixed("a", [100, 40]), weight: 1, normalise: "none" },
            { scorer: fixed("b", [0, 70]), weight: 1, normalise: "none" }
          ],
          2
        )
      ).explanation.scores
    ).toEqual([100, 110])
  })
  it("+Infinity excludes a rank before normalising; NaN counts as the worst usable cost", () => {
    const r = routed(
      once(
        [
          { scorer: fixed("gate", [Number.POSITIVE_INFINITY, 0, 0, 0]), weight: 0 },
          { scorer: fixed("a", [0, Number.NaN, 10, 20]), weight: 1 }
        ],
        4
      )
    )
    // rank 0 (cost 0, the best) is gated out; the range is 10..20 over ranks 1-3, NaN -> 20
    expect(r.explanation.scores).toEqual([Number.POSITIVE_INFINITY, 1, 0, 1])
    expect(r.rank).toBe(2)
    expect(r.explanation.details?.["excluded"]).toEqual([0])
  })
  it("every rank gated out is AllRanksUnavailable, not a silent pick", () => {
    const r = once(
      [{ scorer: fixed("gate", [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY]), weight: 0 }],
      2
    )
    expect(r._tag === "PolicyError" && r.reason).toBe("AllRanksUnavailable")
  })
  it("ties go to the tie-breakers (raw, in order), then to the rotating index", () => {
    const r = routed(
      once([{ scorer: fixed("a", [1, 1, 1]), weight: 1 }], 3, [
        fixed("t1", [5, 2, 2]),
        fixed("t2", [0, 9, 3])
      ])
    )
    expect(r.rank).toBe(2)
  })
  it("bad options are a typed error naming the field, on every route", () => {
    const bad = (o: Parameters<typeof makeScored>[0]) => {
      const p = makeScored(o)
      return p.route(p.init(2), { requestId: "x", inputLength: 1 }, 0)
    }
    expect(bad({ scorers: [] })).toMatchObject({ reason: "InvalidInput", field: "scorers" })
    expect(bad({ scorers: [{ scorer: Scorers.tokens, weight: -1 }] })).toMatchObject({
      field: "scorers[0].weight"
    })
    expect(bad({ scorers: [{ scorer: Scorers.tokens, weight: Number.NaN }] })).toMatchObject({
      field: "scorers[0].weight"
    })
    expect(
      bad({
        scorers: [
          { scorer: Scorers.tokens, weight: 1 },
          { scorer: Scorers.tokens, weight: 1, normalise: "log" as "none" }
        ]
      })
    ).toMatchObject({ field: "scorers[1].normalise" })
  })
  it("inputLength is checked as everywhere (a token count)", () => {
    const p = makeScored({ scorers: [{ scorer: Scorers.tokens, weight: 1 }] })
    expect(p.route(p.init(2), { requestId: "x", inputLength: 1.5 }, 0)).toMatchObject({
      field: "inputLength"
    })
    expect(p.route(p.init(0), { requestId: "x", inputLength: 1 }, 0)).toMatchObject({ reason: "NoRanks" })
  })
})

describe("makeScored: no systematic tie winner", () => {
  it("the same tied snapshot 10 times with 3 requests between: 8 ranks get 30 requests 4/4/4/4/4/4/3/3, not 10/10/10/0/...", () => {
    const p = makeScored({ scorers: [{ scorer: Scorers.tokens, weight: 1 }] })
    let s: ScoredState = p.init(8)
    const counts = new Array<number>(8).fill(0)
    for (let round = 0; round < 10; round++) {
      s = p.observe(
        s,
        Array.from({ length: 8 }, (_, r) => row(r, { timestamp: 10 + round })),
        10 + round
      )
      for (let i = 0; i < 3; i++) {
        const r = routed(
          p.route(s, { requestId: `r${round}-${i}`, inputLength: 100 }, 10 + round + 0.001 * (i + 1))
        )
        counts[r.rank]! += 1
        s = r.state
      }
    }
    expect(counts.sort()).toEqual([3, 3, 4, 4, 4, 4, 4, 4])
  })
  it("front ends start their scan at floor(dpSize * clientIndex / clientCount)", () => {
    const p = makeScored({ scorers: [{ scorer: Scorers.tokens, weight: 1 }], clientCount: 4, clientIndex: 3 })
    expect(routed(p.route(p.init(8), { requestId: "x", inputLength: 1 }, 0)).rank).toBe(6)
  })
})

describe("the registered configurations decide as their makers (random sequences)", () => {
  const gate = Scorers.kvPressureGate()
  const configured = (name: string, o: { clientCount?: number; clientIndex?: number } = {}) => {
    const p = policyFromConfig(ownPolicyConfigs[name], o)
    if ("_tag" in p) throw new Error(p.message)
    return p
  }
  it("ledger-balanced's configuration = makeLedgerBalanced = tokens (1), the gate, ties by requests", () => {
    for (const o of [{}, { clientCount: 3, clientIndex: 2 }]) {
      const lb = makeLedgerBalanced(o)
      const sc = configured("ledger-balanced", o)
      fc.assert(
        fc.property(opCaseArb, (c) => {
          expect(replay(sc, c).decisions).toEqual(replay(lb, c).decisions)
        }),
        { numRuns: 100, seed: 16 }
      )
    }
  })
  it("ledger-balanced-requests' configuration = makeLedgerBalanced({ metric: requests })", () => {
    const lb = makeLedgerBalanced({ metric: "requests" })
    const sc = configured("ledger-balanced-requests")
    fc.assert(
      fc.property(opCaseArb, (c) => {
        expect(replay(sc, c).decisions).toEqual(replay(lb, c).decisions)
      }),
      { numRuns: 100, seed: 17 }
    )
  })
  it("uncached-tokens' configuration = makeUncachedTokens, the same winning scores", () => {
    for (const o of [{}, { clientCount: 2, clientIndex: 1 }]) {
      const ut = makeUncachedTokens(o)
      const sc = configured("uncached-tokens", o)
      fc.assert(
        fc.property(opCaseArb, (c) => {
          const a = replay(ut, c)
          const b = replay(sc, c)
          expect(b.decisions).toEqual(a.decisions)
          expect(b.scores).toEqual(a.scores)
        }),
        { numRuns: 100, seed: 18 }
      )
    }
  })
  it("the sequences exercise what they claim to (routes, errors, stale and unknown ranks, KV exclusions)", () => {
    const sc = makeScored({
      scorers: [
        { scorer: Scorers.tokens, weight: 1 },
        { scorer: gate, weight: 0 }
      ]
    })
    const seen = new Set<string>()
    for (const c of fc.sample(opCaseArb, { numRuns: 150, seed: 16 })) {
      let s = sc.init(c.dpSize)
      let now = 10
      for (const [gap, o] of c.ops) {
        now += gap
        if (o.op === "observe")
          s = sc.observe(
            s,
            o.rows.map((x) => ({ ...x, timestamp: now - x.timestamp! })),
            now
          )
        else if (o.op === "status") s = sc.setStatus(s, o.status)
        else if (o.op === "route") {
          const r = sc.route(s, o.request, now)
          if (r._tag !== "Routed") {
            seen.add(r.reason)
            continue
          }
          s = r.state
          const d = r.explanation.details ?? {}
          if ((r.explanation.stale ?? []).length > 0) seen.add("stale")
          if ((d["unknown"] as Array<number> | undefined)?.length) seen.add("unknown")
          if ((d["kvInfeasible"] as Array<number> | undefined)?.length) seen.add("kvInfeasible")
          if ((d["excluded"] as Array<number> | undefined)?.length) seen.add("excluded")
          seen.add("routed")
        }
      }
    }
    expect([...seen].sort()).toEqual(
      [
        "AllRanksUnavailable",
        // an id routed again while still in flight (the sequences reuse ids)
        "InvalidInput",
        "InvalidRoutedRank",
        "excluded",
        "kvInfeasible",
        "routed",
        "stale",
        "unknown"
      ].sort()
    )
  })
})
