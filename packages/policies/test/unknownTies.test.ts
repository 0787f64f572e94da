// Unknown is never attractive, ties included (the fault a user reported: an unknown row won a tie
// against an equal known one). Two ranks, one known idle, the other with its load hidden, and the
// rotating cursor (or the front end's start offset) pointing at the hidden one: every own policy
// chooses the known rank; upstream reproductions keep upstream's scan order.
import {
  findPolicy,
  makeVllmLb,
  type Policy,
  policyEntries,
  type RankLoad,
  type RouteRequest
} from "@loadledger/policies"
import { describe, expect, it } from "vitest"

const idle = (dpRank: number): RankLoad => ({
  dpRank,
  timestamp: 1,
  numRunningReqs: 0,
  numWaitingReqs: 0,
  numTotalTokens: 0,
  kvCacheUsage: 0,
  numWaitingUncachedTokens: 0
})
const without = (row: RankLoad, field: keyof RankLoad): RankLoad => {
  const out: Record<string, unknown> = { ...row }
  delete out[field]
  return out as unknown as RankLoad
}
// each way a load can be hidden: an `unknown` row, a missing count, a missing KV gauge
const hidings: ReadonlyArray<readonly [string, (dpRank: number) => RankLoad]> = [
  ["unknown row", (dpRank) => ({ dpRank, timestamp: 1, unknown: { reason: "not-reported", message: "t" } })],
  ["no numRunningReqs", (dpRank) => without(idle(dpRank), "numRunningReqs")],
  ["no numWaitingReqs", (dpRank) => without(idle(dpRank), "numWaitingReqs")],
  ["no kvCacheUsage", (dpRank) => without(idle(dpRank), "kvCacheUsage")]
]
const request: RouteRequest = { requestId: "q", inputLength: 16 }

/** The first choice among two ranks where `hidden` is hidden and the other is known idle. */
const firstChoice = (p: Policy<unknown>, hidden: number, hide: (dpRank: number) => RankLoad) => {
  const loads = [0, 1].map((r) => (r === hidden ? hide(r) : idle(r)))
  const out = p.route(p.observe(p.init(2), loads, 1), request, 1.001)
  if (out._tag !== "Routed") throw new Error(out.message)
  return out.rank
}

describe("unknown never wins a tie", () => {
  const own = policyEntries().filter((e) => !e.reference)
  it("every own policy routes to the known idle rank, the cursor at the hidden one", () => {
    expect(own.map((e) => e.name)).toContain("ledger-balanced")
    for (const entry of own)
      for (const [how, hide] of hidings) {
        // the cursor starts at rank 0; a second front end (client 1 of 2) starts its scan at rank 1
        expect(firstChoice(entry.make({}), 0, hide), `${entry.name}, rank 0 ${how}`).toBe(1)
        expect(
          firstChoice(entry.make({ clientCount: 2, clientIndex: 1 }), 1, hide),
          `${entry.name}, rank 1 ${how}, client 1 of 2`
        ).toBe(0)
      }
  })

  it("with both ranks hidden alike, the cursor decides as before (no rank is preferred for being unknown)", () => {
    for (const entry of own)
      for (const [how, hide] of hidings) {
        const p = entry.make({})
        const out = p.route(p.observe(p.init(2), [hide(0), hide(1)], 1), request, 1.001)
        expect(out._tag === "Routed" && out.rank, `${entry.name}, both ${how}`).toBe(0)
      }
  })

  it("vllm-kv-pressure keeps upstream's scan order; unknownLosesTies (the own vLLM entries) lets the known rank win", () => {
    const upstream = findPolicy("vllm-kv-pressure")!.make({})
    expect(firstChoice(upstream, 0, hidings[0]![1])).toBe(0)
    const knownFirst = makeVllmLb({ unknownLosesTies: true }) as Policy<unknown>
    expect(firstChoice(knownFirst, 0, hidings[0]![1])).toBe(1)
    // the re-route keeps the unpinned route's effects: the start index moves on, the chosen row is bumped
    const s = knownFirst.observe(knownFirst.init(2), [hidings[0]![1](0), idle(1)], 1)
    const out = knownFirst.route(s, request, 1.001)
    const next =
      out._tag === "Routed" ? knownFirst.route(out.state, { ...request, requestId: "q2" }, 1.002) : out
    // rank 1 now has one waiting request locally: the unknown rank 0 (imputed idle) is strictly less loaded
    expect(next._tag === "Routed" && next.rank).toBe(0)
  })
})

// A user's report: a row with a malformed count (negative, NaN, infinite, a string), next to three
// busy known ranks, took the request on the counts it did report. A malformed row is corrupt: none
// of its fields is taken at its word (each is the busiest known), so every own policy sends the
// request to a known rank. (A partial row, missing a count, keeps the counts it did report: issue 11.)
describe("a malformed row is never preferred to busy known ranks", () => {
  const busy = (dpRank: number): RankLoad => ({
    dpRank,
    timestamp: 10,
    numRunningReqs: 30,
    numWaitingReqs: 5,
    numTotalTokens: 90_000,
    kvCacheUsage: 0.5
  })
  // [case, row fields, read by policies that do not read token counts (the vLLM balancer's family)]
  const bad: ReadonlyArray<readonly [string, Record<string, unknown>, boolean]> = [
    ["numRunningReqs -5", { numRunningReqs: -5, numWaitingReqs: 0, numTotalTokens: 0 }, true],
    ["numRunningReqs a string", { numRunningReqs: "0", numWaitingReqs: 0, numTotalTokens: 0 }, true],
    [
      "numWaitingReqs Infinity",
      { numRunningReqs: 0, numWaitingReqs: Number.POSITIVE_INFINITY, numTotalTokens: 0 },
      true
    ],
    ["numTotalTokens NaN", { numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: Number.NaN }, false]
  ]
  for (const entry of policyEntries().filter((e) => !e.reference))
    it(`${entry.name}`, () => {
      const countsOnly = entry.name.startsWith("vllm-kv-pressure")
      for (const [name, fields, forAll] of bad) {
        if (countsOnly && !forAll) continue
        const p = entry.make({ maxRunningRequests: 64 })
        const rows = [
          { dpRank: 0, timestamp: 10, ...fields } as unknown as RankLoad,
          busy(1),
          busy(2),
          busy(3)
        ]
        const r = p.route(p.observe(p.init(4), rows, 10), { requestId: "m", inputLength: 1000 }, 10)
        expect(r._tag === "Routed" && r.rank, `${entry.name}: ${name}`).not.toBe(0)
      }
    })
})
