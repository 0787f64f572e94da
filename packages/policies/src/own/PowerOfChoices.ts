/**
 * `makePowerOfChoices`: power of d choices, the scorer over d + 1 candidates, O(d) per route.
 *
 * @since 0.4.0
 */
import {
  type Explanation,
  type Policy,
  type PolicyError,
  policyError,
  type RouteRequest,
  type RouteResult
} from "../Policy.js"
import { type RngState, rngFromSeed } from "../peers/Draws.js"
import { allUnavailable, checkNotInFlight, checkRequest } from "./internal/checkRequest.js"
import {
  chargeLedger,
  chargeOf,
  emptyLedger,
  finishLedger,
  type LedgerState,
  ledgerHolds,
  observeLedger,
  setLedgerStatus
} from "./internal/InflightCharges.js"
import { type FreshMax, isDated, LedgerScoreView, ledgerView, type ViewCache } from "./internal/LoadView.js"
import { emptyPrefixIndex, type PrefixIndex, recordBlocks } from "./internal/PrefixIndex.js"
import { cacheOf, candidatesOf, drawOthers, fullScan, maxFreeOf } from "./internal/powerDraws.js"
import { pickBest, type Scoring, scoredSettings, scorerNames, scoringOf } from "./internal/ScoreCore.js"
import type { RankView } from "./RankView.js"
import { requests, tokens } from "./Scorers.js"
import type { ScoredOptions, WeightedScorer } from "./ScoreView.js"

/**
 * Options of {@link makePowerOfChoices}, all optional: `choices` (d, 2), `scorers` (`tokens`) /
 * `tieBreakers` (`requests`), `seed` (0, mixed with `clientIndex`), the rest as `ScoredOptions`
 * (terms that read in-flight counts get `undefined`).
 *
 * @category own policies
 * @since 0.4.0
 */
export interface PowerOfChoicesOptions extends Omit<ScoredOptions, "scorers"> {
  readonly choices?: number | undefined
  readonly scorers?: ReadonlyArray<WeightedScorer> | undefined
  readonly seed?: number | undefined
}

/**
 * What `observe` / `setStatus` precompute so a route never scans every rank: the busiest known
 * loads, the highest KV usage and waiting uncached tokens, the most free KV (`-Infinity`: none).
 * @category own policies
 * @since 0.4.0
 */
export interface PowerOfChoicesCache {
  readonly fm: FreshMax
  readonly view: ViewCache
  readonly maxFree: number
}

/**
 * The state of a {@link makePowerOfChoices} policy: the ledger (O(1) per charge), cursor, draws,
 * cache, prefix index. Opaque and immutable.
 *
 * @category own policies
 * @since 0.4.0
 */
export interface PowerOfChoicesState {
  readonly ledger: LedgerState
  readonly cursor: number
  readonly rng: RngState
  readonly cache: PowerOfChoicesCache
  readonly index: PrefixIndex | undefined
}

/**
 * A {@link makePowerOfChoices} policy plus `view`, the per-rank belief it routes on at `now`.
 *
 * @category own policies
 * @since 0.4.0
 */
export interface PowerOfChoicesPolicy extends Policy<PowerOfChoicesState> {
  readonly view: (state: PowerOfChoicesState, now: number) => ReadonlyArray<RankView>
}

/**
 * Power of d choices (`power-of-two-ledger` is d = 2): `makeScored`'s terms over the rotating
 * cursor's rank (first: it wins ties, so a burst goes round) and d seeded draws without
 * replacement; every rank when d + 1 >= ranks. A charge costs O(1) at any rank count (the one
 * ledger); a route scans every rank only when no drawn rank is usable
 * (`details.fallback`).
 *
 * **When to use**: thousands of ranks. Upstream for comparison: SMG's `power_of_two`
 * (lightseekorg/smg `model_gateway/src/policies/power_of_two.rs` @ 73da68ca). Errors: as
 * `makeScored`, plus `choices`.
 *
 * @example
 * ```ts
 * import { makePowerOfChoices } from "@loadledger/policies"
 * const p = makePowerOfChoices({ choices: 2, seed: 7 })
 * const rows = Array.from({ length: 1024 }, (_, dpRank) => ({ dpRank, timestamp: 1, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0 }))
 * let s = p.observe(p.init(1024), rows, 1)
 * const picked: Array<number> = []
 * for (let i = 0; i < 4; i++) {
 *   const r = p.route(s, { requestId: `r${i}`, inputLength: 100 }, 1 + i / 1000)
 *   if (r._tag === "Routed") { picked.push(r.rank); s = r.state }
 * }
 * picked // => [0, 1, 2, 3]
 * const next = p.route(s, { requestId: "r4", inputLength: 100 }, 1.01)
 * next._tag === "Routed" && (next.explanation.details?.["candidates"] as Array<number>).length // => 3
 * ```
 *
 * @category own policies
 * @since 0.4.0
 */
export const makePowerOfChoices = (options: PowerOfChoicesOptions = {}): PowerOfChoicesPolicy => {
  const d = options.choices ?? 2
  const { clientError, clientCount, clientIndex, chargeScale, staleAfter, margin, kvOn, maxBlocks } =
    scoredSettings(options)
  const scoring: Scoring | PolicyError =
    clientError ??
    (Number.isInteger(d) && d >= 1
      ? scoringOf(options.scorers ?? [{ scorer: tokens, weight: 1 }], options.tieBreakers ?? [requests])
      : policyError("InvalidInput", `choices must be an integer >= 1, got ${d}`, "choices"))
  const seed = ((options.seed ?? 0) + Math.imul(clientIndex, 0x9e3779b1)) | 0
  const names = "_tag" in scoring ? [] : scorerNames(scoring)
  const tieText = `lowest weighted sum (${names.join(", ")}) over the cursor's rank and ${d} drawn, cursor's first`

  const commit = (
    s: PowerOfChoicesState,
    ledger: LedgerState,
    request: RouteRequest,
    rank: number,
    cursor: number,
    rng: RngState,
    now: number,
    explanation: Explanation
  ): RouteResult<PowerOfChoicesState> => ({
    _tag: "Routed",
    rank,
    state: {
      ledger: chargeLedger(ledger, rank, chargeOf(request, now, chargeScale)),
      cursor,
      rng,
      cache: s.cache,
      index: s.index === undefined ? undefined : recordBlocks(s.index, request.prefixHashes, rank)
    },
    explanation
  })

  const route = (
    s: PowerOfChoicesState,
    request: RouteRequest,
    now: number
  ): RouteResult<PowerOfChoicesState> => {
    if ("_tag" in scoring) return scoring
    const base = s.ledger
    const n = base.dpSize
    const bad =
      checkRequest(n, request, now, base.healthy) ??
      checkNotInFlight(request, ledgerHolds(base, request.requestId))
    if (bad !== undefined) return bad
    if (request.routedDpRank !== undefined) {
      const r = request.routedDpRank
      return commit(s, s.ledger, request, r, s.cursor, s.rng, now, { tieBreak: "pinned by routedDpRank" })
    }
    const c0 = (Math.floor((n * clientIndex) / clientCount) + s.cursor) % n
    const { value: drawn, rng } = drawOthers(s.rng, n, d, c0)
    const dated = (r: number) => isDated(base, r, now, staleAfter)
    const len = request.inputLength
    const view = new LedgerScoreView(base, now, request, staleAfter, s.cache.fm, s.index, s.cache.view)
    const { cands, healthyDrawn, allowed, fallback } = candidatesOf(
      base,
      c0,
      drawn,
      dated,
      kvOn && s.cache.maxFree >= len ? len : undefined,
      view
    )
    const picked = fallback === undefined ? pickBest(view, cands, scoring, allowed) : undefined
    if (picked !== undefined && picked.best >= 0) {
      const stale: Array<number> = []
      // every drawn healthy rank found stale, the ones set aside for a fresh one included
      for (let i = 0; i < healthyDrawn.length; i++)
        if (view.stale(healthyDrawn[i]!)) stale.push(healthyDrawn[i]!)
      const costs: Record<string, Array<number>> = {}
      for (let k = 0; k < names.length; k++) costs[names[k]!] = picked.costs[k]!
      return commit(s, s.ledger, request, cands[picked.best]!, (s.cursor + 1) % n, rng, now, {
        tieBreak: tieText,
        stale,
        details: { candidates: cands, sums: picked.sums, costs, excluded: picked.excluded }
      })
    }
    // the rare full scan: decide over every healthy rank, as makeScored
    const { all, picked: p2 } = fullScan(base, c0, kvOn, len, dated, scoring, view)
    if (p2.best < 0) return allUnavailable(n)
    return commit(s, s.ledger, request, all[p2.best]!, (s.cursor + 1) % n, rng, now, {
      tieBreak: tieText,
      details: {
        candidates: all,
        sums: p2.sums,
        fallback: fallback ?? "every drawn rank was excluded by a gate"
      }
    })
  }

  return {
    name: options.name ?? "power-of-choices",
    init: (dpSize) => {
      const ledger = emptyLedger(dpSize)
      return {
        ledger,
        cursor: 0,
        rng: rngFromSeed(seed),
        cache: cacheOf(ledger),
        index: !("_tag" in scoring) && scoring.usesIndex ? emptyPrefixIndex(maxBlocks) : undefined
      }
    },
    observe: (s, loads, now) => {
      if (!Number.isFinite(now)) return s
      const ledger = observeLedger(s.ledger, loads, margin, now)
      if (ledger === s.ledger) return s
      return { ...s, ledger, cache: cacheOf(ledger) }
    },
    route,
    charge: (s, request, now) => {
      const r = route(s, request, now) // carried into a rebuilt state: the cursor moves as for a placement
      if (r._tag !== "Routed") return r
      return { ...r, state: { ...r.state, cursor: (s.cursor + 1) % s.ledger.dpSize } }
    },
    finish: (s, requestIds) => {
      const ledger = finishLedger(s.ledger, requestIds)
      return ledger === s.ledger ? s : { ...s, ledger }
    },
    setStatus: (s, status) => {
      const ledger = setLedgerStatus(s.ledger, status)
      return ledger === s.ledger ? s : { ...s, ledger, cache: { ...s.cache, maxFree: maxFreeOf(ledger) } }
    },
    view: (s, now) => ledgerView(s.ledger, now, staleAfter)
  }
}
