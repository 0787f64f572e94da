/**
 * The registry's options rule in one place: each entry's `make` runs `checkPolicyOptions` first;
 * refused options give the entry's default policy with a `route` that returns the error.
 *
 * @internal
 */
import { checkPolicyOptions } from "../Options.js"
import type { Policy, PolicyError } from "../Policy.js"
import type { PolicyEntry } from "../Registry.js"

/**
 * `policy` with every `route` answered by `error`; the rest (`init`, `observe`, `finish`,
 * `setStatus`, and any extra member such as `view`) is the policy's own. @internal
 */
const refusing = (policy: Policy<unknown>, error: PolicyError): Policy<unknown> => ({
  ...policy,
  route: () => error
})

/**
 * The same entries, each `make` checking its options first (`make` with good options is the
 * entry's own `make`: nothing is added to a route). @internal
 */
export const checkedEntries = (entries: ReadonlyArray<PolicyEntry>): ReadonlyArray<PolicyEntry> =>
  entries.map((entry) => ({
    ...entry,
    make: (options) => {
      const bad = checkPolicyOptions(options)
      return bad === undefined ? entry.make(options) : refusing(entry.make({}), bad)
    }
  }))
