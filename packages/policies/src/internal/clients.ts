/**
 * A maker's front-end settings read through the one check (`checkClientOptions`): the count and
 * index to route with, and the error its `route` must return when they were refused.
 *
 * @internal
 */
import { checkClientOptions } from "../Options.js"
import type { PolicyError } from "../Policy.js"

/**
 * `clientCount` (1 when absent) and `clientIndex` (0 when absent), with `error` set when
 * `checkClientOptions` refuses them (then 1 and 0, so `init` / `observe` still run; the maker's
 * `route` returns `error` first). @internal
 */
export const clientsOf = (options: {
  readonly clientCount?: number | undefined
  readonly clientIndex?: number | undefined
}): {
  readonly clientCount: number
  readonly clientIndex: number
  readonly error: PolicyError | undefined
} => {
  const error = checkClientOptions(options.clientCount, options.clientIndex)
  return error === undefined
    ? { clientCount: options.clientCount ?? 1, clientIndex: options.clientIndex ?? 0, error }
    : { clientCount: 1, clientIndex: 0, error }
}
