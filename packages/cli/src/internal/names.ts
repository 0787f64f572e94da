/**
 * Guessing what a user meant: the closest known name to a typo (`didYouMean`, used for commands,
 * policies, models, GPUs and SLO presets) and the one-line message of an unknown name.
 *
 * @internal
 */
import { closest, distance } from "fastest-levenshtein"

/**
 * The closest of `candidates` to `name` when it is near enough to be a likely typo (edit distance
 * at most 2, or a third of the name), else undefined.
 */
export const didYouMean = (name: string, candidates: ReadonlyArray<string>): string | undefined => {
  if (candidates.length === 0) return undefined
  const best = closest(name, [...candidates])
  return distance(name, best) <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined
}

/**
 * `unknown policy "totl-tokens" (did you mean "total-tokens"?); loadledger list policies names all 68`:
 * the guess when there is one; the known names themselves when there are at most 15, else where to
 * find them (`list` names the `loadledger list` subcommand).
 */
export const unknownName = (
  what: string,
  name: string,
  known: ReadonlyArray<string>,
  list: "policies" | "models" | "gpus" | "slo"
): string => {
  const guess = didYouMean(name, known)
  const hint = guess === undefined ? "" : ` (did you mean "${guess}"?)`
  const where =
    known.length <= 15 ? `known: ${known.join(", ")}` : `loadledger list ${list} names all ${known.length}`
  return `unknown ${what} ${JSON.stringify(name)}${hint}; ${where}`
}
