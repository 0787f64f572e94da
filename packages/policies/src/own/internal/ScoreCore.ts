/**
 * The engine behind `makeScored` and `makePowerOfChoices`.
 *
 * @internal
 */
import { clientsOf } from "../../internal/clients.js"
import { doubles } from "../../internal/packed.js"
import { type PolicyError, policyError } from "../../Policy.js"
import type { Normalisation, ScoredOptions, Scorer, ScoreView, WeightedScorer } from "../ScoreView.js"
import { LedgerScoreView } from "./LoadView.js"

/** A weighted scorer with its normalisation resolved. */
export interface Term {
  readonly scorer: Scorer
  readonly weight: number
  readonly normalise: Normalisation
}

/** The scorers of a policy. */
export interface Scoring {
  readonly terms: ReadonlyArray<Term>
  readonly tieBreakers: ReadonlyArray<Scorer>
  /** Whether some scorer reads the prefix index / the in-flight counts. */
  readonly usesIndex: boolean
  readonly usesInflight: boolean
}

export const scoringOf = (
  scorers: ReadonlyArray<WeightedScorer> | undefined,
  tieBreakers: ReadonlyArray<Scorer> | undefined
): Scoring | PolicyError => {
  if (scorers === undefined || scorers.length === 0)
    return policyError("InvalidInput", "at least one scorer is needed", "scorers")
  const terms: Array<Term> = []
  for (let i = 0; i < scorers.length; i++) {
    const { scorer, weight, normalise = "min-max" } = scorers[i]!
    if (!(Number.isFinite(weight) && weight >= 0))
      return policyError(
        "InvalidInput",
        `weight must be finite and >= 0, got ${weight}`,
        `scorers[${i}].weight`
      )
    if (normalise !== "min-max" && normalise !== "max" && normalise !== "none")
      return policyError(
        "InvalidInput",
        `normalise must be "min-max", "max" or "none", got ${String(normalise)}`,
        `scorers[${i}].normalise`
      )
    terms.push({ scorer, weight, normalise })
  }
  const tb = tieBreakers ?? []
  const all = [...terms.map((t) => t.scorer), ...tb]
  return {
    terms,
    tieBreakers: tb,
    usesIndex: all.some((s) => s.uses?.includes("prefixIndex") === true),
    usesInflight: all.some((s) => s.uses?.includes("inflight") === true)
  }
}

/** The outcome of {@link pickBest}. */
export interface Picked {
  readonly best: number
  /** The weighted sum per candidate. */
  readonly sums: Array<number>
  /** Raw costs per term, then per tie-breaker, per candidate. */
  readonly costs: Array<Array<number>>
  /** Candidates excluded by a scorer's `+Infinity`. */
  readonly excluded: Array<number>
}

/** Rank `r`'s newest counted row is fresh. */
const datedIn = (view: ScoreView, r: number): boolean =>
  view instanceof LedgerScoreView ? view.dated(r) : !view.stale(r)

/** How much of a rank's load is unknown (no fresh row with request counts 4, counts 2, KV usage 1). */
const unknownLevel = (view: ScoreView, r: number): number =>
  (datedIn(view, r) ? 0 : 4) + (view.unknown(r) ? 2 : 0) + (view.kvCacheUsage(r) === undefined ? 1 : 0)

const tieCost = (c: number): number => (Number.isNaN(c) ? Number.POSITIVE_INFINITY : c)
// shared by every explanation with nothing to list (frozen: a caller cannot add to it)
const noRanks = Object.freeze([]) as unknown as Array<number>

/** Score `ranks` (in tie order) and pick the lowest weighted sum. */
export const pickBest = (
  view: ScoreView,
  ranks: ReadonlyArray<number>,
  scoring: Scoring,
  allowed: ReadonlyArray<boolean> | undefined
): Picked => {
  const m = ranks.length
  const { terms, tieBreakers } = scoring
  const inf = Number.POSITIVE_INFINITY
  const costs: Array<Array<number>> = []
  // packed arrays of doubles (`new Array(m)` is holey and changes its storage when written)
  const sums = doubles(m)
  if (allowed !== undefined) for (let i = 0; i < m; i++) if (allowed[i] !== true) sums[i] = inf
  let excluded = noRanks
  // pass 1 per term: its costs, and the candidates its +Infinity excludes
  for (let k = 0; k < terms.length; k++) {
    const out = doubles(m)
    terms[k]!.scorer.costs(view, ranks, out)
    costs.push(out)
    for (let i = 0; i < m; i++)
      if (out[i] === inf && sums[i] === 0) {
        sums[i] = inf
        if (excluded === noRanks) excluded = []
        excluded.push(ranks[i]!)
      }
  }
  for (let k = 0; k < tieBreakers.length; k++) {
    const out = doubles(m)
    tieBreakers[k]!.costs(view, ranks, out)
    costs.push(out)
  }
  // pass 2 per term: its range over the usable candidates, then its weighted, normalised cost
  // (a weight-0 term over finite costs adds exactly 0: a gate's second loop is skipped)
  for (let k = 0; k < terms.length; k++) {
    const { weight, normalise } = terms[k]!
    const c = costs[k]!
    let lo = inf
    let hi = Number.NEGATIVE_INFINITY
    for (let i = 0; i < m; i++) {
      if (sums[i] === inf) continue
      const x = c[i]!
      if (x < lo) lo = x
      if (x > hi) hi = x
    }
    if (weight === 0 && lo !== Number.NEGATIVE_INFINITY) continue
    const nanAs = hi === Number.NEGATIVE_INFINITY ? 0 : hi
    for (let i = 0; i < m; i++) {
      const sum = sums[i]!
      if (sum === inf) continue
      const x = Number.isNaN(c[i]!) ? nanAs : c[i]!
      const v =
        normalise === "none"
          ? x
          : normalise === "max"
            ? hi > 0
              ? x / hi
              : 0
            : hi > lo
              ? (x - lo) / (hi - lo)
              : 0
      sums[i] = sum + weight * v
    }
  }
  // while a usable candidate's load is dated (fresh), a stale or never-dated one is not chosen:
  // its floors tie it at best by load, and no other term (a prefix it holds) outweighs that it may
  // be hung or gone (unknown is never attractive); it keeps its sum for the explanation
  const lv = view instanceof LedgerScoreView ? view : undefined
  let anyDated = false
  for (let i = 0; i < m && !anyDated; i++)
    if (sums[i] !== inf && (lv !== undefined ? lv.dated(ranks[i]!) : !view.stale(ranks[i]!))) anyDated = true
  let best = -1
  for (let i = 0; i < m; i++) {
    const sum = sums[i]!
    if (sum === inf || (anyDated && !(lv !== undefined ? lv.dated(ranks[i]!) : !view.stale(ranks[i]!))))
      continue
    if (best < 0 || sum < sums[best]!) {
      best = i
      continue
    }
    if (sum !== sums[best]) continue
    let d = 0
    for (let k = terms.length; k < costs.length && d === 0; k++) {
      const a = tieCost(costs[k]![i]!)
      const b = tieCost(costs[k]![best]!)
      d = a < b ? -1 : a > b ? 1 : 0
    }
    // unknown is never attractive: a rank whose load is unknown loses a full tie to a known one
    // (a rank drawn twice ties with itself: no level to compare)
    if (
      d < 0 ||
      (d === 0 &&
        ranks[i] !== ranks[best] &&
        unknownLevel(view, ranks[i]!) < unknownLevel(view, ranks[best]!))
    )
      best = i
  }
  return { best, sums, costs, excluded }
}

/** The names of the terms then tie-breakers, for explanations. */
export const scorerNames = (scoring: Scoring): Array<string> => [
  ...scoring.terms.map((t) => t.scorer.name),
  ...scoring.tieBreakers.map((s) => s.name)
]

/** The options `makeScored` and `makePowerOfChoices` share, with their defaults. */
export const scoredSettings = (options: Omit<ScoredOptions, "scorers">) => {
  const { clientCount, clientIndex, error } = clientsOf(options)
  return {
    clientError: error,
    clientCount,
    clientIndex,
    chargeScale: options.chargeScale ?? clientCount,
    staleAfter: options.staleAfterSeconds ?? 1,
    margin: options.inclusionMarginSeconds ?? 0,
    kvOn: options.kvFeasible ?? true,
    maxBlocks: options.maxIndexedBlocks ?? 65_536
  }
}
