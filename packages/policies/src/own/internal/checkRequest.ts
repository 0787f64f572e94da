/**
 * The checks every own policy's `route` runs first, in one order: ranks to route to, the prompt
 * length (the one rule, `checkInputLength`), the time (`checkNow`), the other fields' types
 * (`checkRequestFields`), then a pinned rank inside
 * `[0, dpSize)`.
 *
 * @internal
 */
import {
  checkInputLength,
  checkNow,
  checkRequestFields,
  type PolicyError,
  policyError,
  type RouteRequest
} from "../../Policy.js"

/**
 * `NoRanks` for `dpSize` 0, then `checkInputLength`'s `InvalidInput`, `checkNow`'s,
 * `checkRequestFields`', then `InvalidRoutedRank`
 * (upstream's `DP rank r is not active.`) for a `routedDpRank` that is not a rank; else `undefined`.
 *
 * @internal
 */
export const checkRequest = (dpSize: number, request: RouteRequest, now: number): PolicyError | undefined => {
  if (dpSize === 0) return policyError("NoRanks", "the policy has no ranks", "dpSize")
  const bad = checkInputLength(request.inputLength) ?? checkNow(now) ?? checkRequestFields(request)
  if (bad !== undefined) return bad
  const r = request.routedDpRank
  if (r !== undefined && (!Number.isInteger(r) || r < 0 || r >= dpSize))
    return policyError("InvalidRoutedRank", `DP rank ${r} is not active.`, "routedDpRank")
  return undefined
}

/**
 * `InvalidInput` naming `requestId` when `inFlight` (the policy still holds a charge for this id:
 * routed, not finished), else `undefined`. Routing the same id again would charge it twice and
 * `finish` would take one charge back: the other would stay, a phantom load on a rank. SGLang and
 * vLLM refuse a duplicate request id as well (and so does the live router).
 *
 * @internal
 */
export const checkNotInFlight = (request: RouteRequest, inFlight: boolean): PolicyError | undefined =>
  inFlight
    ? policyError(
        "InvalidInput",
        `requestId ${JSON.stringify(request.requestId)} is already in flight (routed, not finished): finish it first or give the new request its own id`,
        "requestId"
      )
    : undefined
