import { policyLaws } from "@loadledger/testing"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { makePowerOfChoices, type PowerOfChoicesState, Scorers } from "../src/index.js"
import { getTrie } from "../src/own/internal/HashTrie.js"
import {
  chargeLedger,
  emptyLedger,
  finishLedger,
  type LedgerState,
  observeLedger,
  setLedgerStatus
} from "../src/own/internal/InflightCharges.js"
import {
  fold,
  type LazyLedger,
  lazyCharge,
  lazyChargedRequests,
  lazyChargedTokens,
  lazyFinish,
  lazyObserve,
  lazyOf,
  lazySetStatus
} from "../src/own/internal/LazyLedger.js"
import { idle, routed } from "./support/routed.js"

type LedgerOp =
  | { readonly op: "charge"; readonly id: number; readonly rank: number; readonly tokens: number }
  | { readonly op: "finish"; readonly ids: ReadonlyArray<number> }
  | { readonly op: "observe"; readonly ranks: ReadonlyArray<number>; readonly lag: number }
  | { readonly op: "status"; readonly status: ReadonlyArray<boolean> }

const N = 5
const ledgerOpArb: fc.Arbitrary<LedgerOp> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant("charge" as const),
      id: fc.nat({ max: 9 }),
      rank: fc.nat({ max: N - 1 }),
      tokens: fc.nat({ max: 5000 })
    })
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("finish" as const),
      ids: fc.array(fc.nat({ max: 11 }), { maxLength: 3 })
    })
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("observe" as const),
      ranks: fc.subarray([0, 1, 2, 3, 4]),
      lag: fc.constantFrom(0, 0.003, 0.01)
    })
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("status" as const),
      status: fc.array(fc.boolean(), { minLength: N, maxLength: N })
    })
  }
)

/** Apply one op to the eager ledger and to the lazy one, at time `now`. */
const step = (e: LedgerState, l: LazyLedger, o: LedgerOp, now: number): [LedgerState, LazyLedger] => {
  if (o.op === "charge") {
    const c = { requestId: `q${o.id}`, routedAtSeconds: now, requests: 2, tokens: o.tokens }
    return [chargeLedger(e, o.rank, c), lazyCharge(l, o.rank, c)]
  }
  if (o.op === "finish") {
    const ids = o.ids.map((k) => `q${k}`)
    return [finishLedger(e, ids), lazyFinish(l, ids)]
  }
  if (o.op === "observe") {
    const rows = o.ranks.map((r) => idle(r, { timestamp: now - o.lag }))
    return [observeLedger(e, rows, 0, now), lazyObserve(l, rows, 0, now)]
  }
  return [setLedgerStatus(e, o.status), lazySetStatus(l, o.status)]
}

describe("LazyLedger: the in-flight charges with a batched log", () => {
  it("reads and folds to exactly what the same operations applied one by one give", () => {
    for (const batch of [2, 3, 1000]) {
      fc.assert(
        fc.property(fc.array(ledgerOpArb, { maxLength: 80 }), (ops) => {
          let e = emptyLedger(N)
          let l = lazyOf(emptyLedger(N), batch)
          let now = 1
          for (const o of ops) {
            now += 0.002
            ;[e, l] = step(e, l, o, now)
            for (let r = 0; r < N; r++) {
              expect(lazyChargedRequests(l, r)).toBe(e.chargedRequests[r])
              expect(lazyChargedTokens(l, r)).toBe(e.chargedTokens[r])
            }
          }
          const f = fold(l).base
          expect(f.chargedRequests).toEqual(e.chargedRequests)
          expect(f.chargedTokens).toEqual(e.chargedTokens)
          expect(f.healthy).toEqual(e.healthy)
          expect(f.snapshots).toEqual(e.snapshots)
          expect(f.charges.map((c) => c.live)).toEqual(e.charges.map((c) => c.live))
          for (let k = 0; k < 12; k++) {
            const id = `q${k}`
            expect(getTrie(f.byId, id)?.rank).toBe(getTrie(e.byId, id)?.rank)
            expect(getTrie(f.byId, id)?.live.map((h) => [h.rank, h.charge])).toEqual(
              getTrie(e.byId, id)?.live.map((h) => [h.rank, h.charge])
            )
          }
        }),
        { numRuns: 150, seed: 5 }
      )
    }
  })
  it("ids reused while charged (in the folded ledger or in the log) stay exact", () => {
    // q1 on rank 0, folded; q1 again on rank 0 and on rank 1 while in flight, finishes in between
    const ops: Array<LedgerOp> = [
      { op: "charge", id: 1, rank: 0, tokens: 10 },
      { op: "observe", ranks: [], lag: 0 },
      { op: "charge", id: 1, rank: 0, tokens: 20 },
      { op: "finish", ids: [1] },
      { op: "charge", id: 1, rank: 1, tokens: 40 },
      { op: "charge", id: 1, rank: 0, tokens: 80 },
      { op: "finish", ids: [1] },
      // q1's charge of 40 is still live on rank 1 (its owner moved to rank 0 and finished there)
      { op: "charge", id: 1, rank: 1, tokens: 160 },
      { op: "finish", ids: [1, 1] }
    ]
    let e = emptyLedger(N)
    let l = lazyOf(emptyLedger(N), 50)
    let now = 1
    for (const o of ops) {
      now += 0.002
      ;[e, l] = step(e, l, o, now)
      expect([0, 1].map((r) => lazyChargedTokens(l, r))).toEqual([e.chargedTokens[0], e.chargedTokens[1]])
    }
    expect(fold(l).base.chargedTokens).toEqual(e.chargedTokens)
  })
  it("a charge or finish does not copy the ledger's columns until the log folds (every `batch` operations)", () => {
    let l = lazyOf(emptyLedger(64), 8)
    const base = l.base
    for (let i = 0; i < 7; i++)
      l = lazyCharge(l, i, { requestId: `r${i}`, routedAtSeconds: 1, requests: 1, tokens: 10 })
    expect(l.base).toBe(base)
    expect(l.logSize).toBe(7)
    l = lazyFinish(l, ["r0"])
    expect(l.logSize).toBe(0)
    expect(l.base.chargedRequests.slice(0, 8)).toEqual([0, 1, 1, 1, 1, 1, 1, 0])
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
    // and the charges went to the log, not through a copy of the 4096-rank columns
    expect(s.ledger.logSize).toBe(20)
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
