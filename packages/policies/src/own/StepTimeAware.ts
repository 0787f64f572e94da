/**
 * The `step-time-aware` policy: place each request where the lockstep DP group's predicted step
 * time, prefill chunks included, grows least, and among such places where its own first token
 * comes soonest.
 *
 * Over 300 lines: one policy, whose `route` reads each per-rank field once in one pass; about a
 * third of the file is the docstring that explains the rule.
 *
 * @since 0.4.0
 */
import { doubles, packed } from "../internal/packed.js"
import { type Policy, policyError, type RankLoad, type RouteRequest, type RouteResult } from "../Policy.js"
import { checkRequest } from "./internal/checkRequest.js"
import { emptyTrie, getTrie, type HashTrie, setTrie } from "./internal/HashTrie.js"
import { emptyLedger, type LedgerState, observeLedger, setLedgerStatus } from "./internal/InflightCharges.js"
import {
  type FreshMax,
  freshMax,
  isFresh,
  ledgerView,
  unknownBase,
  unknownLevel
} from "./internal/LoadView.js"
import { poolOf, type RankDemand, rankDemand } from "./internal/RankDemand.js"
import {
  emptyMatchScratch,
  emptyRankPrefixes,
  matchRankPrefixes,
  type RankPrefixes,
  recordRankPrefixes
} from "./internal/RankPrefixes.js"
import type { RankView } from "./RankView.js"
import { glm53H200StepCost, prefillSeconds, type StepCostModel } from "./StepCost.js"

/**
 * Options of {@link makeStepTimeAware}. Every field is optional.
 *
 * - `cost` ({@link glm53H200StepCost}): the step cost model, e.g. from `stepCostFrom`.
 * - `clientCount` / `clientIndex`: front ends sharing the ranks (see "Several front ends" on
 *   {@link makeStepTimeAware}); the tie scan starts at `floor(dpSize * clientIndex / clientCount)`.
 * - `decodeWeight` (8 with one front end, 0 with several): how many decode steps of a rank's
 *   decode cost count against a second of predicted time to first token (see "Decode" on
 *   {@link makeStepTimeAware}). 0 leaves decode balance to the rotating tie-break; above 0 with
 *   several front ends the policy also tracks its requests in flight (the `clientCount` x
 *   in-flight floor).
 * - `sharedQueueQuantumSeconds` (1): with several front ends, a fresh rank's snapshot queue
 *   counts in whole steps of this many seconds of predicted prefill (0: not at all).
 * - `kvPoolTokens`: every rank's KV pool in tokens. Default: per rank, from its rows
 *   (`maxTotalNumTokens`, `tokenCapacity`, `numUsedTokens / kvCacheUsage`, or `numTotalTokens /
 *   kvCacheUsage` while nothing waits).
 * - `cacheTokens`: how many prompt tokens a rank's prefix cache keeps (LRU). Default: its KV pool,
 *   262,144 while no pool is known.
 * - `maxIndexedBlocks` (65,536): bound of the router-side prefix index.
 * - `staleAfterSeconds` (1) / `inclusionMarginSeconds` (0): as in `ledger-balanced`.
 *
 * @category own policies
 * @since 0.4.0
 */
export interface StepTimeAwareOptions {
  readonly cost?: StepCostModel | undefined
  readonly clientCount?: number | undefined
  readonly clientIndex?: number | undefined
  readonly decodeWeight?: number | undefined
  readonly sharedQueueQuantumSeconds?: number | undefined
  readonly kvPoolTokens?: number | undefined
  readonly cacheTokens?: number | undefined
  readonly maxIndexedBlocks?: number | undefined
  readonly staleAfterSeconds?: number | undefined
  readonly inclusionMarginSeconds?: number | undefined
}

/** Per-rank fields of `StepTimeAwareState.ranks`, `FIELDS` numbers per rank. */
const HORIZON = 0 // when this front end's prefills on the rank end (seconds, absolute)
const PENDING_REQUESTS = 1 // requests routed since the rank's snapshot
const PENDING_TOKENS = 2 // their prompt tokens still to prefill
const PENDING_SINCE = 3 // routing time of the newest of them
const INFLIGHT = 4 // requests routed and not finished (tracked with decodeWeight > 0 and several front ends)
const INFLIGHT_TOKENS = 5 // their prompt tokens
const SENT = 6 // prompt tokens sent to the rank so far (the prefix index's clock)
const FIELDS = 7
/** `inflight` values: `tokens * RANK_SPAN + rank`. */
const RANK_SPAN = 1 << 20

/**
 * The state of a `step-time-aware` policy. Opaque and immutable: `ledger` holds the newest
 * snapshot per rank and health (no charges), `demand` what those snapshots say each rank still
 * has to do (and `priced`, what routing reads of it, priced once per snapshot), `ranks` this
 * front end's per-rank bookkeeping (prefill horizon, routes not yet in a snapshot, requests in
 * flight, prefix clock), `inflight` the rank and prompt of each request in flight, `prefixes` the
 * router-side prefix index. Any state can be routed from again, in any order; the prefix index is
 * cheapest when each state is used once, in order (as a router threads it), and a state kept alive
 * while its successors route on keeps the index writes made since it (one small record per
 * recorded block).
 *
 * @category own policies
 * @since 0.4.0
 */
export interface StepTimeAwareState {
  readonly ledger: LedgerState
  readonly demand: RankDemand
  readonly priced: PricedDemand
  readonly cursor: number
  readonly ranks: ReadonlyArray<number>
  readonly inflight: HashTrie<number>
  readonly prefixes: RankPrefixes
}

/**
 * What `route` reads of the snapshots, derived once per `observe` rather than once per route:
 * per rank the seconds of prefill its snapshot shows queued and the prompt tokens its prefix cache
 * keeps (its KV pool; the largest known while its own is unknown); over the ranks that published
 * a known load, the oldest snapshot time (`Infinity`: none) and the largest queue and context
 * (while all of them are fresh, what a stale or unknown rank is never below).
 *
 * @category own policies
 * @since 0.4.0
 */
export interface PricedDemand {
  readonly queuedSeconds: ReadonlyArray<number>
  readonly cacheTokens: ReadonlyArray<number>
  readonly oldestTimestamp: number
  readonly maxQueued: number
  readonly maxContext: number
  /** `freshMax` while every rank that published is fresh (the decode term's floors). */
  readonly freshMax: FreshMax
}

/**
 * A `step-time-aware` policy plus `view`, the per-rank load it reads at `now`.
 *
 * @category own policies
 * @since 0.4.0
 */
export interface StepTimeAwarePolicy extends Policy<StepTimeAwareState> {
  readonly view: (state: StepTimeAwareState, now: number) => ReadonlyArray<RankView>
}

/**
 * Build loadledger's step-time-aware policy (`step-time-aware`).
 *
 * **What it optimises**: the predicted lockstep step time of the DP group after admission, prefill
 * chunks included. In a lockstep step every rank waits for the slowest, and a rank's prefill
 * chunk (up to `cost.chunkTokens` tokens) makes the step it runs in many times longer than a
 * decode step: the group's time is the sum over steps of the slowest rank's local time. Placing a
 * prompt on rank `r` therefore costs the group nothing while its prefill ends before the busiest
 * rank's prefill ends (it runs in steps that are long anyway), and the overhang otherwise; in both
 * cases the request's first token comes once `r` has done the prefill queued before it and then
 * this one. The policy picks the rank with the least
 *
 *     max(horizon_r - now, prefill(queued_r)) + prefill(uncached_r, cached_r)  [+ decodeWeight * decode_r]
 *
 * seconds (`prefill` priced by `cost`, see `prefillSeconds`): the rank's prefill horizon (when the
 * prompts this front end sent it are prefilled, as the cost model predicts) or the prefill of the
 * tokens its snapshot shows waiting, whichever is later; then this prompt's uncached tokens after
 * the prefix the rank is taken to still cache (a router-side index of the blocks sent to each
 * rank, aged by the tokens sent to the rank since: LRU of `cacheTokens`). Minimising it minimises
 * the overhang and, among placements with none, the request's predicted time to first token: a
 * long prompt's neighbours go where their prefill overlaps it, and a shared prefix attracts only
 * while the prefill it saves outweighs the queue it joins (no herding). Exact ties (ranks with
 * nothing left to prefill) break by a rotating index, so idle ranks take turns, as vLLM's rotating
 * `eng_start_index`. Each term is a per-rank cost in seconds, the shape a weighted-scorer
 * combinator sums.
 *
 * **Decode.** Every step is as long as the slowest rank's, decode included, so a rank's decode
 * load (its requests and their context) also sets the group's step time. With `decodeWeight` w
 * above 0 the score adds w x the rank's decode step cost after admission (`(requests + 1) *
 * decodeSecondsPerRequest + (context + prompt) * decodeSecondsPerContextToken`; with several front
 * ends, requests never below `clientCount` x this front end's in flight). The default is 8 with one
 * front end, whose snapshot is fresh at every step: in the simulator, on the Mooncake traces at 70%
 * of capacity behind one SGLang controller, any w from 4 to 16 lowered TTFT p99 by 2-4% and ITL p99
 * by up to 3% against w = 0 (w = 2 did not). With several front ends the default is 0: the decode
 * term is read from the shared stale snapshot, and on the Azure conversation trace behind four
 * vLLM front ends w = 0.5 to 32 raised TTFT p99 by 30-50% (herding, as for the queue below).
 *
 * **Several front ends** (`clientCount` > 1, vLLM API servers): they all read the same snapshot,
 * published every 100 ms or so, and a fine-grained term every front end reads from the same stale
 * view sends them all to the same rank until the next publish (herding; in the simulator, behind
 * four vLLM front ends on the Azure conversation trace, counting the snapshot's queue in full cost
 * 15-20% on TTFT p99). So each front end scores a fresh rank on what only it knows (its own
 * prefill horizon) plus the snapshot's queue rounded down to whole `sharedQueueQuantumSeconds`
 * (1 s) of predicted prefill: below that, differences are what herding is made of and ties go
 * round the rotating index, whose scan starts at `floor(dpSize * clientIndex / clientCount)`;
 * above it (an overloaded rank) the queue counts. The snapshot still bounds stale and unknown
 * ranks in full and excludes KV-infeasible ones, counting this front end's routes since it
 * `clientCount` times. One front end (SGLang's controller) reads a fresh snapshot per step: there
 * the queue counts in full.
 *
 * **The cost model is an argument** (`cost`, default {@link glm53H200StepCost}): the policies
 * package does not depend on `@loadledger/step-time` (which depends on nothing of ours, so it
 * could without a cycle); a routing decision needs six coefficients, not the step-time model,
 * and keeping the model out keeps the package (and the live router) free of step-time's CSV and
 * matrix dependencies. `stepCostFrom` fits the coefficients from `stepTimeFromAggregates` or any
 * step-time function.
 *
 * **When to use**: DP-attention groups (SGLang DP attention, vLLM DP + EP) whose prefill chunks
 * stall the group: long or uneven prompts, multi-turn chat with prefix reuse, bursts of prompts.
 *
 * **Unknown, absent, stale, unhealthy**: counts as in `ledger-balanced` (an unknown or stale rank
 * is never less busy than the busiest known or fresh one); a field a rank does not report (queued
 * tokens, context tokens, KV pool) takes the busiest reported value; unhealthy ranks are never
 * chosen. KV feasibility: while some healthy rank's known free KV, minus the prompt tokens
 * routed to it since its snapshot, holds the prompt, no other rank is chosen. Exact ties break by
 * a rotating index. The prefix index covers any number of ranks.
 *
 * Errors: `NoRanks`, `InvalidInput` (`inputLength`), `InvalidRoutedRank`, `AllRanksUnavailable`.
 *
 * @example
 * ```ts
 * import { makeStepTimeAware } from "@loadledger/policies"
 * const p = makeStepTimeAware()
 * const idle = (dpRank: number) => ({ dpRank, timestamp: 0, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0 })
 * const s0 = p.observe(p.init(2), [idle(0), idle(1)], 0)
 * const a = p.route(s0, { requestId: "a", inputLength: 60000, prefixHashes: ["x"] }, 0)
 * a._tag === "Routed" && a.rank // => 0
 * // rank 0 prefills a for seconds: b goes to rank 1, where its prefill overlaps a's
 * const b = a._tag === "Routed" ? p.route(a.state, { requestId: "b", inputLength: 2000 }, 0.1) : a
 * b._tag === "Routed" && b.rank // => 1
 * ```
 *
 * @category own policies
 * @since 0.4.0
 */
export const makeStepTimeAware = (options: StepTimeAwareOptions = {}): StepTimeAwarePolicy => {
  const cost = options.cost ?? glm53H200StepCost
  const clientCount = options.clientCount !== undefined && options.clientCount >= 1 ? options.clientCount : 1
  const decodeWeight = options.decodeWeight ?? (clientCount === 1 ? 8 : 0)
  const clientIndex = options.clientIndex ?? 0
  const fixedPool = options.kvPoolTokens
  const cacheTokens = options.cacheTokens
  const staleAfter = options.staleAfterSeconds ?? 1
  const margin = options.inclusionMarginSeconds ?? 0
  const maxBlocks = options.maxIndexedBlocks ?? 65_536
  const dReq = cost.decodeSecondsPerRequest
  const dCtx = cost.decodeSecondsPerContextToken
  // one front end reads a fresh snapshot at every step: snapshot + routes since need no floor
  const trackInflight = decodeWeight > 0 && clientCount > 1
  const sharedQuantum = options.sharedQueueQuantumSeconds ?? 1

  // working memory of the prefix match, written and read within one `route` call, never returned
  const matchScratch = emptyMatchScratch()

  const price = (ledger: LedgerState, demand: RankDemand): PricedDemand => {
    const fallback = demand.maxPool > 0 ? demand.maxPool : 262_144
    let oldestTimestamp = Number.POSITIVE_INFINITY
    let maxQueued = 0
    let maxContext = 0
    for (let r = 0; r < ledger.dpSize; r++) {
      const at = ledger.snapTimestamp[r]!
      if (Number.isNaN(at)) continue
      if (at < oldestTimestamp) oldestTimestamp = at
      if (demand.queued[r]! > maxQueued) maxQueued = demand.queued[r]!
      if (demand.context[r]! > maxContext) maxContext = demand.context[r]!
    }
    return {
      queuedSeconds: demand.queued.map((q) => prefillSeconds(cost, q, 0)),
      cacheTokens: demand.pool.map((pool) => cacheTokens ?? (Number.isNaN(pool) ? fallback : pool)),
      oldestTimestamp,
      maxQueued,
      maxContext,
      // at the oldest snapshot's time every published rank is fresh
      freshMax: freshMax(ledger, oldestTimestamp, staleAfter)
    }
  }

  const init = (dpSize: number): StepTimeAwareState => {
    const ledger = emptyLedger(dpSize)
    const ranks = packed(ledger.dpSize * FIELDS, 0)
    for (let r = 0; r < ledger.dpSize; r++) ranks[r * FIELDS + PENDING_SINCE] = Number.NEGATIVE_INFINITY
    const demand = rankDemand(ledger.snapshots, packed(ledger.dpSize, fixedPool ?? Number.NaN))
    return {
      ledger,
      demand,
      priced: price(ledger, demand),
      cursor: 0,
      ranks,
      inflight: emptyTrie(1_000_000),
      prefixes: emptyRankPrefixes(maxBlocks)
    }
  }

  const observe = (
    s: StepTimeAwareState,
    loads: ReadonlyArray<RankLoad>,
    now: number
  ): StepTimeAwareState => {
    if (!Number.isFinite(now)) return s
    const ledger = observeLedger(s.ledger, loads, margin, now)
    if (ledger === s.ledger) return s
    const ranks = s.ranks.slice()
    const pools = s.demand.pool.slice()
    for (let r = 0; r < ledger.dpSize; r++) {
      if (ledger.snapshots[r] === s.ledger.snapshots[r]) continue
      // a snapshot stamped after the newest pending route includes every pending route
      if (ledger.snapTimestamp[r]! - margin >= ranks[r * FIELDS + PENDING_SINCE]!) {
        ranks[r * FIELDS + PENDING_REQUESTS] = 0
        ranks[r * FIELDS + PENDING_TOKENS] = 0
      }
      const row = ledger.snapshots[r]
      const pool = fixedPool ?? (row === undefined || row.unknown !== undefined ? undefined : poolOf(row))
      if (pool !== undefined) pools[r] = pool
    }
    const demand = rankDemand(ledger.snapshots, pools)
    return {
      ...s,
      ledger,
      demand,
      priced: price(ledger, demand),
      ranks
    }
  }

  const finish = (s: StepTimeAwareState, ids: ReadonlyArray<string>): StepTimeAwareState => {
    if (!trackInflight) return s
    let inflight = s.inflight
    let ranks: Array<number> | undefined
    for (const id of ids) {
      const x = getTrie(inflight, id)
      if (x === undefined) continue
      const r = x % RANK_SPAN
      ranks ??= s.ranks.slice()
      ranks[r * FIELDS + INFLIGHT] = Math.max(0, ranks[r * FIELDS + INFLIGHT]! - 1)
      ranks[r * FIELDS + INFLIGHT_TOKENS] = Math.max(
        0,
        ranks[r * FIELDS + INFLIGHT_TOKENS]! - (x - r) / RANK_SPAN
      )
      inflight = setTrie(inflight, id, undefined)
    }
    return ranks === undefined ? s : { ...s, ranks, inflight }
  }

  /** The routed state and result: `rank` charged with `request` after a queue of `queue` seconds. */
  const commit = (
    s: StepTimeAwareState,
    request: RouteRequest,
    now: number,
    rank: number,
    cursor: number,
    queue: number,
    cached: number,
    scores: Array<number>,
    matched: Array<number>
  ): RouteResult<StepTimeAwareState> => {
    const input = request.inputLength
    const ranks = s.ranks.slice()
    const o = rank * FIELDS
    // this prompt's prefill starts after the rank's queue as scored, or after this front end's
    // earlier prompts, whichever ends later
    ranks[o + HORIZON] =
      Math.max(now + queue, ranks[o + HORIZON]!) + prefillSeconds(cost, input - cached, cached)
    ranks[o + PENDING_REQUESTS]! += 1
    ranks[o + PENDING_TOKENS]! += input - cached
    ranks[o + PENDING_SINCE] = now
    const sent = ranks[o + SENT]! + input
    ranks[o + SENT] = sent
    let inflight = s.inflight
    if (trackInflight && getTrie(inflight, request.requestId) === undefined) {
      ranks[o + INFLIGHT]! += 1
      ranks[o + INFLIGHT_TOKENS]! += input
      inflight = setTrie(inflight, request.requestId, input * RANK_SPAN + rank)
    }
    return {
      _tag: "Routed",
      rank,
      state: {
        ledger: s.ledger,
        demand: s.demand,
        priced: s.priced,
        cursor,
        ranks,
        inflight,
        prefixes: recordRankPrefixes(s.prefixes, request.prefixHashes, rank, sent)
      },
      explanation: {
        scores,
        tieBreak: "least predicted prefill wait + own prefill (+ decode) in seconds, then rotating index",
        details: { matchedBlocks: matched }
      }
    }
  }

  const route = (
    s: StepTimeAwareState,
    request: RouteRequest,
    now: number
  ): RouteResult<StepTimeAwareState> => {
    const { ledger, demand } = s
    const n = ledger.dpSize
    const bad = checkRequest(n, request, now)
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
      return commit(s, request, now, r, s.cursor, 0, 0, scores, matched)
    }

    // the busiest fresh queue and context (what a stale or unknown rank is never below): while
    // every rank that published is fresh, the maxima priced with the snapshot
    const { priced } = s
    const allFresh = now - priced.oldestTimestamp <= staleAfter
    let maxQueued = priced.maxQueued
    let maxContext = priced.maxContext
    if (!allFresh) {
      maxQueued = 0
      maxContext = 0
      for (let r = 0; r < n; r++) {
        if (!isFresh(ledger, r, now, staleAfter)) continue
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
    const fm = decodeWeight > 0 ? (allFresh ? priced.freshMax : freshMax(ledger, now, staleAfter)) : undefined
    const start = (Math.floor((n * clientIndex) / clientCount) + s.cursor) % n
    const whole = prefillSeconds(cost, input, 0)
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
      const f = isFresh(ledger, r, now, staleAfter)
      // one front end: its fresh snapshot's queue plus nothing pending from others; several: a
      // fresh rank's queue is left out (every front end reads the same stale snapshot, and a
      // term read from it sends them all to the same rank), a stale or unknown one keeps it
      let queue = 0
      if (clientCount === 1 && f) queue = priced.queuedSeconds[r]!
      else if (clientCount === 1 || !f) {
        const q = f ? demand.queued[r]! : Math.max(demand.queued[r]!, maxQueued)
        queue = prefillSeconds(cost, q + (clientCount - 1) * sr[o + PENDING_TOKENS]!, 0)
      } else if (sharedQuantum > 0) {
        queue = Math.floor(priced.queuedSeconds[r]! / sharedQuantum) * sharedQuantum
      }
      const wait = Math.max(sr[o + HORIZON]! - now, queue)
      // an engine computes at least the prompt's last token, however much of it is cached
      const cached = matched[r] === 0 ? 0 : Math.max(0, Math.min(input - 1, matched[r]! * blockTokens))
      if (cached !== ownCached) {
        ownCached = cached
        own = prefillSeconds(cost, input - cached, cached)
      }
      let score = wait + own
      if (fm !== undefined) {
        const requests = Math.max(
          (Number.isNaN(ledger.snapTimestamp[r]!)
            ? unknownBase(ledger.snapshots[r], fm, now, staleAfter)[0]
            : f || fm.requests < 0
              ? ledger.snapRequests[r]!
              : Math.max(ledger.snapRequests[r]!, fm.requests)) +
            clientCount * sr[o + PENDING_REQUESTS]!,
          trackInflight ? clientCount * sr[o + INFLIGHT]! : 0
        )
        const context =
          (f ? demand.context[r]! : Math.max(demand.context[r]!, maxContext)) +
          clientCount * sr[o + PENDING_TOKENS]!
        score += decodeWeight * ((requests + 1) * dReq + (context + input) * dCtx)
      }
      scores[r] = score
      const healthy = ledger.healthy[r]
      if (!healthy) continue
      // unknown is never attractive: on a tie a known rank beats one whose load is unknown
      if (healthy === true && demand.freeKv[r]! - clientCount * sr[o + PENDING_TOKENS]! >= input) {
        if (
          best < 0 ||
          score < bestScore ||
          (score === bestScore && unknownLevel(ledger, r) < unknownLevel(ledger, best))
        ) {
          best = r
          bestScore = score
          bestQueue = queue
          bestCached = cached
        }
      } else if (
        best < 0 &&
        (alt < 0 ||
          score < altScore ||
          (score === altScore && unknownLevel(ledger, r) < unknownLevel(ledger, alt)))
      ) {
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
      return policyError("AllRanksUnavailable", `Cannot route request: all ${n} DP ranks are unavailable.`)
    return commit(s, request, now, best, (s.cursor + 1) % n, bestQueue, bestCached, scores, matched)
  }

  return {
    name: "step-time-aware",
    init,
    observe,
    route,
    finish: (s, ids) => finish(s, ids),
    setStatus: (s, status) => {
      const ledger = setLedgerStatus(s.ledger, status)
      return ledger === s.ledger ? s : { ...s, ledger }
    },
    view: (s, now) => ledgerView(s.ledger, now, staleAfter)
  }
}
