/**
 * What the commands share in reading their arguments: the one-line error `main` prints (`fail`) and
 * the parsers of numeric flags for commander, each naming its flag
 * (`--dp must be a positive integer, got "0"`).
 *
 * @internal
 */
import { MAX_DP_SIZE } from "@loadledger/sim"

/** Throw an `Error` with `message` (one line; `main` prints it and exits 1). */
export const fail = (message: string): never => {
  throw new Error(message)
}

/** A flag that takes an integer >= 1. */
export const positiveInt = (name: string) => (v: string) => {
  const n = Number(v)
  return Number.isInteger(n) && n > 0 ? n : fail(`${name} must be a positive integer, got "${v}"`)
}

/** `--dp`: an integer from 1 to the simulator's {@link MAX_DP_SIZE}, checked before any work starts. */
export const rankCount = (name: string) => (v: string) => {
  const n = Number(v)
  return Number.isInteger(n) && n >= 1 && n <= MAX_DP_SIZE
    ? n
    : fail(`${name} must be an integer from 1 to ${MAX_DP_SIZE} (the simulator's rank bound), got "${v}"`)
}

/** A flag that takes an integer >= 0. */
export const nonNegativeInt = (name: string) => (v: string) => {
  const n = Number(v)
  return Number.isInteger(n) && n >= 0 ? n : fail(`${name} must be a non-negative integer, got "${v}"`)
}

/** A flag that takes a finite number > 0. */
export const positiveNumber = (name: string) => (v: string) => {
  const n = Number(v)
  return Number.isFinite(n) && n > 0 ? n : fail(`${name} must be a positive number, got "${v}"`)
}
