import { isPolicyError, makeVllmLb, type RankLoad, vllmKvPressure } from "@loadledger/policies"
import { policyLaws } from "@loadledger/testing"
import fc from "fast-check"
import { describe, expect, it } from "vitest"

// Loads with a KV gauge too, so the KV penalty takes part in every law.
const kvLoad = (dpRank: number): fc.Arbitrary<RankLoad> =>
  fc.record({
    dpRank: fc.constant(dpRank),
    timestamp: fc.integer({ min: 1000, max: 1_000_000 }).map((ms) => ms / 1000),
    numRunningReqs: fc.nat({ max: 64 }),
    numWaitingReqs: fc.nat({ max: 64 }),
    numTotalTokens: fc.nat({ max: 200_000 }),
    kvCacheUsage: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined })
  })

describe("policyLaws for the vLLM DP balancer", () => {
  for (const [label, policy] of [
    ["vllm-kv-pressure (upstream exact)", vllmKvPressure],
    ["vllm-kv-pressure, 3 front ends, index 1", makeVllmLb({ clientCount: 3, clientIndex: 1 })],
    ["vllm-kv-pressure-kv-guard-stale", makeVllmLb({ staleAfterSeconds: 1, kvSaturationGuard: true })]
  ] as const) {
    describe(label, () => {
      const laws = policyLaws(policy, { load: kvLoad })
      it("validRankOrTypedError", () => fc.assert(laws.validRankOrTypedError))
      it("deterministic", () => fc.assert(laws.deterministic))
      it("healthyRanksOnly (unhealthy ranks are skipped by the scan; a loadledger addition)", () =>
        fc.assert(laws.healthyRanksOnly))
      it("burstSpread (local bump + rotating start index)", () => fc.assert(laws.burstSpread))
      it("monotoneInLoad", () => fc.assert(laws.monotoneInLoad))
      it("permutationEquivariant is broken on purpose: ties go to the rotating start index", () => {
        expect(fc.check(laws.permutationEquivariant).failed).toBe(true)
      })
    })
  }

  it("permutationEquivariant counterexample: 2 idle ranks, one request goes to the start index either way", () => {
    // Relabelling ranks 0 <-> 1 should move the decision to rank 1; the scan starts at
    // floor(N * clientIndex / clientCount) = 0 in both labelings, so it stays on rank 0.
    const p = vllmKvPressure
    const idle = (dpRank: number): RankLoad => ({
      dpRank,
      timestamp: 1,
      numRunningReqs: 0,
      numWaitingReqs: 0,
      numTotalTokens: 0,
      kvCacheUsage: 0
    })
    const original = p.route(
      p.observe(p.init(2), [idle(0), idle(1)], 1),
      { requestId: "a", inputLength: 1 },
      1
    )
    // the relabelled scenario (pi = [1, 0]) has the same loads, so the same decision, not pi(0) = 1
    const relabelled = p.route(
      p.observe(p.init(2), [idle(1), idle(0)], 1),
      { requestId: "a", inputLength: 1 },
      1
    )
    expect(!isPolicyError(original) && original.rank).toBe(0)
    expect(!isPolicyError(relabelled) && relabelled.rank).toBe(0)
  })

  it("the KV guard keeps monotoneInLoad: extra waiting on a saturated rank only excludes it", () => {
    const laws = policyLaws(makeVllmLb({ kvSaturationGuard: true }), { load: kvLoad })
    fc.assert(laws.monotoneInLoad, { numRuns: 300 })
  })
})
