/** Pick a loadledger policy by name (the @loadledger/policies registry) for the example router. */
import { findPolicy, type Policy, policyEntries } from "@loadledger/policies"

/** The policy named `name`, or an error message listing the registered names. */
export const pickPolicy = (name: string, seed = 1): Policy<unknown> | string => {
  const entry = findPolicy(name)
  if (entry !== undefined) return entry.make({ seed })
  return `unknown policy "${name}"; registered: ${policyEntries()
    .map((e) => e.name)
    .join(", ")}`
}
