/**
 * The one check of the options a policy is built with (`PolicyOptions`: `clientCount`,
 * `clientIndex`, `seed`, `maxRunningRequests`), and the rule that goes with it: a policy built
 * from a bad option answers every `route` with this check's `PolicyError`, naming the option.
 *
 * @since 0.4.0
 */
import { kindOf } from "./internal/kindOf.js"
import { type PolicyError, policyError } from "./Policy.js"
import type { PolicyOptions } from "./PolicyEntry.js"

/** A number as it is, anything else by its kind (`string`, `null`, ...). */
const shown = (x: unknown): string => (typeof x === "number" ? String(x) : kindOf(x))

/**
 * The one check of a front end's place among its peers: `clientCount` (front ends sharing the
 * ranks, e.g. vLLM API-server processes) absent or an integer >= 1, then `clientIndex` (this one's
 * index) absent or an integer in `0..clientCount-1` (`clientCount` counting as 1 when absent).
 * `undefined` when both hold, else a `PolicyError` `InvalidInput` naming the first field at fault
 * (`NaN`, `-1`, `1.5`, `Infinity` or an index past the count are refused, never read as a default).
 *
 * **When to use**: in a policy maker that takes `clientCount` / `clientIndex` (every one of this
 * package's does, e.g. `makeLedgerBalanced`, `makeStepTimeAware`, `makeVllmLb`); the maker keeps
 * the error and its `route` returns it for every request, before any other check.
 *
 * @example
 * ```ts
 * import { checkClientOptions } from "@loadledger/policies"
 * checkClientOptions(4, 3) // => undefined
 * checkClientOptions(undefined, undefined) // => undefined
 * checkClientOptions(2, 2)?.message // => "clientIndex must be an integer in 0..1, got 2"
 * checkClientOptions(0, 0)?.field // => "clientCount"
 * checkClientOptions(undefined, 1)?.field // => "clientIndex"
 * ```
 *
 * @category guards
 * @since 0.4.0
 */
export const checkClientOptions = (
  clientCount: number | undefined,
  clientIndex: number | undefined
): PolicyError | undefined => {
  if (clientCount !== undefined && !(Number.isSafeInteger(clientCount) && clientCount >= 1))
    return policyError(
      "InvalidInput",
      `clientCount must be an integer >= 1, got ${shown(clientCount)}`,
      "clientCount"
    )
  const count = clientCount ?? 1
  if (
    clientIndex !== undefined &&
    !(Number.isSafeInteger(clientIndex) && clientIndex >= 0 && clientIndex < count)
  )
    return policyError(
      "InvalidInput",
      `clientIndex must be an integer in 0..${count - 1}, got ${shown(clientIndex)}`,
      "clientIndex"
    )
  return undefined
}

/**
 * The one check of a registry entry's options: {@link checkClientOptions} on `clientCount` /
 * `clientIndex`, then `seed` absent or a safe integer (any sign), then `maxRunningRequests` absent
 * or an integer >= 1, then `stepCost` absent or a step cost model (`chunkTokens` an integer >= 1,
 * every other coefficient a finite number >= 0; the field is named, e.g.
 * `stepCost.extendSecondsPerToken`). `undefined` when all hold, else a `PolicyError` `InvalidInput` naming the
 * first option at fault in that order.
 *
 * The rule over the registry (a test over every registered entry): `make(options)` with options
 * this check refuses returns a policy whose every `route` returns this error (before the request's
 * own checks), whatever the entry reads: an option no entry can honour is a caller's mistake, not
 * a default. `init`, `observe`, `finish` and `setStatus` work as with default options, so a caller
 * threading states meets the error at its first `route`. Why not throw from `make`: the package's
 * errors are values, and `make` returns a `Policy`, not a result; `route` is where every caller
 * already handles a `PolicyError`. A boundary that wants to fail early (a CLI, a config loader)
 * calls this check itself.
 *
 * **When to use**: at a boundary that builds policies from outside input (a command line, a
 * config file), to report a bad option before routing anything.
 *
 * @example
 * ```ts
 * import { checkPolicyOptions, findPolicy } from "@loadledger/policies"
 * checkPolicyOptions({ clientCount: 4, clientIndex: 3, seed: -7, maxRunningRequests: 64 }) // => undefined
 * checkPolicyOptions({ seed: Number.NaN })?.message // => "seed must be a safe integer, got NaN"
 * checkPolicyOptions({ maxRunningRequests: 0 })?.field // => "maxRunningRequests"
 * // every registered policy refuses such options at its first route, even one that ignores them
 * const p = findPolicy("total-tokens")!.make({ clientCount: 2, clientIndex: 5 })
 * const r = p.route(p.init(4), { requestId: "a", inputLength: 10 }, 0)
 * r._tag === "PolicyError" && r.field // => "clientIndex"
 * ```
 *
 * @category registry
 * @since 0.4.0
 */
export const checkPolicyOptions = (options: PolicyOptions): PolicyError | undefined => {
  const bad = checkClientOptions(options.clientCount, options.clientIndex)
  if (bad !== undefined) return bad
  const { seed, maxRunningRequests } = options
  if (seed !== undefined && !Number.isSafeInteger(seed))
    return policyError("InvalidInput", `seed must be a safe integer, got ${shown(seed)}`, "seed")
  if (
    maxRunningRequests !== undefined &&
    !(Number.isSafeInteger(maxRunningRequests) && maxRunningRequests >= 1)
  )
    return policyError(
      "InvalidInput",
      `maxRunningRequests must be an integer >= 1, got ${shown(maxRunningRequests)}`,
      "maxRunningRequests"
    )
  const cost = options.stepCost
  if (cost !== undefined) {
    if (typeof cost !== "object" || cost === null)
      return policyError("InvalidInput", `stepCost must be a step cost model, got ${shown(cost)}`, "stepCost")
    if (!(Number.isSafeInteger(cost.chunkTokens) && cost.chunkTokens >= 1))
      return policyError(
        "InvalidInput",
        `stepCost.chunkTokens must be an integer >= 1, got ${shown(cost.chunkTokens)}`,
        "stepCost.chunkTokens"
      )
    for (const k of stepCostSeconds) {
      const v = cost[k]
      if (!(typeof v === "number" && Number.isFinite(v) && v >= 0))
        return policyError(
          "InvalidInput",
          `stepCost.${k} must be a number >= 0, got ${shown(v)}`,
          `stepCost.${k}`
        )
    }
  }
  return undefined
}

const stepCostSeconds = [
  "extendStepSeconds",
  "extendSecondsPerToken",
  "extendSecondsPerTokenPerPrefixToken",
  "decodeSecondsPerRequest",
  "decodeSecondsPerContextToken"
] as const
