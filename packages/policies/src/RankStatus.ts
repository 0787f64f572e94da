/**
 * The one check of a `setStatus` call's health list, and the rule that goes with it: a list that
 * is not one boolean per rank is ignored whole (`setStatus` returns its state itself).
 *
 * @since 0.4.0
 */
import { kindOf } from "./internal/kindOf.js"
import { type PolicyError, policyError } from "./Policy.js"

/**
 * The one check of per-rank health: `undefined` when `status` is an array of exactly `dpSize`
 * booleans (`true` = healthy), else a `PolicyError` `InvalidInput` naming `status` (not an array,
 * or a length other than `dpSize`) or the first entry at fault (`status[i]`: `1`, `"true"`,
 * `undefined`, a hole). O(dpSize).
 *
 * The rule over the registry (a test over every registered policy): `setStatus(state, status)` with
 * a list this check refuses returns `state` itself, unchanged; `setStatus` cannot return an error,
 * and a short list read as "the rest healthy" (or an extra entry dropped) would silently mark ranks
 * up that the caller never vouched for. It is SGLang's rule for a wrong length (its controller logs
 * a warning and keeps the old status; sgl-project/sglang
 * `python/sglang/srt/managers/data_parallel_controller.py`), applied to every policy.
 *
 * **When to use**: at a boundary that takes health from outside (a health poller, a router API),
 * to report a bad list rather than have it ignored; or in a new policy's `setStatus`.
 *
 * @example
 * ```ts
 * import { checkStatus, roundRobin } from "@loadledger/policies"
 * checkStatus([true, false, true], 3) // => undefined
 * checkStatus([true, false], 3)?.message // => "status must hold 3 booleans (one per rank), got 2 entries"
 * checkStatus([true, 1, true] as never, 3)?.field // => "status[1]"
 * // every policy ignores such a list: the state comes back as it was
 * const s = roundRobin.init(3)
 * roundRobin.setStatus(s, [false]) === s // => true
 * ```
 *
 * @category guards
 * @since 0.4.0
 */
export const checkStatus = (status: ReadonlyArray<boolean>, dpSize: number): PolicyError | undefined => {
  if (!Array.isArray(status))
    return policyError(
      "InvalidInput",
      `status must be an array of ${dpSize} booleans, got ${kindOf(status)}`,
      "status"
    )
  if (status.length !== dpSize)
    return policyError(
      "InvalidInput",
      `status must hold ${dpSize} booleans (one per rank), got ${status.length} entries`,
      "status"
    )
  for (let i = 0; i < dpSize; i++)
    if (typeof status[i] !== "boolean")
      return policyError(
        "InvalidInput",
        `status[${i}] must be a boolean, got ${kindOf(status[i])}`,
        `status[${i}]`
      )
  return undefined
}
