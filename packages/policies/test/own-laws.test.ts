import { policyLaws } from "@loadledger/testing"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  cacheAffinity,
  findPolicy,
  isPolicyError,
  ledgerBalanced,
  makeLedgerBalanced,
  type Policy,
  type RankLoad
} from "../src/index.js"

const ledgerRequests = makeLedgerBalanced({ metric: "requests" })
const ledgerReplica = makeLedgerBalanced({ clientCount: 3, clientIndex: 2 })
const policies: ReadonlyArray<readonly [string, Policy<unknown>]> = [
  ["ledger-balanced", ledgerBalanced as unknown as Policy<unknown>],
  ["ledger-balanced (requests)", ledgerRequests as unknown as Policy<unknown>],
  ["ledger-balanced (replica 2 of 3)", ledgerReplica as unknown as Policy<unknown>],
  ["cache-affinity", cacheAffinity as unknown as Policy<unknown>]
]

describe("policyLaws on loadledger's own policies", () => {
  for (const [name, policy] of policies) {
    const laws = policyLaws(policy)
    it(`${name}: valid rank or typed error, deterministic, healthy ranks only`, () => {
      fc.assert(laws.validRankOrTypedError, { numRuns: 200 })
      fc.assert(laws.deterministic, { numRuns: 100 })
      fc.assert(laws.healthyRanksOnly, { numRuns: 200 })
    })
    it(`${name}: burst against equal stale snapshots spreads with max - min <= 1`, () => {
      fc.assert(laws.burstSpread, { numRuns: 200 })
    })
    it(`${name}: adding load to a rank never makes it preferred`, () => {
      fc.assert(laws.monotoneInLoad, { numRuns: 300 })
    })
    it(`${name}: breaks permutation equivariance on purpose (ties go to the lowest index)`, () => {
      expect(fc.check(laws.permutationEquivariant, { numRuns: 300 }).failed).toBe(true)
    })
  }

  it("counterexample for equivariance: two idle ranks, relabelled, both choose rank 0", () => {
    const idle = (dpRank: number): RankLoad => ({
      dpRank,
      timestamp: 1,
      numRunningReqs: 0,
      numWaitingReqs: 0,
      numTotalTokens: 0
    })
    for (const [, p] of policies) {
      const s = p.observe(p.init(2), [idle(0), idle(1)], 1)
      const r = p.route(s, { requestId: "a", inputLength: 1 }, 1)
      // the identical situation under the relabelling 0 <-> 1 must give rank 1 for equivariance;
      // every own policy breaks the tie by index (from its start offset), so the label decides
      expect(isPolicyError(r)).toBe(false)
      if (r._tag === "Routed") expect(r.rank).toBe(p === (ledgerReplica as unknown) ? 1 : 0)
    }
  })

  it("cache-affinity with sessions, prefixes and KV usage: valid, deterministic, healthy only, monotone", () => {
    const laws = policyLaws(cacheAffinity as unknown as Policy<unknown>, {
      request: fc.record({
        requestId: fc.uuid(),
        inputLength: fc.integer({ min: 1, max: 8192 }),
        sessionId: fc.option(fc.constantFrom("s1", "s2", "s3"), { nil: undefined }),
        prefixHashes: fc.array(fc.constantFrom("a", "b", "c", "d"), { maxLength: 4 })
      }),
      load: (dpRank) =>
        fc.record({
          dpRank: fc.constant(dpRank),
          timestamp: fc.integer({ min: 1000, max: 1_000_000 }).map((ms) => ms / 1000),
          numRunningReqs: fc.nat({ max: 64 }),
          numWaitingReqs: fc.nat({ max: 64 }),
          numTotalTokens: fc.nat({ max: 200_000 }),
          kvCacheUsage: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined })
        })
    })
    fc.assert(laws.validRankOrTypedError, { numRuns: 200 })
    fc.assert(laws.deterministic, { numRuns: 100 })
    fc.assert(laws.healthyRanksOnly, { numRuns: 200 })
    fc.assert(laws.monotoneInLoad, { numRuns: 300 })
  })
})

describe("KV-pressure law (S07) for ledger-balanced", () => {
  const row = (dpRank: number) =>
    fc.record({
      dpRank: fc.constant(dpRank),
      timestamp: fc.constant(1),
      numRunningReqs: fc.nat({ max: 64 }),
      numWaitingReqs: fc.nat({ max: 128 }),
      numTotalTokens: fc.nat({ max: 200_000 }),
      kvCacheUsage: fc.option(fc.constantFrom(0.5, 0.89, 0.9, 0.95, 0.985, 0.99, 1), { nil: undefined })
    })
  it("never adds to a rank with kv >= 0.99 and waiting > 0 while a healthy rank has kv < 0.9", () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 8 })
          .chain((n) =>
            fc.tuple(
              fc.tuple(...Array.from({ length: n }, (_, r) => row(r))),
              fc.array(fc.boolean(), { minLength: n, maxLength: n }),
              fc.integer({ min: 1, max: 40 }),
              fc.constantFrom("tokens" as const, "requests" as const)
            )
          ),
        ([loads, status, k, metric]) => {
          const p = makeLedgerBalanced({ metric })
          let s = p.setStatus(p.observe(p.init(loads.length), loads, 1), status)
          for (let i = 0; i < k; i++) {
            const v = p.view(s, 1.01)
            const room = v.some((x, r) => status[r] && x.kvCacheUsage !== undefined && x.kvCacheUsage < 0.9)
            const out = p.route(s, { requestId: `r${i}`, inputLength: 100 }, 1.01)
            if (out._tag !== "Routed") return isPolicyError(out) && status.every((h) => !h)
            const x = v[out.rank]!
            if (room && x.kvCacheUsage !== undefined && x.kvCacheUsage >= 0.99 && x.waiting > 0) return false
            s = out.state
          }
          return true
        }
      ),
      { numRuns: 300 }
    )
  })
})

describe("registry", () => {
  it("registers the own policies by name with reference: false", () => {
    for (const name of ["ledger-balanced", "ledger-balanced-requests", "cache-affinity"]) {
      const e = findPolicy(name)
      expect(e?.reference).toBe(false)
      const p = e!.make({ clientCount: 2, clientIndex: 1 })
      const r = p.route(p.init(4), { requestId: "a", inputLength: 1 }, 0)
      expect(r._tag).toBe("Routed")
    }
    const replica = findPolicy("ledger-balanced")!.make({ clientCount: 2, clientIndex: 1 })
    const r = replica.route(replica.init(4), { requestId: "a", inputLength: 1 }, 0)
    expect(r._tag === "Routed" && r.rank).toBe(2) // start offset floor(4 * 1 / 2)
  })
})
