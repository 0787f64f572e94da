// The carry law over the whole registry: a state rebuilt with the requests in flight charged again
// (chargeInFlight, as the live router's PolicyView) steers like the state never rebuilt; the
// policies that break it are listed exactly, and SGLang's controller methods, fixed by their
// `charge`, hold it.
import { findPolicy, type Policy, policyEntries, totalRequests, totalTokens } from "@loadledger/policies"
import { describe, expect, it } from "vitest"
import { carryLawExceptions, carryViolations } from "../src/index.js"

describe("in-flight work survives a rebuilt policy state", () => {
  it("holds for every registered policy but the listed exceptions", () => {
    const breaking = policyEntries()
      .filter((e) => carryViolations(e.make({ seed: 1 })).length > 0)
      .map((e) => e.name)
    expect(breaking).toEqual(carryLawExceptions.map((x) => x.policy))
    expect(policyEntries().length - breaking.length).toBeGreaterThanOrEqual(50)
  })

  it("SGLang's controller methods hold it through `charge`, and broke it through the pinned route (upstream)", () => {
    for (const name of ["round-robin", "total-requests", "total-tokens"]) {
      const p = findPolicy(name)!.make({})
      expect(p.charge).toBeDefined()
      expect(carryViolations(p)).toEqual([])
      // without the charge the pinned route is upstream's: no counter, no budget change
      expect(carryViolations({ ...p, charge: undefined })[0]).toEqual({
        policy: name,
        dpSize: 2,
        held: [0],
        kept: 1,
        chose: 0
      })
    }
  })

  it("a charge is made after the refresh its placement would make, so the next snapshot of the same time keeps it", () => {
    const rows = [0, 1].map((dpRank) => ({
      dpRank,
      timestamp: 5,
      numRunningReqs: dpRank === 0 ? 0 : 1,
      numWaitingReqs: 0,
      numTotalTokens: dpRank === 0 ? 0 : 100
    }))
    for (const p of [totalRequests, totalTokens] as ReadonlyArray<Policy<unknown>>) {
      let s = p.observe(p.init(2), rows, 1)
      for (const id of ["a", "b"]) {
        const c = p.charge!(s, { requestId: id, inputLength: 100, routedDpRank: 0 }, 1)
        expect(c._tag === "Routed" && c.rank).toBe(0)
        if (c._tag === "Routed") s = c.state
      }
      // rank 0: 0 reported + 2 carried > rank 1: 1 reported; a later refresh of the same snapshot keeps it
      const r = p.route(s, { requestId: "c", inputLength: 100 }, 2)
      expect(r._tag === "Routed" && r.rank).toBe(1)
    }
  })

  it("a charge on a rank outside the state is refused by name, as a pinned route", () => {
    const c = totalRequests.charge!(
      totalRequests.init(2),
      {
        requestId: "a",
        inputLength: 1,
        routedDpRank: 2
      },
      1
    )
    expect(c._tag === "PolicyError" && [c.reason, c.field]).toEqual(["InvalidRoutedRank", "routedDpRank"])
  })
})
