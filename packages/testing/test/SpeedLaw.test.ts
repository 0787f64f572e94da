import { fc, test as fcTest } from "@fast-check/vitest"
import { findPolicy, ownPolicyConfigs, policyEntries, policyFromConfig } from "@loadledger/policies"
import { describe, expect, it } from "vitest"
import { checkSpeedLaw, speedLawPolicies } from "../src/index.js"

describe("speed law", () => {
  it.each(speedLawPolicies)("%s: a rank at 0.5 gets about its share, and it returns", (name) => {
    const r = checkSpeedLaw(findPolicy(name)!.make({}), { dpSize: 4, slowRank: 2, speed: 0.5 })
    expect(r.violation).toBeUndefined()
    expect(r.proportional).toBeCloseTo(0.5 / 3.5, 10)
    expect(r.slowShare).toBeGreaterThan(0.1)
    expect(r.slowShare).toBeLessThan(0.18)
    expect(r.recoveredShare).toBeGreaterThan(0.22)
  })

  fcTest.prop([fc.integer({ min: 2, max: 8 }), fc.double({ min: 0.3, max: 0.8, noNaN: true }), fc.nat()], {
    numRuns: 15
  })("speed-aware obeys it for any group size, speed and slow rank", (dpSize, speed, k) => {
    const r = checkSpeedLaw(findPolicy("speed-aware")!.make({}), { dpSize, slowRank: k % dpSize, speed })
    expect(r.violation).toBeUndefined()
  })

  it("the speed term around a token balancer (ledger-balanced, token units) obeys it too", () => {
    const p = policyFromConfig({
      ...ownPolicyConfigs["ledger-balanced"],
      name: "lb+speed",
      wrappers: ["speed"]
    })
    if ("_tag" in p) throw new Error(p.message)
    for (const [dpSize, speed] of [
      [4, 0.5],
      [8, 0.3],
      [3, 0.7]
    ] as const) {
      const r = checkSpeedLaw(p, { dpSize, slowRank: 1, speed })
      expect(r.violation).toBeUndefined()
    }
  })

  it("upstream policies are outside it: they do not see speed (round-robin and total-tokens keep the fair share)", () => {
    for (const name of ["round-robin", "total-tokens"]) {
      const r = checkSpeedLaw(findPolicy(name)!.make({}), { dpSize: 4, slowRank: 1, speed: 0.5 })
      expect(r.violation).toBe("not-lower")
      expect(r.slowShare).toBeCloseTo(0.25, 1)
    }
    // the law's list holds own policies only
    for (const name of speedLawPolicies)
      expect(policyEntries().find((e) => e.name === name)?.reference).toBe(false)
  })
})
