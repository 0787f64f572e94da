/**
 * The scorer's vocabulary: the one read-only load view (`ScoreView`), a cost term (`Scorer`) and
 * its weight (`WeightedScorer`). Design notes: docs/own-policies.md.
 *
 * @since 0.4.0
 */
import type { RouteRequest } from "../Policy.js"

/**
 * The one read-only load view a scorer reads per rank while one request is routed at `now`:
 * reported load plus the in-flight ledger's charges (each counted `clientCount` times), O(1) per
 * call. `requests` / `waiting` / `running` are requests, `tokens` / `freeKvTokens` /
 * `waitingUncachedTokens` / `uncachedPromptTokens` / `inflightTokens` tokens, `kvCacheUsage` 0..1
 * (`undefined`: not reported). A stale rank's base is at least the busiest fresh one's, an unknown
 * rank's the busiest known values (never idle). `inflight*` is `undefined` unless a scorer `uses`
 * `"inflight"`; `uncachedPromptTokens` reads the router-side prefix index (31 ranks at most, else
 * the whole prompt).
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
 * A named cost term: `costs(view, ranks, out)` writes rank `ranks[i]`'s cost (lower wins) to
 * `out[i]`; `+Infinity` excludes the rank (a gate), `NaN` counts as the highest finite cost. `uses`
 * names what it reads beyond the ledger (`"prefixIndex"`, `"inflight"`), so the policy keeps it.
 *
 * **When to use**: `Scorers.perRank` builds one; `Scorers` has the ready-made terms.
 *
 * @example
 * ```ts
 * import { Scorers } from "@loadledger/policies"
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
 * How a term's costs are scaled over the usable ranks before weighting: `"min-max"` (default,
 * `(c - min) / (max - min)`, all 0 when equal), `"max"` (`c / max`, 0 when max is 0), `"none"` (raw).
 *
 * @category own policies
 * @since 0.4.0
 */
export type Normalisation = "min-max" | "max" | "none"

/**
 * One weighted term: a scorer, its weight (finite, >= 0; 0 keeps it as a pure gate) and its
 * {@link Normalisation}.
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
 * Options of `makeScored` (only `scorers` required): `tieBreakers` (terms compared raw, in order,
 * between equal sums), `kvFeasible` (true: while a healthy rank's free KV holds the prompt no other
 * is chosen), `clientCount` / `clientIndex` (front ends: charges count `chargeScale`, default
 * `clientCount`; ties scan from `floor(dpSize * clientIndex / clientCount)` plus a cursor),
 * `staleAfterSeconds` (1), `inclusionMarginSeconds` (0), `maxIndexedBlocks` (65 536), `name`.
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
