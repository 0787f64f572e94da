/**
 * The state machine of `step-time-aware` (`makeStepTimeAware`): its resolved options, the per-rank
 * bookkeeping's layout, the pricing of a snapshot, and `init` / `observe` / `finish` / `commit`; the
 * route itself is in `stepRoute.ts`, its cost terms in `stepTerms.ts`.
 *
 * @internal
 */
import { clientsOf } from "../../internal/clients.js"
import { packed } from "../../internal/packed.js"
import type { PolicyError, RankLoad, RouteRequest, RouteResult } from "../../Policy.js"
import { glm53H200StepCost, prefillSeconds, type StepCostModel } from "../StepCost.js"
import type { PricedDemand, StepTimeAwareOptions, StepTimeAwareState } from "../StepTimeAware.js"
import { emptyTrie, getTrie, setTrie } from "./HashTrie.js"
import { emptyLedger, type LedgerState, observeLedger } from "./InflightCharges.js"
import { freshMax } from "./LoadView.js"
import { poolOf, type RankDemand, rankDemand, withWaitingEstimate } from "./RankDemand.js"
import {
  emptyMatchScratch,
  emptyRankPrefixes,
  type MatchScratch,
  recordRankPrefixes
} from "./RankPrefixes.js"

/** Per-rank fields of `StepTimeAwareState.ranks`, `FIELDS` numbers per rank. */
export const HORIZON = 0 // when this front end's prefills on the rank end (seconds, absolute)
export const PENDING_REQUESTS = 1 // requests routed since the rank's snapshot
export const PENDING_TOKENS = 2 // their prompt tokens still to prefill
export const PENDING_SINCE = 3 // routing time of the newest of them
export const INFLIGHT = 4 // requests routed and not finished (tracked with decodeWeight > 0 and several front ends)
export const INFLIGHT_TOKENS = 5 // their prompt tokens
export const SENT = 6 // prompt tokens sent to the rank so far (the prefix index's clock)
export const FIELDS = 7
/** `inflight` values: `tokens * RANK_SPAN + rank`. */
export const RANK_SPAN = 1 << 20
/** Per-rank score terms of `explanation.details.terms`, `TERMS` numbers per rank. */
export const TERM_WAIT = 0 // max(horizon - now, queue): the wait before this prompt's prefill starts
export const TERM_OWN = 1 // this prompt's own uncached prefill
export const TERM_DECODE = 2 // decodeWeight x the rank's decode step cost after admission
export const TERM_SLOT = 3 // slotWaitSeconds x requests beyond the running-request cap
export const TERM_HOME = 4 // minus homeWeight x own prefill on the request's home rank
export const TERMS = 5
/** `explanation.details.termNames`: the names of a rank's `TERMS` terms, in their order. */
export const termNames: ReadonlyArray<string> = Object.freeze(["wait", "own", "decode", "slot", "home"])
/** The options of `makeStepTimeAware`, resolved once (defaults, refused values as unset). @internal */
export interface StepSettings {
  readonly cost: StepCostModel
  readonly clientCount: number
  readonly clientIndex: number
  readonly optionsError: PolicyError | undefined
  readonly decodeWeight: number
  readonly homeWeight: number
  readonly slotCap: number | undefined
  readonly slotWait: number
  readonly fixedPool: number | undefined
  readonly cacheTokens: number | undefined
  readonly staleAfter: number
  readonly margin: number
  readonly maxBlocks: number
  readonly trackInflight: boolean
  readonly sharedQuantum: number
  /** Working memory of the prefix match, written and read within one `route` call, never returned. */
  readonly matchScratch: MatchScratch
}

/** Resolve `makeStepTimeAware`'s options (see `StepTimeAwareOptions`). @internal */
export const stepSettings = (options: StepTimeAwareOptions): StepSettings => {
  const cost = options.cost ?? glm53H200StepCost
  const { clientCount, clientIndex, error: optionsError } = clientsOf(options)
  const weight = options.decodeWeight
  const decodeWeight =
    weight !== undefined && Number.isFinite(weight) && weight >= 0 ? weight : clientCount === 1 ? 8 : 0
  const cap = options.maxRunningRequests
  const homeOption = options.homeWeight
  const homeWeight =
    homeOption !== undefined && Number.isFinite(homeOption) && homeOption >= 0
      ? homeOption
      : clientCount > 1
        ? 0.3
        : 0
  const slotCap = cap !== undefined && Number.isFinite(cap) && cap >= 1 ? cap : undefined
  const perSlot = options.slotWaitSeconds
  const slotWait = perSlot !== undefined && Number.isFinite(perSlot) && perSlot >= 0 ? perSlot : 0.3
  const fixedPool = options.kvPoolTokens
  const cacheTokens = options.cacheTokens
  const staleAfter = options.staleAfterSeconds ?? 1
  const margin = options.inclusionMarginSeconds ?? 0
  const maxBlocks = options.maxIndexedBlocks ?? 65_536
  // one front end reads a fresh snapshot at every step: snapshot + routes since need no floor
  const trackInflight = decodeWeight > 0 && clientCount > 1
  const sharedQuantum = options.sharedQueueQuantumSeconds ?? 1

  const matchScratch = emptyMatchScratch()
  return {
    cost,
    clientCount,
    clientIndex,
    optionsError,
    decodeWeight,
    homeWeight,
    slotCap,
    slotWait,
    fixedPool,
    cacheTokens,
    staleAfter,
    margin,
    maxBlocks,
    trackInflight,
    sharedQuantum,
    matchScratch
  }
}

export const price = (st: StepSettings, ledger: LedgerState, demand: RankDemand): PricedDemand => {
  const { cost, slotCap, cacheTokens, staleAfter } = st
  const fallback = demand.maxPool > 0 ? demand.maxPool : 262_144
  let oldestTimestamp = Number.POSITIVE_INFINITY
  let maxQueued = 0
  let maxContext = 0
  for (let r = 0; r < ledger.dpSize; r++) {
    // dated by its newest row with request counts: a partial row (vLLM's, no tokens) too
    const at = ledger.rowTimestamp[r]!
    if (Number.isNaN(at)) continue
    if (at < oldestTimestamp) oldestTimestamp = at
    if (demand.queued[r]! > maxQueued) maxQueued = demand.queued[r]!
    if (demand.context[r]! > maxContext) maxContext = demand.context[r]!
  }
  const slotCaps = ledger.snapshots.map((row) => {
    const c = slotCap ?? (row === undefined || row.unknown !== undefined ? undefined : row.maxRunningRequests)
    return c !== undefined && Number.isFinite(c) && c >= 1 ? c : Number.POSITIVE_INFINITY
  })
  return {
    queuedSeconds: demand.queued.map((q) => prefillSeconds(cost, q, 0)),
    cacheTokens: demand.pool.map((pool) => cacheTokens ?? (Number.isNaN(pool) ? fallback : pool)),
    oldestTimestamp,
    maxQueued,
    maxContext,
    // at the oldest snapshot's time every published rank is fresh
    freshMax: freshMax(ledger, oldestTimestamp, staleAfter),
    slotCaps,
    anyCap: slotCaps.some((c) => c !== Number.POSITIVE_INFINITY),
    anyUndated: ledger.rowTimestamp.some((t) => Number.isNaN(t))
  }
}
export const init = (st: StepSettings, dpSize: number): StepTimeAwareState => {
  const { fixedPool, maxBlocks } = st
  const ledger = emptyLedger(dpSize)
  const ranks = packed(ledger.dpSize * FIELDS, 0)
  for (let r = 0; r < ledger.dpSize; r++) ranks[r * FIELDS + PENDING_SINCE] = Number.NEGATIVE_INFINITY
  const demand = rankDemand(ledger.snapshots, packed(ledger.dpSize, fixedPool ?? Number.NaN))
  return {
    ledger,
    demand,
    priced: price(st, ledger, demand),
    cursor: 0,
    routes: 0,
    routedUncached: 0,
    waitingUnpriced: false,
    ranks,
    inflight: emptyTrie(1_000_000),
    prefixes: emptyRankPrefixes(maxBlocks)
  }
}
export const observe = (
  st: StepSettings,
  s: StepTimeAwareState,
  loads: ReadonlyArray<RankLoad>,
  now: number
): StepTimeAwareState => {
  const { fixedPool, margin } = st
  if (!Number.isFinite(now)) return s
  const ledger = observeLedger(s.ledger, loads, margin, now)
  if (ledger === s.ledger) return s
  const ranks = s.ranks.slice()
  const pools = s.demand.pool.slice()
  for (let r = 0; r < ledger.dpSize; r++) {
    if (ledger.snapshots[r] === s.ledger.snapshots[r]) continue
    // a snapshot stamped after the newest pending route includes every pending route
    // (a partial row too: vLLM's coordinator publishes counts, no tokens, and they include them)
    if (ledger.rowTimestamp[r]! - margin >= ranks[r * FIELDS + PENDING_SINCE]!) {
      ranks[r * FIELDS + PENDING_REQUESTS] = 0
      ranks[r * FIELDS + PENDING_TOKENS] = 0
    }
    const row = ledger.snapshots[r]
    const pool = fixedPool ?? (row === undefined || row.unknown !== undefined ? undefined : poolOf(row))
    if (pool !== undefined) pools[r] = pool
  }
  const counted = rankDemand(ledger.snapshots, pools)
  const demand = withWaitingEstimate(
    counted,
    ledger.snapshots,
    s.routes > 0 ? s.routedUncached / s.routes : 0
  )
  return {
    ...s,
    // nothing routed yet: waiting requests without tokens are priced at route time
    waitingUnpriced: s.routes === 0 && withWaitingEstimate(counted, ledger.snapshots, 1) !== counted,
    ledger,
    demand,
    priced: price(st, ledger, demand),
    ranks
  }
}
export const finish = (
  st: StepSettings,
  s: StepTimeAwareState,
  ids: ReadonlyArray<string>
): StepTimeAwareState => {
  const { trackInflight } = st
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
export const commit = (
  st: StepSettings,
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
  const { cost, trackInflight } = st
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
      routes: s.routes + 1,
      routedUncached: s.routedUncached + input - cached,
      waitingUnpriced: s.waitingUnpriced,
      ranks,
      inflight,
      prefixes: recordRankPrefixes(s.prefixes, request.prefixHashes, rank, sent)
    },
    explanation: {
      scores,
      tieBreak:
        "least predicted prefill wait + own prefill (+ decode, + slot wait, - home credit) in seconds, then rotating index",
      details: terms === undefined ? { matchedBlocks: matched } : { matchedBlocks: matched, terms, termNames }
    }
  }
}
