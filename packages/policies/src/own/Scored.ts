/**
 * `makeScored`: the one scorer, weighted terms over the one load view.
 *
 * @since 0.4.0
 */
import { doubles, packed } from "../internal/packed.js"
import { type Policy, type PolicyError, policyError, type RouteRequest, type RouteResult } from "../Policy.js"
import { checkNotInFlight, checkRequest } from "./internal/checkRequest.js"
import { kvFeasible } from "./internal/FreeKv.js"
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
import { freshMax, LedgerScoreView, ledgerView } from "./internal/LoadView.js"
import {
  emptyPrefixIndex,
  forgetRanks,
  type PrefixIndex,
  recordBlocks,
  wentDown
} from "./internal/PrefixIndex.js"
import { pickBest, type Scoring, scoredSettings, scorerNames, scoringOf } from "./internal/ScoreCore.js"
import type { RankView } from "./RankView.js"
import type { ScoredOptions } from "./ScoreView.js"

/**
 * The state of a {@link makeScored} policy: the ledger, the tie cursor, the prefix index (when a
 * term uses it). Opaque and immutable.
 *
 * @category own policies
 * @since 0.4.0
 */
export interface ScoredState {
  readonly ledger: LedgerState
  readonly cursor: number
  readonly index: PrefixIndex | undefined
}

/**
 * A {@link makeScored} policy plus `view`, the per-rank belief it routes on at `now`.
 *
 * @category own policies
 * @since 0.4.0
 */
export interface ScoredPolicy extends Policy<ScoredState> {
  readonly view: (state: ScoredState, now: number) => ReadonlyArray<RankView>
}

// shared by every explanation with nothing to list (frozen: a caller cannot add to it)
const noRanks = Object.freeze([]) as unknown as Array<number>
const ascending = (a: number, b: number): number => a - b
/** `xs` with `r` appended (a new list in place of the shared empty one). */
const listed = (xs: Array<number>, r: number): Array<number> => {
  const out = xs === noRanks ? [] : xs
  out.push(r)
  return out
}

/** Distinct keys for the explanation's `costs` (a repeated scorer name gets `#2`, `#3`, ...). */
const costKeys = (names: ReadonlyArray<string>): Array<string> => {
  const seen = new Map<string, number>()
  return names.map((n) => {
    const k = (seen.get(n) ?? 0) + 1
    seen.set(n, k)
    return k === 1 ? n : `${n}#${k}`
  })
}

/**
 * The one scorer: route to the rank with the lowest weighted sum of normalised term costs over the
 * in-flight ledger's view (`ScoreView`); ties by `tieBreakers` (raw, in order), then a rotating
 * scan (vLLM's `eng_start_index`, `vllm/v1/engine/core_client.py` @ 00080ee1). `+Infinity`
 * excludes a rank; stale, unknown, unhealthy and (with `kvFeasible`) KV-infeasible ranks as in
 * docs/own-policies.md. Upstream for comparison: llm-d's weighted scorers
 * (llm-d/llm-d-router `pkg/epp/framework/plugins/scheduling/picker/maxscore/picker.go` @ ebab6879).
 *
 * **When to use**: to balance on several terms at once or try a term of your own.
 * Errors: `NoRanks`, `InvalidInput` (`inputLength`, a bad option named), `InvalidRoutedRank`,
 * `AllRanksUnavailable`. `explanation.scores`: each rank's sum; `details.costs`: each term's raw
 * cost per candidate (`details.candidates`, scan order).
 *
 * @example
 * ```ts
 * import { makeScored, Scorers } from "@loadledger/policies"
 * const p = makeScored({
 *   scorers: [
 *     { scorer: Scorers.tokens, weight: 1 },
 *     { scorer: Scorers.waiting, weight: 1 }
 *   ]
 * })
 * const rows = [
 *   { dpRank: 0, timestamp: 1, numRunningReqs: 4, numWaitingReqs: 0, numTotalTokens: 1000 },
 *   { dpRank: 1, timestamp: 1, numRunningReqs: 0, numWaitingReqs: 3, numTotalTokens: 400 },
 *   { dpRank: 2, timestamp: 1, numRunningReqs: 2, numWaitingReqs: 1, numTotalTokens: 600 }
 * ]
 * const r = p.route(p.observe(p.init(3), rows, 1), { requestId: "a", inputLength: 100 }, 1)
 * r._tag === "Routed" && r.rank // => 2
 * r._tag === "Routed" && r.explanation.scores // => [1, 1, 2 / 3]
 * ```
 *
 * @category own policies
 * @since 0.4.0
 */
export const makeScored = (options: ScoredOptions): ScoredPolicy => {
  const { clientError, clientCount, clientIndex, chargeScale, staleAfter, margin, kvOn, maxBlocks } =
    scoredSettings(options)
  const scoring: Scoring | PolicyError = clientError ?? scoringOf(options.scorers, options.tieBreakers)
  const keys = "_tag" in scoring ? [] : costKeys(scorerNames(scoring))
  // the explanation's `costs` is cloned from one object with its keys (one hidden class: writing
  // the keys one by one into `{}` was the costliest line of a route, built, CPU profile)
  const costsShape: Record<string, Array<number>> = {}
  for (const k of keys) costsShape[k] = noRanks
  const tieText =
    "_tag" in scoring ? "" : `lowest weighted sum (${scorerNames(scoring).join(", ")}), then index from `
  // one tie-break text per scan start, made once
  const tieTexts: Array<string | undefined> = []
  const withLedger = (s: ScoredState, ledger: LedgerState): ScoredState =>
    ledger === s.ledger ? s : { ledger, cursor: s.cursor, index: s.index }

  const commit = (
    s: ScoredState,
    request: RouteRequest,
    rank: number,
    cursor: number,
    now: number,
    explanation: Routed["explanation"]
  ): Routed => ({
    _tag: "Routed",
    rank,
    state: {
      ledger: chargeLedger(s.ledger, rank, chargeOf(request, now, chargeScale)),
      cursor,
      index: s.index === undefined ? undefined : recordBlocks(s.index, request.prefixHashes, rank)
    },
    explanation
  })

  const route = (s: ScoredState, request: RouteRequest, now: number): RouteResult<ScoredState> => {
    if ("_tag" in scoring) return scoring
    const L = s.ledger
    const n = L.dpSize
    const bad =
      checkRequest(n, request, now, L.healthy) ?? checkNotInFlight(request, ledgerHolds(L, request.requestId))
    if (bad !== undefined) return bad
    if (request.routedDpRank !== undefined) {
      const r = request.routedDpRank
      return commit(s, request, r, s.cursor, now, { tieBreak: "pinned by routedDpRank" })
    }
    const fm = freshMax(L, now, staleAfter)
    const view = new LedgerScoreView(L, now, request, staleAfter, fm, s.index, undefined)
    const start = (Math.floor((n * clientIndex) / clientCount) + s.cursor) % n
    const ranks: Array<number> = []
    for (let i = 0, r = start; i < n; i++, r = r + 1 === n ? 0 : r + 1) if (L.healthy[r]) ranks.push(r)
    const fits = kvOn && ranks.length > 0 ? kvFeasible(L, request.inputLength) : undefined
    let allowed: Array<boolean> | undefined
    let kvInfeasible = noRanks
    if (fits !== undefined) {
      allowed = packed(ranks.length, false)
      for (let i = 0; i < ranks.length; i++) {
        allowed[i] = fits[ranks[i]!] === true
        if (!allowed[i]) kvInfeasible = listed(kvInfeasible, ranks[i]!)
      }
    }
    const picked = pickBest(view, ranks, scoring, allowed)
    if (picked.best < 0)
      return policyError(
        "AllRanksUnavailable",
        `Cannot route request: all ${n} DP ranks are unavailable.`,
        "status"
      )
    // the explanation, per rank (lists allocated only when not empty)
    const inf = Number.POSITIVE_INFINITY
    const scores = doubles(n)
    for (let r = 0; r < n; r++) scores[r] = inf
    // each scorer's raw costs as the scorer wrote them: per candidate, in `ranks` order
    const costs = { ...costsShape }
    for (let k = 0; k < keys.length; k++) costs[keys[k]!] = picked.costs[k]!
    for (let i = 0; i < ranks.length; i++) scores[ranks[i]!] = picked.sums[i]!
    let stale = noRanks
    let unknown = noRanks
    const ts = L.snapTimestamp
    for (let r = 0; r < n; r++) {
      const t = ts[r]!
      if (now - t <= staleAfter) continue
      if (Number.isNaN(t)) unknown = listed(unknown, r)
      // stale: its newest row with request counts is old (a partial one too, as ledger-balanced)
      if (view.stale(r)) stale = listed(stale, r)
    }
    if (kvInfeasible.length > 1) kvInfeasible.sort(ascending)
    if (picked.excluded.length > 1) picked.excluded.sort(ascending)
    const tieBreak = tieTexts[start] ?? `${tieText}${start}`
    tieTexts[start] = tieBreak
    return commit(s, request, ranks[picked.best]!, (s.cursor + 1) % n, now, {
      scores,
      tieBreak,
      stale,
      details: { candidates: ranks, costs, unknown, excluded: picked.excluded, kvInfeasible }
    })
  }

  return {
    name: options.name ?? "scored",
    init: (dpSize) => {
      const uses = !("_tag" in scoring)
      return {
        ledger: emptyLedger(dpSize, uses && scoring.usesInflight),
        cursor: 0,
        index: uses && scoring.usesIndex ? emptyPrefixIndex(maxBlocks) : undefined
      }
    },
    observe: (s, loads, now) =>
      Number.isFinite(now) ? withLedger(s, observeLedger(s.ledger, loads, margin, now)) : s,
    route,
    finish: (s, requestIds) => {
      const ledger = finishLedger(s.ledger, requestIds)
      return ledger === s.ledger ? s : { ledger, cursor: s.cursor, index: s.index }
    },
    setStatus: (s, status) => {
      const next = withLedger(s, setLedgerStatus(s.ledger, status))
      // a rank marked unhealthy keeps none of its prefix entries (the stale-prefix law)
      const down = next === s || s.index === undefined ? 0 : wentDown(s.ledger.healthy, next.ledger.healthy)
      return down === 0 ? next : { ...next, index: forgetRanks(s.index!, down) }
    },
    view: (s, now) => ledgerView(s.ledger, now, staleAfter)
  }
}

type Routed = Extract<RouteResult<ScoredState>, { _tag: "Routed" }>
