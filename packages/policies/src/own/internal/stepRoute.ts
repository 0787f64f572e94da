/**
 * The route of `step-time-aware`: score every rank by its terms (`stepTerms.ts`), in seconds, and
 * commit the least, KV-feasible first (see `makeStepTimeAware`).
 *
 * @internal
 */
import { doubles } from "../../internal/packed.js"
import { policyError, type RouteRequest, type RouteResult } from "../../Policy.js"
import { prefillSeconds } from "../StepCost.js"
import type { StepTimeAwareState } from "../StepTimeAware.js"
import { checkNotInFlight, checkRequest } from "./checkRequest.js"
import { getTrie } from "./HashTrie.js"
import { displacesBest, freshMax, isDated } from "./LoadView.js"
import { withWaitingEstimate } from "./RankDemand.js"
import { matchRankPrefixes } from "./RankPrefixes.js"
import {
  commit,
  FIELDS,
  HORIZON,
  INFLIGHT,
  PENDING_REQUESTS,
  PENDING_TOKENS,
  price,
  SENT,
  type StepSettings,
  TERM_DECODE,
  TERM_HOME,
  TERM_OWN,
  TERM_SLOT,
  TERM_WAIT,
  TERMS
} from "./stepState.js"
import {
  decodeLoad,
  heldRequests,
  homeOf,
  ownPrefill,
  queuedPrefill,
  slotWait as slotWaitTerm,
  snapshotQueue
} from "./stepTerms.js"

export const route = (
  st: StepSettings,
  s: StepTimeAwareState,
  request: RouteRequest,
  now: number
): RouteResult<StepTimeAwareState> => {
  const {
    cost,
    clientCount,
    clientIndex,
    optionsError,
    decodeWeight,
    homeWeight,
    slotWait,
    staleAfter,
    trackInflight,
    sharedQuantum,
    matchScratch
  } = st
  if (optionsError !== undefined) return optionsError
  const { ledger } = s
  let { demand, priced } = s
  const n = ledger.dpSize
  const bad =
    checkRequest(n, request, now, ledger.healthy) ??
    checkNotInFlight(request, trackInflight && getTrie(s.inflight, request.requestId) !== undefined)
  if (bad !== undefined) return bad
  const input = request.inputLength
  const hashes = request.prefixHashes
  const blockTokens = hashes !== undefined && hashes.length > 0 ? input / hashes.length : 0
  const sr = s.ranks
  // exact-length arrays of doubles, one allocation each (`packed(n, 0)` grows by steps and
  // reallocates when a score is written: built, route+finish 694 -> 665 ns at 8 ranks, 4.3 ->
  // 3.6 us at 64, 58 -> 23 us at 1,024, interleaved in one process on the shared machine)
  const matched = doubles(n)
  const scores = doubles(n)
  if (request.routedDpRank !== undefined) {
    const r = request.routedDpRank
    return commit(st, s, request, now, r, s.cursor, 0, 0, scores, matched, undefined)
  }

  if (s.waitingUnpriced) {
    // rows that count waiting requests but no tokens came before anything was routed: price
    // them now, at the mean prompt routed since (this one for the first), not as an empty queue
    demand = withWaitingEstimate(demand, ledger.snapshots, s.routes > 0 ? s.routedUncached / s.routes : input)
    priced = price(st, ledger, demand)
  }
  // the busiest fresh queue and context (what a stale or unknown rank is never below): while
  // every rank that published is fresh, the maxima priced with the snapshot
  const allFresh = now - priced.oldestTimestamp <= staleAfter
  let maxQueued = priced.maxQueued
  let maxContext = priced.maxContext
  if (!allFresh) {
    maxQueued = 0
    maxContext = 0
    for (let r = 0; r < n; r++) {
      if (!isDated(ledger, r, now, staleAfter)) continue
      if (demand.queued[r]! > maxQueued) maxQueued = demand.queued[r]!
      if (demand.context[r]! > maxContext) maxContext = demand.context[r]!
    }
  }
  const keep = priced.cacheTokens
  matchRankPrefixes(
    s.prefixes,
    hashes,
    (rank, stamp) => clientCount * (sr[rank * FIELDS + SENT]! - stamp) <= keep[rank]!,
    matched,
    matchScratch
  )
  const fm =
    decodeWeight > 0 || priced.anyCap
      ? allFresh
        ? priced.freshMax
        : freshMax(ledger, now, staleAfter)
      : undefined
  // a stale or unknown rank is never less busy than the busiest fresh one, the prefill this front
  // end sent there since included: its wait and request count are at least theirs
  let floorWait = 0
  let floorRequests = 0
  // and while a fresh healthy rank exists, a stale or unknown one is not chosen at all: its
  // floors make it at most tied by load, and a prefix or a term it scores lower on (its context,
  // its decode) must not outweigh that it may be hung or gone (unknown is never attractive)
  let freshHealthy = false
  if (!allFresh || priced.anyUndated)
    for (let r = 0; r < n; r++) {
      if (!isDated(ledger, r, now, staleAfter)) continue
      if (ledger.healthy[r]) freshHealthy = true
      const o = r * FIELDS
      const queue = snapshotQueue(cost, clientCount, sharedQuantum, true, priced.queuedSeconds[r]!, 0, 0, 0)
      floorWait = Math.max(floorWait, sr[o + HORIZON]! - now, queue)
      if (fm !== undefined)
        floorRequests = Math.max(
          floorRequests,
          heldRequests(ledger, r, fm, now, staleAfter, true, sr[o + PENDING_REQUESTS]!, clientCount, 0)
        )
    }
  const start = (Math.floor((n * clientIndex) / clientCount) + s.cursor) % n
  // each rank's score terms (explanation only; the score is summed as before). A packed array of
  // doubles: built, route+finish at 8 ranks +7-11% over no terms; a Float64Array +60-70%, a
  // lazy getter that re-scores on access +60-70% (interleaved in one process, 2026-12-02)
  const terms = doubles(n * TERMS)
  const whole = prefillSeconds(cost, input, 0)
  const home = homeWeight > 0 && hashes !== undefined && hashes.length > 0 ? homeOf(hashes, matched, n) : -1
  // this prompt's own prefill after `ownCached` cached tokens (ranks holding the same prefix
  // share it: priced once per distinct prefix length, not once per rank)
  let ownCached = 0
  let own = whole
  // the first least score in scan order among the healthy ranks whose known free KV, minus what
  // was routed there since (clientCount times), holds the prompt (`best`), and while none does
  // among all healthy ranks (`alt`)
  let best = -1
  let bestScore = 0
  let bestQueue = 0
  let bestCached = 0
  let alt = -1
  let altScore = 0
  let altQueue = 0
  let altCached = 0
  for (let i = 0, r = start; i < n; i++, r = r + 1 === n ? 0 : r + 1) {
    const o = r * FIELDS
    // fresh: its newest row with request counts is recent (a partial one too: vLLM's rows)
    const f = isDated(ledger, r, now, staleAfter)
    const queue = snapshotQueue(
      cost,
      clientCount,
      sharedQuantum,
      f,
      priced.queuedSeconds[r]!,
      demand.queued[r]!,
      maxQueued,
      sr[o + PENDING_TOKENS]!
    )
    const wait = queuedPrefill(sr[o + HORIZON]! - now, queue, f, floorWait)
    // an engine computes at least the prompt's last token, however much of it is cached
    const cached = matched[r] === 0 ? 0 : Math.max(0, Math.min(input - 1, matched[r]! * blockTokens))
    if (cached !== ownCached) {
      ownCached = cached
      own = ownPrefill(cost, input, cached)
    }
    let score = wait + own
    const t = r * TERMS
    terms[t + TERM_WAIT] = wait
    terms[t + TERM_OWN] = own
    if (r === home && f && ledger.snapshots[r]?.unknown === undefined) {
      const credit = homeWeight * own
      score -= credit
      terms[t + TERM_HOME] = -credit
    }
    if (fm !== undefined) {
      const requests = heldRequests(
        ledger,
        r,
        fm,
        now,
        staleAfter,
        f,
        sr[o + PENDING_REQUESTS]!,
        clientCount,
        floorRequests
      )
      if (decodeWeight > 0) {
        const decoding = trackInflight ? Math.max(requests, clientCount * sr[o + INFLIGHT]!) : requests
        const context =
          (f ? demand.context[r]! : Math.max(demand.context[r]!, maxContext)) +
          clientCount * sr[o + PENDING_TOKENS]!
        const decode = decodeLoad(decodeWeight, cost, decoding, context, input)
        score += decode
        terms[t + TERM_DECODE] = decode
      }
      // with this request, the rank holds `requests + 1`: each beyond the cap waits for a slot
      const rankCap = priced.slotCaps[r]!
      if (requests >= rankCap) {
        const slot = slotWaitTerm(slotWait, requests, rankCap)
        score += slot
        terms[t + TERM_SLOT] = slot
      }
    }
    scores[r] = score
    const healthy = ledger.healthy[r]
    if (!healthy || (!f && freshHealthy)) continue
    // unknown is never attractive: on a tie a known rank beats one whose load is unknown
    if (healthy === true && demand.freeKv[r]! - clientCount * sr[o + PENDING_TOKENS]! >= input) {
      if (displacesBest(ledger, r, score, best, bestScore, now, staleAfter)) {
        best = r
        bestScore = score
        bestQueue = queue
        bestCached = cached
      }
    } else if (best < 0 && displacesBest(ledger, r, score, alt, altScore, now, staleAfter)) {
      alt = r
      altScore = score
      altQueue = queue
      altCached = cached
    }
  }
  if (best < 0) {
    best = alt
    bestQueue = altQueue
    bestCached = altCached
  }
  if (best < 0)
    return policyError(
      "AllRanksUnavailable",
      `Cannot route request: all ${n} DP ranks are unavailable.`,
      "status"
    )
  return commit(st, s, request, now, best, (s.cursor + 1) % n, bestQueue, bestCached, scores, matched, terms)
}
