/**
 * The route of `step-time-aware`: the staleness floors and inputs, the terms summed (`stepTerms.ts`),
 * then admission and the tie-break, and the routed state.
 *
 * @internal
 */
import { doubles } from "../../internal/packed.js"
import type { RouteRequest, RouteResult } from "../../Policy.js"
import { prefillSeconds } from "../StepCost.js"
import type { StepTimeAwareState } from "../StepTimeTypes.js"
import { allUnavailable, checkNotInFlight, checkRequest } from "./checkRequest.js"
import { getTrie, setTrie } from "./HashTrie.js"
import { displacesBest, freshMax, isDated } from "./LoadView.js"
import { withWaitingEstimate } from "./RankDemand.js"
import { matchRankPrefixes, recordRankPrefixes } from "./RankPrefixes.js"
import * as S from "./stepState.js"
import {
  cachedOf,
  heldRequests,
  homeOf,
  type RouteInputs,
  scoreRanks,
  snapshotQueue,
  TERMS,
  termNames
} from "./stepTerms.js"

/** The inputs of the terms: the demand (priced now if it must be), the prefix match, the staleness floors. */
const inputsOf = (
  st: S.StepSettings,
  s: StepTimeAwareState,
  request: RouteRequest,
  now: number,
  matched: Array<number>
): RouteInputs => {
  const { ledger, ranks } = s
  const { clientCount, staleAfter } = st
  const n = ledger.dpSize
  const input = request.inputLength
  const hashes = request.prefixHashes
  let demand = s.demand
  // rows that count waiting requests but no tokens came before anything was routed: price them at
  // the mean prompt routed since (this one for the first), not as an empty queue
  if (s.waitingUnpriced) {
    const mean = s.routes > 0 ? s.routedUncached / s.routes : input
    demand = S.price(st, ledger, withWaitingEstimate(demand, ledger.snapshots, mean))
  }
  // the busiest fresh queue and context (what a stale or unknown rank is never below)
  const allFresh = now - demand.oldestTimestamp <= staleAfter
  let maxQueued = demand.maxQueued
  let maxContext = demand.maxContext
  if (!allFresh) {
    maxQueued = 0
    maxContext = 0
    for (let r = 0; r < n; r++) {
      if (!isDated(ledger, r, now, staleAfter)) continue
      if (demand.queued[r]! > maxQueued) maxQueued = demand.queued[r]!
      if (demand.context[r]! > maxContext) maxContext = demand.context[r]!
    }
  }
  const keep = demand.cacheTokens
  const held = (rank: number, stamp: number) =>
    clientCount * (ranks[rank * S.FIELDS + S.SENT]! - stamp) <= keep[rank]!
  matchRankPrefixes(s.prefixes, hashes, held, matched, st.matchScratch)
  const fm =
    st.decodeWeight > 0 || demand.anyCap
      ? allFresh
        ? demand.freshMax
        : freshMax(ledger, now, staleAfter)
      : undefined
  const homed = st.homeWeight > 0 && hashes !== undefined && hashes.length > 0
  const x: RouteInputs = {
    st,
    ledger,
    ranks,
    demand,
    now,
    input,
    matched,
    blockTokens: hashes !== undefined && hashes.length > 0 ? input / hashes.length : 0,
    maxQueued,
    maxContext,
    fm,
    home: homed ? homeOf(hashes, matched, n) : -1,
    speeds: s.speeds,
    floorWait: 0,
    floorRequests: 0,
    freshHealthy: false,
    own: prefillSeconds(st.cost, input, 0),
    ownCached: 0
  }
  // a stale or unknown rank is never less busy than the busiest fresh one (this front end's routes
  // since included), and while a fresh healthy rank exists it is not chosen at all (unknown is
  // never attractive: a prefix or a term it scores lower on must not outweigh that it may be gone)
  if (!allFresh || demand.anyUndated)
    for (let r = 0; r < n; r++) {
      if (!isDated(ledger, r, now, staleAfter)) continue
      if (ledger.healthy[r]) x.freshHealthy = true
      x.floorWait = Math.max(x.floorWait, ranks[r * S.FIELDS + S.HORIZON]! - now, snapshotQueue(x, r, true))
      if (fm !== undefined) x.floorRequests = Math.max(x.floorRequests, heldRequests(x, r, true))
    }
  return x
}

/**
 * Admission and tie-break: in scan order from `start`, the first least score among the healthy ranks
 * whose known free KV, minus what was routed there since (`clientCount` times), holds the prompt;
 * while none does, among all healthy ones; a stale or unknown rank only while no fresh one is healthy.
 */
const pick = (x: RouteInputs, scores: ReadonlyArray<number>, start: number): number => {
  const { ledger, now } = x
  const { staleAfter, clientCount } = x.st
  const n = ledger.dpSize
  let best = -1
  let bestScore = 0
  let alt = -1
  let altScore = 0
  for (let i = 0, r = start; i < n; i++, r = r + 1 === n ? 0 : r + 1) {
    const healthy = ledger.healthy[r]
    if (!healthy || (x.freshHealthy && !isDated(ledger, r, now, staleAfter))) continue
    const score = scores[r]!
    const pending = clientCount * x.ranks[r * S.FIELDS + S.PENDING_TOKENS]!
    // unknown is never attractive: on a tie a known rank beats one whose load is unknown
    if (healthy === true && x.demand.freeKv[r]! - pending >= x.input) {
      if (displacesBest(ledger, r, score, best, bestScore, now, staleAfter)) {
        best = r
        bestScore = score
      }
    } else if (best < 0 && displacesBest(ledger, r, score, alt, altScore, now, staleAfter)) {
      alt = r
      altScore = score
    }
  }
  return best < 0 ? alt : best
}

export const route = (
  st: S.StepSettings,
  s: StepTimeAwareState,
  request: RouteRequest,
  now: number
): RouteResult<StepTimeAwareState> => {
  if (st.optionsError !== undefined) return st.optionsError
  const n = s.ledger.dpSize
  const bad =
    checkRequest(n, request, now, s.ledger.healthy) ??
    checkNotInFlight(request, st.trackInflight && getTrie(s.inflight, request.requestId) !== undefined)
  if (bad !== undefined) return bad
  // exact-length arrays of doubles (`packed(n, 0)` reallocates when a score is written: built,
  // route+finish 694 -> 665 ns at 8 ranks, 58 -> 23 us at 1,024, interleaved in one process)
  const matched = doubles(n)
  const scores = doubles(n)
  if (request.routedDpRank !== undefined)
    return commit(st, s, request, now, request.routedDpRank, s.cursor, 0, 0, scores, matched, undefined)
  const x = inputsOf(st, s, request, now, matched)
  // the terms, for the explanation (built, +7-11% of a route at 8 ranks; a Float64Array or a lazy
  // getter +60-70%, interleaved in one process, 2026-12-02)
  const terms = doubles(n * TERMS)
  scoreRanks(x, scores, terms)
  const best = pick(x, scores, (Math.floor((n * st.clientIndex) / st.clientCount) + s.cursor) % n)
  if (best < 0) return allUnavailable(n)
  const queue = snapshotQueue(x, best, isDated(s.ledger, best, now, st.staleAfter))
  const cursor = (s.cursor + 1) % n
  return commit(st, s, request, now, best, cursor, queue, cachedOf(x, best), scores, matched, terms)
}

/** The routed state and result: `rank` charged with `request` after a queue of `queue` seconds. */
const commit = (
  st: S.StepSettings,
  s: StepTimeAwareState,
  request: RouteRequest,
  now: number,
  rank: number,
  cursor: number,
  queue: number,
  cached: number,
  scores: Array<number>,
  matched: Array<number>,
  terms: Array<number> | undefined
): RouteResult<StepTimeAwareState> => {
  const input = request.inputLength
  const ranks = s.ranks.slice()
  const o = rank * S.FIELDS
  // this prefill starts after the rank's queue as scored or this front end's earlier prompts
  ranks[o + S.HORIZON] =
    Math.max(now + queue, ranks[o + S.HORIZON]!) + prefillSeconds(st.cost, input - cached, cached)
  ranks[o + S.PENDING_REQUESTS]! += 1
  ranks[o + S.PENDING_TOKENS]! += input - cached
  ranks[o + S.PENDING_SINCE] = now
  const sent = ranks[o + S.SENT]! + input
  ranks[o + S.SENT] = sent
  let inflight = s.inflight
  if (st.trackInflight && getTrie(inflight, request.requestId) === undefined) {
    ranks[o + S.INFLIGHT]! += 1
    ranks[o + S.INFLIGHT_TOKENS]! += input
    inflight = setTrie(inflight, request.requestId, input * S.RANK_SPAN + rank)
  }
  const state: StepTimeAwareState = {
    ledger: s.ledger,
    demand: s.demand,
    cursor,
    routes: s.routes + 1,
    routedUncached: s.routedUncached + input - cached,
    waitingUnpriced: s.waitingUnpriced,
    ranks,
    inflight,
    prefixes: recordRankPrefixes(s.prefixes, request.prefixHashes, rank, sent),
    ...(s.speeds === undefined ? {} : { speeds: s.speeds })
  }
  const details =
    terms === undefined ? { matchedBlocks: matched } : { matchedBlocks: matched, terms, termNames }
  const tieBreak =
    "least predicted prefill wait + own prefill (+ decode, + slot wait, - home credit) in seconds, then rotating index"
  return { _tag: "Routed", rank, state, explanation: { scores, tieBreak, details } }
}
