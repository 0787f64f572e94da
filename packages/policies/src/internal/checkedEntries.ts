/**
 * The registry's input rules in one place: each entry's `make` runs `checkPolicyOptions` first
 * (refused options give the entry's default policy with a `route` that returns the error), and
 * `init` takes only a `dpSize` that is a safe integer >= 0 (another gives a state whose every
 * `route` is an `InvalidInput` naming `dpSize`; 27 policies threw `RangeError` from inside `init`
 * for 2.5, -1 or NaN, and 7 routed to rank 0 with 2.5); `dpSize` 0 gives a state whose every
 * `route` is `NoRanks` naming `dpSize`, one answer for every entry (25 said `AllRanksUnavailable`
 * naming `status`, vLLM's four `NoRanks` naming `numEngines`).
 *
 * @internal
 */
import { checkPolicyOptions } from "../Options.js"
import { type Policy, type PolicyError, policyError, type RouteRequest } from "../Policy.js"
import type { PolicyEntry } from "../PolicyEntry.js"
import { shownValue } from "./kindOf.js"
import { isRankCount } from "./ranksOf.js"

/**
 * `policy` with every `route` answered by `error`; the rest (`init`, `observe`, `finish`,
 * `setStatus`, and any extra member such as `view`) is the policy's own. @internal
 */
const refusing = (policy: Policy<unknown>, error: PolicyError): Policy<unknown> => ({
  ...policy,
  route: () => error,
  ...(policy.charge !== undefined ? { charge: () => error } : {})
})

/** The state `init` gives for a `dpSize` it refuses: every `route` answers its error. */
class RefusedDpSize {
  constructor(readonly error: PolicyError) {}
}

const isObject = (u: unknown): boolean => typeof u === "object" && u !== null

const notARequest = policyError(
  "InvalidInput",
  "request must be an object { requestId, inputLength, ... }",
  "request"
)

/**
 * `policy` that takes what an untyped caller may pass without throwing: `init` refuses a `dpSize`
 * that is not a safe integer >= 0 (the state is then a `RefusedDpSize`, which `observe`, `finish`
 * and `setStatus` keep and `route` answers with its error); `route` refuses a request that is not
 * an object (`InvalidInput` naming `request`); `observe` drops rows that are not objects and
 * ignores loads that are not a list, `finish` ids that are not strings, `setStatus` a status that
 * is not a list (each of these threw `TypeError` from inside in every policy). Any other call goes
 * to the policy's own members (extra members such as `view` are the policy's own). @internal
 */
const checkingInputs = (policy: Policy<unknown>): Policy<unknown> => ({
  ...policy,
  init: (dpSize) =>
    !isRankCount(dpSize)
      ? new RefusedDpSize(
          policyError("InvalidInput", `dpSize must be an integer >= 0, got ${shownValue(dpSize)}`, "dpSize")
        )
      : dpSize === 0
        ? // no rank: one answer for all 50 (upstream adapters said AllRanksUnavailable, vLLM numEngines)
          new RefusedDpSize(policyError("NoRanks", "the policy has no ranks (dpSize 0)", "dpSize"))
        : policy.init(dpSize),
  observe: (s, loads, now) =>
    s instanceof RefusedDpSize || !Array.isArray(loads)
      ? s
      : policy.observe(s, loads.every(isObject) ? loads : loads.filter(isObject), now),
  route: (s, request, now) =>
    s instanceof RefusedDpSize ? s.error : isObject(request) ? policy.route(s, request, now) : notARequest,
  finish: (s, ids, now) =>
    s instanceof RefusedDpSize || !Array.isArray(ids)
      ? s
      : policy.finish(
          s,
          ids.every((id) => typeof id === "string") ? ids : ids.filter((id) => typeof id === "string"),
          now
        ),
  setStatus: (s, status) =>
    s instanceof RefusedDpSize || !Array.isArray(status) ? s : policy.setStatus(s, status),
  ...(policy.charge === undefined
    ? {}
    : {
        charge: (s: unknown, request: RouteRequest, now: number) =>
          s instanceof RefusedDpSize
            ? s.error
            : isObject(request)
              ? policy.charge!(s, request, now)
              : notARequest
      })
})

/**
 * The same entries, each `make` checking its options first, and its policy what an untyped caller
 * passes.
 * @internal
 */
export const checkedEntries = (entries: ReadonlyArray<PolicyEntry>): ReadonlyArray<PolicyEntry> =>
  entries.map((entry) => ({
    ...entry,
    make: (options) => {
      const bad = checkPolicyOptions(options)
      return checkingInputs(bad === undefined ? entry.make(options) : refusing(entry.make({}), bad))
    }
  }))
