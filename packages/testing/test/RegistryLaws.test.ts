import { policyEntries } from "@loadledger/policies"
import { registryLawCases } from "@loadledger/testing"
import { describe, it } from "vitest"

// Every law of @loadledger/testing over every registered policy; exceptions come from the one table
// (packages/testing/src/LawExceptions.ts), each checked at its stated counterexample.
describe("policy laws over the registry", () => {
  for (const c of registryLawCases(policyEntries(), undefined, { numRuns: 60 }))
    it(`${c.policy}: ${c.law} ${c.expect === "holds" ? "holds" : `is broken on purpose (${c.reason})`}`, c.check)
})
