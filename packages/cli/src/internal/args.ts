/**
 * What the commands share in reading their arguments: the one-line error `main` prints (`fail`) and
 * the parsers of numeric flags for commander, each naming its flag
 * (`--dp must be a positive integer, got "0"`).
 *
 * @internal
 */

/** Throw an `Error` with `message` (one line; `main` prints it and exits 1). */
export const fail = (message: string): never => {
  throw new Error(message)
}

/** A flag that takes an integer >= 1. */
export const positiveInt = (name: string) => (v: string) => {
  const n = Number(v)
  return Number.isInteger(n) && n > 0 ? n : fail(`${name} must be a positive integer, got "${v}"`)
}

/**
 * The largest data-parallel group the simulator accepts (`dpSize` in @loadledger/sim's
 * `checkConfig`: an integer from 1 to 4096), checked here before any trace is read.
 */
export const MAX_RANKS = 4096

/** `--dp`: an integer from 1 to {@link MAX_RANKS}, checked before any work starts. */
export const rankCount = (name: string) => (v: string) => {
  const n = Number(v)
  return Number.isInteger(n) && n >= 1 && n <= MAX_RANKS
    ? n
    : fail(`${name} must be an integer from 1 to ${MAX_RANKS} (the simulator's rank bound), got "${v}"`)
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
