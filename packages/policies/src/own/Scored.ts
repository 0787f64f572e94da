/**
 * `makeScored`: a policy from weighted, normalised scorers over the in-flight ledger (the combinator
 * of issue 16), with `ledger-balanced`'s charges, staleness rule, KV feasibility and rotating ties.
 *
 * @since 0.4.0
 */
import { doubles, packed } from "../internal/packed.js"
import { type Policy, type PolicyError, policyError, type RouteRequest, type RouteResult } from "../Policy.js"
import { checkNotInFlight, checkRequest } from "./internal/checkRequest.js"
import { kvFeasible } from "./internal/FreeKv.js"
import { addInflight, emptyInflight, finishInflight, type Inflight } from "./internal/Inflight.js"
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
import { LedgerScoreView } from "./internal/LedgerScoreView.js"
import { freshMax, isStaleRow, ledgerView } from "./internal/LoadView.js"
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
 * The state of a {@link makeScored} policy: the in-flight ledger, the rotating tie cursor, and the
 * prefix index and in-flight counts when a scorer uses them. Opaque and immutable.
 *
 * @category own policies
 * @since 0.4.0
 */
export interface ScoredState {
  readonly ledger: LedgerState
  readonly cursor: number
  readonly index: PrefixIndex | undefined
  readonly inflight: Inflight | undefined
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
 * Build a policy that routes each request to the rank with the lowest weighted sum of normalised
 * scorer costs (the combinator of issue 16).
 *
 * **What it optimises**: whatever its scorers measure, on one scale: each term's costs are
 * normalised over the ranks usable for this request (`"min-max"` by default: best 0, worst 1, all
 * 0 when every rank costs the same; or `"max"`, or `"none"`, see `Normalisation`), multiplied by
 * its weight and summed; the lowest sum wins, ties go to the `tieBreakers` (raw, in order), then to
 * the first rank in a rotating scan (the cursor advances on every scored route, as vLLM's
 * `eng_start_index`: repeated tied snapshots never keep favouring the same ranks). A scorer cost of
 * `+Infinity` excludes the rank (a gate, e.g. `Scorers.kvPressureGate`).
 *
 * The scorers read the in-flight ledger of `ledger-balanced` (`ScoreView`): every routed request is
 * charged until a snapshot stamped after it arrives or it finishes (`chargeScale` times), stale and
 * unknown ranks are never less busy than the busiest fresh / known one, unhealthy ranks are never
 * chosen, and (with `kvFeasible`) a rank whose free KV cannot hold the prompt is never chosen while
 * another's can. `ledger-balanced` is `tokens` (weight 1) with tie-breaker `requests` and the
 * `kvPressureGate`; `uncached-tokens` is `loadTokens` + `uncachedPromptTokens`, both `"none"` and
 * weight 1 (both shown decision for decision in the tests).
 *
 * **When to use**: to balance on several criteria at once (tokens, queue, KV, cached prefix) or to
 * try a criterion of your own without writing a policy. Upstream for comparison: llm-d's weighted,
 * min-max-normalised scorers with a max-score picker that breaks ties by a shuffle (`LlmD`,
 * llm-d/llm-d-router `pkg/epp/framework/plugins/scheduling/picker/maxscore/picker.go` @ ebab6879),
 * and vLLM's rotating `eng_start_index` (`vllm/v1/engine/core_client.py` @ 00080ee1,
 * `DPLBAsyncMPClient`). Errors: `NoRanks`, `InvalidInput`
 * (`inputLength`, or a bad option, named `clientCount`, `clientIndex`, `scorers[i].weight` ...; a
 * bad option fails every route, first), `InvalidRoutedRank`,
 * `AllRanksUnavailable`. `explanation.scores` holds each rank's weighted sum (`+Infinity` where not
 * usable); `details.candidates` the healthy ranks in scan order and `details.costs` each scorer's raw cost
 * per candidate in that order (as `makePowerOfChoices`), with `stale`, `unknown`, `excluded` (by a
 * gate) and `kvInfeasible`.
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
 * // tokens 1000/400/600 -> 1, 0, 1/3; waiting 0/3/1 -> 0, 1, 1/3
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
    ledger === s.ledger ? s : { ledger, cursor: s.cursor, index: s.index, inflight: s.inflight }

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
      index: s.index === undefined ? undefined : recordBlocks(s.index, request.prefixHashes, rank),
      inflight:
        s.inflight === undefined
          ? undefined
          : addInflight(s.inflight, request.requestId, rank, request.inputLength)
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
    const view = new LedgerScoreView(
      L,
      undefined,
      now,
      request,
      staleAfter,
      fm,
      chargeScale,
      s.index,
      s.inflight,
      undefined
    )
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
      if (isStaleRow(L, r, now, staleAfter)) stale = listed(stale, r)
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
      const ledger = emptyLedger(dpSize)
      const uses = !("_tag" in scoring)
      return {
        ledger,
        cursor: 0,
        index: uses && scoring.usesIndex ? emptyPrefixIndex(maxBlocks) : undefined,
        inflight: uses && scoring.usesInflight ? emptyInflight(ledger.dpSize) : undefined
      }
    },
    observe: (s, loads, now) =>
      Number.isFinite(now) ? withLedger(s, observeLedger(s.ledger, loads, margin, now)) : s,
    route,
    finish: (s, requestIds) => {
      const ledger = finishLedger(s.ledger, requestIds)
      const inflight = s.inflight === undefined ? undefined : finishInflight(s.inflight, requestIds)
      return ledger === s.ledger && inflight === s.inflight
        ? s
        : { ledger, cursor: s.cursor, index: s.index, inflight }
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
