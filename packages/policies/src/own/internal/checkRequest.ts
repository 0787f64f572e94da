/**
 * The checks every own policy's `route` runs first, in one order.
 *
 * @internal
 */
import { type PolicyError, policyError, type RouteRequest } from "../../Policy.js"
import { checkInputLength, checkNow, checkRequestFields } from "../../RequestChecks.js"

const checkFields = (request: RouteRequest, now: number): PolicyError | undefined =>
  checkInputLength(request.inputLength) ?? checkNow(now) ?? checkRequestFields(request)

export const checkRequest = (
  dpSize: number,
  request: RouteRequest,
  now: number,
  healthy?: ReadonlyArray<boolean>
): PolicyError | undefined => {
  if (dpSize === 0) return policyError("NoRanks", "the policy has no ranks", "dpSize")
  const bad = checkFields(request, now)
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

/** `InvalidInput` naming `requestId` when `inFlight` (the policy still holds a charge for this id. */
export const checkNotInFlight = (request: RouteRequest, inFlight: boolean): PolicyError | undefined =>
  inFlight
    ? policyError(
        "InvalidInput",
        `requestId ${JSON.stringify(request.requestId)} is already in flight (routed, not finished): finish it first or give the new request its own id`,
        "requestId"
      )
    : undefined

/** A wrapper's checks before its inner policy's: the request's fields and `now`, then {@link checkNotInFlight}. */
export const checkWrapped = (
  request: RouteRequest,
  now: number,
  holds: (requestId: string) => boolean // read once `requestId` is checked
): PolicyError | undefined => checkFields(request, now) ?? checkNotInFlight(request, holds(request.requestId))

/** The inner policy's error rebuilt field by field (its result may be a class instance with getters), its state wrapped. */
export const innerError = <S, W>(out: PolicyError, wrap: (inner: S) => W): PolicyError => {
  const e = policyError(out.reason, out.message, out.field)
  return out.state === undefined ? e : { ...e, state: wrap(out.state as S) }
}

/** `AllRanksUnavailable`: no healthy (or eligible) rank of `n` to route to. */
export const allUnavailable = (n: number, what = "DP ranks are"): PolicyError =>
  policyError("AllRanksUnavailable", `Cannot route request: all ${n} ${what} unavailable.`, "status")
