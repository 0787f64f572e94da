// The stale-prefix law over the whole registry (smg-project/smg PR #2132): after a rank is removed
// and something takes its place, no placement comes from the removed one's prefix entries. Under the
// live router's removal (a rebuilt state) every policy holds it; under a health change kept in the
// state the breakers are listed exactly, and a deliberately sticky index is caught.
import { findPolicy, policyEntries } from "@loadledger/policies"
import { describe, expect, it } from "vitest"
import { stalePrefixExceptions, stalePrefixViolations } from "../src/index.js"

const violations = policyEntries().map((e) => ({
  name: e.name,
  v: stalePrefixViolations(e.make({ seed: 1 }))
}))

describe("prefix entries do not outlive a removed rank", () => {
  it("every registered policy holds it when the state is rebuilt (the live router's removal)", () => {
    const breaking = violations.filter((x) => x.v.some((v) => v.removal === "rebuilt")).map((x) => x.name)
    expect(breaking).toEqual([])
  })

  it("under a health change kept in the state, exactly the listed policies break it", () => {
    const breaking = violations.filter((x) => x.v.some((v) => v.removal === "status")).map((x) => x.name)
    expect(breaking).toEqual(stalePrefixExceptions.map((x) => x.policy))
    expect(policyEntries().length - breaking.length).toBeGreaterThanOrEqual(40)
  })

  it("the law sees the fault: smg/cache-aware sends the prefix back to the rank that returned", () => {
    const v = stalePrefixViolations(findPolicy("smg/cache-aware")!.make({}))
    expect(v[0]).toEqual({ policy: "smg/cache-aware", dpSize: 2, removal: "status", rank: 0, control: 1 })
  })

  it("policies without a prefix index hold it vacuously", () => {
    for (const name of ["round-robin", "total-tokens", "vllm-kv-pressure"])
      expect(stalePrefixViolations(findPolicy(name)!.make({}))).toEqual([])
  })
})
