/**
 * The checks every own policy's `route` runs first, in one order: ranks to route to, the prompt
 * length (the one rule, `checkInputLength`), the time (`checkNow`), the other fields' types
 * (`checkRequestFields`), then a pinned rank inside
 * `[0, dpSize)`.
 *
 * @internal
 */
import { type PolicyError, policyError, type RouteRequest } from "../../Policy.js"
import { checkInputLength, checkNow, checkRequestFields } from "../../RequestChecks.js"

/**
 * `NoRanks` for `dpSize` 0, then `checkInputLength`'s `InvalidInput`, `checkNow`'s,
 * `checkRequestFields`' (a `routedDpRank` that is not a number among them), then `InvalidRoutedRank`:
 * upstream's `DP rank r is not active.` for one that is not a rank, and, given `healthy`, for a
 * rank marked unhealthy (an own policy never chooses one, pinned or not, as Dynamo refuses a pin
 * to a worker it does not hold); else `undefined`.
 *
 * @internal
 */
export const checkRequest = (
  dpSize: number,
  request: RouteRequest,
  now: number,
  healthy?: ReadonlyArray<boolean>
): PolicyError | undefined => {
  if (dpSize === 0) return policyError("NoRanks", "the policy has no ranks", "dpSize")
  const bad = checkInputLength(request.inputLength) ?? checkNow(now) ?? checkRequestFields(request)
  if (bad !== undefined) return bad
  // checkRequestFields refused a pin that is not a number
  const r = request.routedDpRank
  if (r === undefined) return undefined
  if (!Number.isInteger(r) || r < 0 || r >= dpSize)
    return policyError("InvalidRoutedRank", `DP rank ${r} is not active.`, "routedDpRank")
  if (healthy !== undefined && healthy[r] === false)
    return policyError(
      "InvalidRoutedRank",
      `DP rank ${r} is unhealthy (setStatus): a pinned request is not sent to it`,
      "routedDpRank"
    )
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
