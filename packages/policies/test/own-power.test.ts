import { policyLaws } from "@loadledger/testing"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { makePowerOfChoices, type PowerOfChoicesState, Scorers } from "../src/index.js"
import {
  chargedRequestsOf,
  chargedTokensOf,
  chargeLedger,
  emptyLedger,
  finishLedger,
  type LedgerState,
  ledgerHolds,
  ledgerRankOf,
  observeLedger
} from "../src/own/internal/InflightCharges.js"
import { idle, routed } from "./support/routed.js"

type LedgerOp =
  | { readonly op: "charge"; readonly id: number; readonly rank: number; readonly tokens: number }
  | { readonly op: "finish"; readonly ids: ReadonlyArray<number> }
  | { readonly op: "observe"; readonly ranks: ReadonlyArray<number>; readonly lag: number }

const N = 4
const ledgerOpArb: fc.Arbitrary<LedgerOp> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant("charge" as const),
      id: fc.nat({ max: 7 }),
      rank: fc.nat({ max: N - 1 }),
      // a tenth of a token now and then: inexact sums, recounted in routing order
      tokens: fc.oneof(
        fc.nat({ max: 5000 }),
        fc.nat({ max: 50 }).map((k) => k / 10)
      )
    })
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("finish" as const),
      ids: fc.array(fc.nat({ max: 9 }), { maxLength: 3 })
    })
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("observe" as const),
      ranks: fc.subarray([0, 1, 2, 3]),
      lag: fc.constantFrom(0, 0.003, 0.01)
    })
  }
)

/** The specification: every held request in routing order, each live until a snapshot includes it. */
interface ModelHeld {
  readonly id: string
  readonly rank: number
  readonly tokens: number
  readonly at: number
  readonly live: boolean
}

const modelStep = (m: ReadonlyArray<ModelHeld>, o: LedgerOp, now: number): ReadonlyArray<ModelHeld> => {
  if (o.op === "charge") {
    const id = `q${o.id}`
    return [...m.filter((h) => h.id !== id), { id, rank: o.rank, tokens: o.tokens, at: now, live: true }]
  }
  if (o.op === "finish") return m.filter((h) => !o.ids.some((k) => `q${k}` === h.id))
  return m.map((h) => (o.ranks.includes(h.rank) && h.at < now - o.lag ? { ...h, live: false } : h))
}

const ledgerStep = (e: LedgerState, o: LedgerOp, now: number): LedgerState => {
  if (o.op === "charge")
    return chargeLedger(e, o.rank, {
      requestId: `q${o.id}`,
      routedAtSeconds: now,
      requests: 2,
      tokens: o.tokens
    })
  if (o.op === "finish")
    return finishLedger(
      e,
      o.ids.map((k) => `q${k}`)
    )
  return observeLedger(
    e,
    o.ranks.map((r) => idle(r, { timestamp: now - o.lag })),
    0,
    now
  )
}

describe("the in-flight ledger (one rerooted store)", () => {
  it("every version answers as its own copy, whichever versions were used since", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(ledgerOpArb, fc.nat()), { maxLength: 60 }), (ops) => {
        const versions: Array<LedgerState> = [emptyLedger(N)]
        const models: Array<ReadonlyArray<ModelHeld>> = [[]]
        const check = (j: number) => {
          const m = models[j]!
          for (let r = 0; r < N; r++) {
            let t = 0
            for (const h of m) if (h.live && h.rank === r) t += h.tokens
            expect(chargedTokensOf(versions[j]!, r)).toBe(t)
            expect(chargedRequestsOf(versions[j]!, r)).toBe(
              2 * m.filter((h) => h.live && h.rank === r).length
            )
          }
          for (let k = 0; k < 10; k++) {
            const h = m.find((x) => x.id === `q${k}`)
            expect(ledgerHolds(versions[j]!, `q${k}`)).toBe(h !== undefined)
            expect(ledgerRankOf(versions[j]!, `q${k}`)).toBe(h?.rank)
          }
        }
        let now = 1
        for (const [o, from] of ops) {
          now += 0.002
          // grow from an older version now and then (the store reroots to it)
          const i = from % 3 === 0 ? from % versions.length : versions.length - 1
          versions.push(ledgerStep(versions[i]!, o, now))
          models.push(modelStep(models[i]!, o, now))
          check(versions.length - 1)
          check(from % versions.length)
        }
        for (let j = versions.length - 1; j >= 0; j--) check(j)
      }),
      { numRuns: 200, seed: 5 }
    )
  })
})

describe("makePowerOfChoices", () => {
  it("scores d + 1 candidates per route, whatever the number of ranks", () => {
    const sizes: Array<number> = []
    const spy = Scorers.perRank("tokens", (v, r) => v.tokens(r))
    const counting = {
      ...spy,
      costs: (v: Parameters<typeof spy.costs>[0], ranks: ReadonlyArray<number>, out: Array<number>) => {
        sizes.push(ranks.length)
        spy.costs(v, ranks, out)
      }
    }
    const p = makePowerOfChoices({ choices: 3, scorers: [{ scorer: counting, weight: 1 }] })
    const rows = Array.from({ length: 4096 }, (_, r) => idle(r, { numTotalTokens: (r * 7919) % 5000 }))
    let s = p.observe(p.init(4096), rows, 1)
    for (let i = 0; i < 20; i++) s = routed(p.route(s, { requestId: `r${i}`, inputLength: 10 }, 1)).state
    expect(sizes).toEqual(new Array(20).fill(4))
  })
  it("a burst on equal snapshots goes round the ranks: the cursor's rank wins every tie", () => {
    const p = makePowerOfChoices({ seed: 3 })
    const n = 300
    let s: PowerOfChoicesState = p.observe(
      p.init(n),
      Array.from({ length: n }, (_, r) => idle(r)),
      1
    )
    const counts = new Array<number>(n).fill(0)
    for (let i = 0; i < 2 * n + 7; i++) {
      const r = routed(p.route(s, { requestId: `r${i}`, inputLength: 64 }, 1 + i * 1e-5))
      counts[r.rank]! += 1
      s = r.state
    }
    expect(Math.max(...counts) - Math.min(...counts)).toBe(1)
  })
  it("draws find the light ranks: half the group heavy, most requests go to the light half", () => {
    const p = makePowerOfChoices({ seed: 11 })
    const n = 1024
    const rows = Array.from({ length: n }, (_, r) => idle(r, { numTotalTokens: r < n / 2 ? 1_000_000 : 0 }))
    let s = p.observe(p.init(n), rows, 1)
    let light = 0
    for (let i = 0; i < 1000; i++) {
      const r = routed(p.route(s, { requestId: `r${i}`, inputLength: 64 }, 1 + i * 1e-5))
      if (r.rank >= n / 2) light++
      s = r.state
    }
    // the cursor's rank is heavy half the time; then two draws both miss the light half with p = 1/4
    expect(light).toBeGreaterThan(850)
  })
  it("KV: when no drawn rank holds the prompt but one rank does, a full scan finds it", () => {
    const p = makePowerOfChoices({ seed: 1 })
    const n = 200
    const rows = Array.from({ length: n }, (_, r) => idle(r, { kvAvailableTokens: r === 137 ? 9000 : 100 }))
    const r = routed(p.route(p.observe(p.init(n), rows, 1), { requestId: "a", inputLength: 5000 }, 1))
    expect(r.rank).toBe(137)
    expect(r.explanation.details?.["fallback"]).toBe("no drawn rank holds the prompt in its free KV")
    // and a prompt no rank can hold is placed by the scorers alone, without a scan
    const big = routed(p.route(p.observe(p.init(n), rows, 1), { requestId: "b", inputLength: 50_000 }, 1))
    expect(big.explanation.details?.["fallback"]).toBeUndefined()
  })
  it("unhealthy ranks are never chosen, even when every drawn rank is unhealthy", () => {
    const p = makePowerOfChoices({ seed: 2 })
    const n = 100
    let s = p.observe(
      p.init(n),
      Array.from({ length: n }, (_, r) => idle(r)),
      1
    )
    s = p.setStatus(
      s,
      Array.from({ length: n }, (_, r) => r === 42)
    )
    for (let i = 0; i < 5; i++) {
      const r = routed(p.route(s, { requestId: `r${i}`, inputLength: 1 }, 1))
      expect(r.rank).toBe(42)
      s = r.state
    }
    const none = p.route(p.setStatus(s, new Array(n).fill(false)), { requestId: "x", inputLength: 1 }, 1)
    expect(none._tag === "PolicyError" && none.reason).toBe("AllRanksUnavailable")
  })
  it("front ends draw differently (the seed is mixed with clientIndex) and start at their offset", () => {
    const first = (clientIndex: number) => {
      const p = makePowerOfChoices({ seed: 9, clientCount: 4, clientIndex })
      const r = routed(p.route(p.init(1000), { requestId: "a", inputLength: 1 }, 0))
      return r.explanation.details?.["candidates"] as Array<number>
    }
    expect(first(0)[0]).toBe(0)
    expect(first(2)[0]).toBe(500)
    expect(first(0).slice(1)).not.toEqual(first(1).slice(1))
  })
  it("a pinned request is charged and does not move the cursor; bad options are typed errors", () => {
    const p = makePowerOfChoices()
    const a = routed(p.route(p.init(64), { requestId: "a", inputLength: 10, routedDpRank: 5 }, 0))
    expect(a.rank).toBe(5)
    expect(a.state.cursor).toBe(0)
    expect(p.route(p.init(64), { requestId: "a", inputLength: 10, routedDpRank: 64 }, 0)).toMatchObject({
      reason: "InvalidRoutedRank"
    })
    expect(
      makePowerOfChoices({ choices: 0 }).route(p.init(4), { requestId: "a", inputLength: 1 }, 0)
    ).toMatchObject({
      reason: "InvalidInput",
      field: "choices"
    })
  })
  it("holds the laws where it samples (9 to 40 ranks, d = 2)", () => {
    const laws = policyLaws(makePowerOfChoices({ seed: 4 }), {
      dpSize: fc.integer({ min: 9, max: 40 }),
      maxRequests: 30
    })
    for (const law of [
      "validRankOrTypedError",
      "deterministic",
      "healthyRanksOnly",
      "burstSpread",
      "monotoneInLoad",
      "unknownNeverAttractive"
    ] as const)
      fc.assert(laws[law] as fc.IPropertyWithHooks<[unknown]>, { numRuns: 40, seed: 6 })
  })
})
