/**
 * The vocabulary of loadledger's composable policies: what a scorer reads (`ScoreView`), what a
 * scorer is (`Scorer`), and how `makeScored` / `makePowerOfChoices` weigh several (`WeightedScorer`).
 *
 * @since 0.4.0
 */
import type { RouteRequest } from "../Policy.js"

/**
 * What a scorer reads about each rank while one request is routed at `now`: the in-flight ledger's
 * belief, the same one `ledger-balanced` routes on. Every per-rank method costs O(1) (the view never
 * scans all ranks on a scorer's behalf, so power of d choices stays O(d)).
 *
 * - `requests(r)` (running + waiting + charged requests), `waiting(r)` (waiting + charged),
 *   `running(r)`, `tokens(r)` (`numTotalTokens` + charged prompt tokens): a stale rank's base is at
 *   least the busiest fresh one's, an unknown rank's the busiest known values, never idle (the
 *   ledger contract's rule, see `makeLedgerBalanced`). Charges are what this front end routed and
 *   no snapshot includes yet, each counted `clientCount` times.
 * - `kvCacheUsage(r)`: 0..1, `undefined` when the rank did not report it; `maxKvCacheUsage()` the
 *   highest any rank reported (`undefined` when none did).
 * - `freeKvTokens(r)`: free KV tokens after the charges (`kvAvailableTokens` + `kvEvictableTokens`,
 *   else capacity minus `numUsedTokens`), `undefined` when the row says neither.
 * - `waitingUncachedTokens(r)`: `numWaitingUncachedTokens`; a rank that did not report it takes the
 *   highest reported or its waiting requests (reported, not charged) x the request's `inputLength`,
 *   whichever is more: a counted queue is never priced as none (0 only when nothing waits).
 * - `uncachedPromptTokens(r)`: the request's prompt tokens rank `r` would have to prefill: the prompt
 *   minus the leading `prefixHashes` blocks the router already sent it (router-side prefix index,
 *   31 ranks at most; without an index, or above 31 ranks, the whole prompt).
 * - `inflightRequests(r)` / `inflightTokens(r)`: requests / prompt tokens this front end routed there
 *   and that have not finished, times `clientCount`; `undefined` when the policy does not track them.
 * - `healthy(r)`, `stale(r)` (snapshot older than the bound), `unknown(r)` (no usable row).
 *
 * **When to use**: inside a custom {@link Scorer}.
 *
 * @example
 * ```ts
 * import { makeScored, Scorers, type ScoreView } from "@loadledger/policies"
 * const seen: Array<number> = []
 * const spy = Scorers.perRank("spy", (view: ScoreView, r: number) => {
 *   seen.push(view.tokens(r))
 *   return view.tokens(r)
 * })
 * const p = makeScored({ scorers: [{ scorer: spy, weight: 1 }] })
 * const rows = [0, 1].map((dpRank) => ({ dpRank, timestamp: 1, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 100 * dpRank }))
 * p.route(p.observe(p.init(2), rows, 1), { requestId: "a", inputLength: 5 }, 1)._tag // => "Routed"
 * seen // => [0, 100]
 * ```
 *
 * @category own policies
 * @since 0.4.0
 */
export interface ScoreView {
  readonly dpSize: number
  readonly now: number
  readonly request: RouteRequest
  readonly healthy: (rank: number) => boolean
  readonly stale: (rank: number) => boolean
  readonly unknown: (rank: number) => boolean
  readonly requests: (rank: number) => number
  readonly waiting: (rank: number) => number
  readonly running: (rank: number) => number
  readonly tokens: (rank: number) => number
  readonly kvCacheUsage: (rank: number) => number | undefined
  readonly maxKvCacheUsage: () => number | undefined
  readonly freeKvTokens: (rank: number) => number | undefined
  readonly waitingUncachedTokens: (rank: number) => number
  readonly uncachedPromptTokens: (rank: number) => number
  readonly inflightRequests: (rank: number) => number | undefined
  readonly inflightTokens: (rank: number) => number | undefined
}

/**
 * A per-rank cost (lower is preferred) for the request being routed. `costs(view, ranks, out)`
 * writes the cost of rank `ranks[i]` to `out[i]`, for the candidate ranks only (all healthy ranks
 * in `makeScored`, the sampled ones in `makePowerOfChoices`). A cost of `+Infinity` excludes the
 * rank for this request (a gate); `NaN` counts as the highest finite cost of the candidates (never
 * attractive). `uses` names what the scorer reads beyond the ledger, so the policy keeps it:
 * `"prefixIndex"` (the router-side prefix index, for `uncachedPromptTokens`) and `"inflight"` (the
 * in-flight counts).
 *
 * **When to use**: build one with `Scorers.perRank`, or use the ready-made ones in `Scorers`.
 *
 * @example
 * ```ts
 * import { Scorers } from "@loadledger/policies"
 * Scorers.tokens.name // => "tokens"
 * Scorers.uncachedPromptTokens.uses // => ["prefixIndex"]
 * ```
 *
 * @category own policies
 * @since 0.4.0
 */
export interface Scorer {
  readonly name: string
  readonly uses?: ReadonlyArray<"prefixIndex" | "inflight"> | undefined
  readonly costs: (view: ScoreView, ranks: ReadonlyArray<number>, out: Array<number>) => void
}

/**
 * How a scorer's costs are brought to one scale before weighting, over the ranks still usable for
 * the request (healthy, not excluded by a gate, KV-feasible):
 * - `"min-max"` (default): `(c - min) / (max - min)`, so the best rank scores 0 and the worst 1;
 *   when every usable rank has the same cost, all score 0 (the scorer does not discriminate and the
 *   others decide).
 * - `"max"`: `c / max` (for non-negative costs: keeps ratios, 0 stays 0); all 0 when `max` is 0.
 * - `"none"`: the raw cost, for scorers in the same unit that should add up (tokens + tokens).
 *
 * @category own policies
 * @since 0.4.0
 */
export type Normalisation = "min-max" | "max" | "none"

/**
 * One term of a weighted sum: a scorer, its weight (finite, >= 0; a weight of 0 keeps the scorer
 * as a pure gate) and its {@link Normalisation}.
 *
 * @category own policies
 * @since 0.4.0
 */
export interface WeightedScorer {
  readonly scorer: Scorer
  readonly weight: number
  readonly normalise?: Normalisation | undefined
}

/**
 * Options of `makeScored`. Only `scorers` is required.
 *
 * - `scorers`: the weighted terms (at least one; weights finite and >= 0).
 * - `tieBreakers`: scorers compared raw, in order, between ranks whose weighted sums are equal
 *   (before the rotating index).
 * - `kvFeasible` (true): while some healthy rank's known free KV holds the prompt, no other rank is
 *   chosen (free KV as `ScoreView.freeKvTokens`).
 * - `clientCount` / `clientIndex`: front ends sharing the ranks; each charge counts `chargeScale`
 *   (default `clientCount`) requests and prompt tokens, and the tie scan starts at
 *   `floor(dpSize * clientIndex / clientCount)` plus a cursor advanced on every scored route.
 * - `staleAfterSeconds` (1) / `inclusionMarginSeconds` (0): as in `ledger-balanced`.
 * - `maxIndexedBlocks` (65 536): bound of the prefix index (kept only when a scorer uses it).
 * - `name` ("scored"): the policy's name.
 *
 * @category own policies
 * @since 0.4.0
 */
export interface ScoredOptions {
  readonly scorers: ReadonlyArray<WeightedScorer>
  readonly tieBreakers?: ReadonlyArray<Scorer> | undefined
  readonly kvFeasible?: boolean | undefined
  readonly clientCount?: number | undefined
  readonly clientIndex?: number | undefined
  readonly chargeScale?: number | undefined
  readonly staleAfterSeconds?: number | undefined
  readonly inclusionMarginSeconds?: number | undefined
  readonly maxIndexedBlocks?: number | undefined
  readonly name?: string | undefined
}
