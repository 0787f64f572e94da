/** Pick a loadledger policy by name for the example router. */
import {
  findPolicy,
  type Policy,
  policyEntries,
  roundRobin,
  totalRequests,
  totalTokens
} from "@loadledger/policies"

// Used only when the registry has no entry of that name (the registry is filled by the policy modules).
const builtIn: Record<string, Policy<unknown>> = {
  "round-robin": roundRobin as Policy<unknown>,
  "total-requests": totalRequests as Policy<unknown>,
  "total-tokens": totalTokens as Policy<unknown>
}

/** The policy named `name`, or an error message listing the names available. */
export const pickPolicy = (name: string, seed = 1): Policy<unknown> | string => {
  const entry = findPolicy(name)
  if (entry !== undefined) return entry.make({ seed })
  const p = builtIn[name]
  if (p !== undefined) return p
  const names = [...new Set([...policyEntries().map((e) => e.name), ...Object.keys(builtIn)])]
  return `unknown policy "${name}"; available: ${names.join(", ")}`
}
