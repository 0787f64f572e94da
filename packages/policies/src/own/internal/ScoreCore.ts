/**
 * The engine behind `makeScored` and `makePowerOfChoices`: the ledger-backed `ScoreView`, the
 * weighted, normalised sum of scorers over candidate ranks and its argmin, option checks and the
 * shared options' defaults.
 *
 * Over 300 lines: one engine shared by two policies; splitting the view from the argmin would put
 * one route's two halves in two files.
 *
 * @internal
 */
import { clientsOf } from "../../internal/clients.js"
import { doubles } from "../../internal/packed.js"
import { type PolicyError, policyError, type RouteRequest } from "../../Policy.js"
import type { ScoredOptions } from "../Scored.js"
import type { Normalisation, Scorer, ScoreView, WeightedScorer } from "../ScoreView.js"
import { freeKvTokens } from "./FreeKv.js"
import type { Inflight } from "./Inflight.js"
import type { LedgerState } from "./InflightCharges.js"
import { type LazyLedger, lazyChargedRequests, lazyChargedTokens } from "./LazyLedger.js"
import { baseOf, type FreshMax, maxKnownKv } from "./LoadView.js"
import { indexedRanks, matchedBlocks, type PrefixIndex } from "./PrefixIndex.js"

/** Values a view would otherwise compute over every rank (power of d keeps them from `observe`). @internal */
export interface ViewCache {
  readonly maxKv: number | undefined
  readonly maxUncached: number
}

/** The highest `numWaitingUncachedTokens` any rank's last row reports (0 when none). @internal */
export const maxWaitingUncached = (ledger: LedgerState): number => {
  let m = 0
  for (const row of ledger.snapshots) {
    const u = row?.numWaitingUncachedTokens
    if (u !== undefined && u > m) m = u
  }
  return m
}

/** A {@link ScoreView} over the in-flight ledger (and a lazy ledger's log, when given). @internal */
export class LedgerScoreView implements ScoreView {
  readonly dpSize: number
  // the two maxima over every rank, each computed on first use (or given: power of d keeps them)
  private kvDone = false
  private maxKv: number | undefined = undefined
  private maxUncached = -1
  private matched: Array<number> | undefined
  constructor(
    private readonly ledger: LedgerState,
    private readonly lazy: LazyLedger | undefined,
    readonly now: number,
    readonly request: RouteRequest,
    private readonly staleAfter: number,
    private readonly fm: FreshMax,
    private readonly chargeScale: number,
    private readonly index: PrefixIndex | undefined,
    private readonly inflight: Inflight | undefined,
    cache: ViewCache | undefined
  ) {
    this.dpSize = ledger.dpSize
    if (cache !== undefined) {
      this.kvDone = true
      this.maxKv = cache.maxKv
      this.maxUncached = cache.maxUncached
    }
  }
  chargedRequests(r: number): number {
    return this.lazy === undefined ? this.ledger.chargedRequests[r]! : lazyChargedRequests(this.lazy, r)
  }
  chargedTokens(r: number): number {
    return this.lazy === undefined ? this.ledger.chargedTokens[r]! : lazyChargedTokens(this.lazy, r)
  }
  private fresh(r: number): boolean {
    return this.now - this.ledger.snapTimestamp[r]! <= this.staleAfter
  }
  healthy(r: number): boolean {
    return this.ledger.healthy[r]!
  }
  unknown(r: number): boolean {
    return Number.isNaN(this.ledger.snapTimestamp[r]!)
  }
  stale(r: number): boolean {
    // dated by its newest row with request counts (a partial one too: vLLM's rows carry no tokens)
    const at = this.ledger.rowTimestamp[r]!
    return !Number.isNaN(at) && !(this.now - at <= this.staleAfter)
  }
  /** Its newest row with request counts is fresh (false when it has none). */
  dated(r: number): boolean {
    return this.now - this.ledger.rowTimestamp[r]! <= this.staleAfter
  }
  requests(r: number): number {
    const base = this.fresh(r)
      ? this.ledger.snapRequests[r]!
      : baseOf(this.ledger, r, this.now, this.staleAfter, this.fm)[0]
    return base + this.chargedRequests(r)
  }
  waiting(r: number): number {
    const base = this.fresh(r)
      ? this.ledger.snapWaiting[r]!
      : baseOf(this.ledger, r, this.now, this.staleAfter, this.fm)[2]
    return base + this.chargedRequests(r)
  }
  running(r: number): number {
    if (this.fresh(r)) return this.ledger.snapRequests[r]! - this.ledger.snapWaiting[r]!
    const b = baseOf(this.ledger, r, this.now, this.staleAfter, this.fm)
    return b[0] - b[2]
  }
  tokens(r: number): number {
    const base = this.fresh(r)
      ? this.ledger.snapTokens[r]!
      : baseOf(this.ledger, r, this.now, this.staleAfter, this.fm)[1]
    return base + this.chargedTokens(r)
  }
  kvCacheUsage(r: number): number | undefined {
    const kv = this.ledger.snapKv[r]!
    return Number.isNaN(kv) ? undefined : kv
  }
  maxKvCacheUsage(): number | undefined {
    if (!this.kvDone) {
      this.maxKv = maxKnownKv(this.ledger)
      this.kvDone = true
    }
    return this.maxKv
  }
  freeKvTokens(r: number): number | undefined {
    const free = freeKvTokens(this.ledger.snapshots[r])
    return free === undefined ? undefined : free - this.chargedTokens(r)
  }
  waitingUncachedTokens(r: number): number {
    const row = this.ledger.snapshots[r]
    if (this.maxUncached < 0) this.maxUncached = maxWaitingUncached(this.ledger)
    const max = this.maxUncached
    return row === undefined || row.unknown !== undefined ? max : (row.numWaitingUncachedTokens ?? max)
  }
  uncachedPromptTokens(r: number): number {
    const { inputLength, prefixHashes } = this.request
    const blocks = prefixHashes?.length ?? 0
    if (this.index === undefined || blocks === 0 || this.dpSize > indexedRanks) return inputLength
    if (this.matched === undefined) {
      this.matched = new Array<number>(this.dpSize)
      matchedBlocks(this.index, prefixHashes, this.matched)
    }
    return Math.max(0, inputLength - this.matched[r]! * (inputLength / blocks))
  }
  inflightRequests(r: number): number | undefined {
    return this.inflight === undefined ? undefined : this.chargeScale * this.inflight.requests[r]!
  }
  inflightTokens(r: number): number | undefined {
    return this.inflight === undefined ? undefined : this.chargeScale * this.inflight.tokens[r]!
  }
}

/** A weighted scorer with its normalisation resolved. @internal */
export interface Term {
  readonly scorer: Scorer
  readonly weight: number
  readonly normalise: Normalisation
}

/** The scorers of a policy: weighted terms, then raw lexicographic tie-breakers. @internal */
export interface Scoring {
  readonly terms: ReadonlyArray<Term>
  readonly tieBreakers: ReadonlyArray<Scorer>
  /** Whether some scorer reads the prefix index / the in-flight counts. */
  readonly usesIndex: boolean
  readonly usesInflight: boolean
}

/**
 * The scoring of `scorers` / `tieBreakers`, or a `PolicyError` `InvalidInput` naming the first bad
 * option (no scorer, a weight that is negative or not finite, an unknown normalisation). @internal
 */
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

/** The outcome of {@link pickBest}: the chosen index into the candidates (-1 when none is usable). @internal */
export interface Picked {
  readonly best: number
  /** The weighted sum per candidate; `+Infinity` where the candidate was not usable. */
  readonly sums: Array<number>
  /** Raw costs per term, then per tie-breaker, per candidate. */
  readonly costs: Array<Array<number>>
  /** Candidates excluded by a scorer's `+Infinity`. */
  readonly excluded: Array<number>
}

/** Rank `r`'s newest counted row is fresh: the ledger's own test, else not `stale`. */
const datedIn = (view: ScoreView, r: number): boolean =>
  view instanceof LedgerScoreView ? view.dated(r) : !view.stale(r)

/**
 * How much of a rank's load is unknown (no fresh row with request counts 4, counts 2, KV usage 1):
 * the lower level wins a full tie, as the ledger's `unknownLevel` (a view that is not the ledger's
 * says freshness through `stale` alone).
 */
const unknownLevel = (view: ScoreView, r: number): number =>
  (datedIn(view, r) ? 0 : 4) + (view.unknown(r) ? 2 : 0) + (view.kvCacheUsage(r) === undefined ? 1 : 0)

const tieCost = (c: number): number => (Number.isNaN(c) ? Number.POSITIVE_INFINITY : c)
// shared by every explanation with nothing to list (frozen: a caller cannot add to it)
const noRanks = Object.freeze([]) as unknown as Array<number>

/**
 * Score `ranks` (in tie order) and pick the lowest weighted sum; ties by the tie-breakers' raw
 * costs in order (NaN last), then a known rank before an unknown one, then the earlier candidate. `allowed[i]` false (KV) excludes
 * candidate i after the scorers ran (gates see every candidate). Each term is normalised over the
 * usable candidates. `sums` doubles as the usable mark (`+Infinity`: not usable), so a route
 * allocates one array per scorer plus the sums. @internal
 */
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
  for (let i = 0; i < m; i++) sums[i] = allowed === undefined || allowed[i] === true ? 0 : inf
  let excluded = noRanks
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
  let anyDated = false
  for (let i = 0; i < m && !anyDated; i++) if (sums[i] !== inf && datedIn(view, ranks[i]!)) anyDated = true
  let best = -1
  for (let i = 0; i < m; i++) {
    const sum = sums[i]!
    if (sum === inf || (anyDated && !datedIn(view, ranks[i]!))) continue
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

/** The names of the terms then tie-breakers, for explanations. @internal */
export const scorerNames = (scoring: Scoring): Array<string> => [
  ...scoring.terms.map((t) => t.scorer.name),
  ...scoring.tieBreakers.map((s) => s.name)
]

/**
 * The options `makeScored` and `makePowerOfChoices` share, with their defaults: one front end,
 * charges `clientCount` times, rows stale after 1 s, no inclusion margin, KV feasibility on, 65,536
 * indexed prefix blocks; `clientError` when `checkClientOptions` refuses `clientCount` /
 * `clientIndex` (the maker's `route` returns it).
 *
 * @internal
 */
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
