/**
 * The state machine of `step-time-aware`: its settings, per-rank bookkeeping, the pricing of a
 * snapshot, `init` / `observe` / `finish` / `setStatus` (the route: `stepRoute.ts`).
 *
 * @internal
 */
import { clientsOf } from "../../internal/clients.js"
import { packed } from "../../internal/packed.js"
import type { RankLoad } from "../../Policy.js"
import { glm53H200StepCost, prefillSeconds } from "../StepCost.js"
import type { StepTimeAwareOptions, StepTimeAwareState } from "../StepTimeTypes.js"
import { emptyTrie, getTrie, setTrie } from "./HashTrie.js"
import { emptyLedger, type LedgerState, observeLedger, setLedgerStatus } from "./InflightCharges.js"
import { freshMax } from "./LoadView.js"
import { type Demand, poolOf, type RankDemand, rankDemand, withWaitingEstimate } from "./RankDemand.js"
import { emptyMatchScratch, emptyRankPrefixes, FORGET_TOKENS } from "./RankPrefixes.js"

/** `StepTimeAwareState.ranks`, `FIELDS` numbers per rank. */
export const HORIZON = 0 // when this front end's prefills on the rank end (absolute seconds)
export const PENDING_REQUESTS = 1 // requests routed since the rank's snapshot
export const PENDING_TOKENS = 2 // their uncached prompt tokens
export const PENDING_SINCE = 3 // routing time of the newest of them
export const INFLIGHT = 4 // requests routed and not finished (when `trackInflight`)
export const INFLIGHT_TOKENS = 5 // their prompt tokens
export const SENT = 6 // prompt tokens sent to the rank (the prefix index's clock)
export const FIELDS = 7
/** `inflight` values: `tokens * RANK_SPAN + rank`. */
export const RANK_SPAN = 1 << 20

/** `x` when a finite number >= `min`, else `fallback` (a refused option counts as unset). */
const orElse = <D>(x: number | undefined, min: number, fallback: D): number | D =>
  x !== undefined && Number.isFinite(x) && x >= min ? x : fallback

/** `makeStepTimeAware`'s options resolved once (see `StepTimeAwareOptions`). @internal */
export const stepSettings = (o: StepTimeAwareOptions) => {
  const { clientCount, clientIndex, error } = clientsOf(o)
  const decodeWeight = orElse(o.decodeWeight, 0, clientCount === 1 ? 8 : 0)
  return {
    cost: o.cost ?? glm53H200StepCost,
    clientCount,
    clientIndex,
    optionsError: error,
    decodeWeight,
    homeWeight: orElse(o.homeWeight, 0, clientCount > 1 ? 0.3 : 0),
    slotCap: orElse(o.maxRunningRequests, 1, undefined),
    slotWait: orElse(o.slotWaitSeconds, 0, 0.3),
    fixedPool: o.kvPoolTokens,
    cacheTokens: o.cacheTokens,
    staleAfter: o.staleAfterSeconds ?? 1,
    margin: o.inclusionMarginSeconds ?? 0,
    maxBlocks: o.maxIndexedBlocks ?? 65_536,
    // one front end reads a fresh snapshot at every step: snapshot + routes since need no floor
    trackInflight: decodeWeight > 0 && clientCount > 1,
    sharedQuantum: o.sharedQueueQuantumSeconds ?? 1,
    /** Working memory of the prefix match, used within one `route` call. */
    matchScratch: emptyMatchScratch()
  }
}
/** @internal */
export type StepSettings = ReturnType<typeof stepSettings>

/** `demand` priced: what every route reads of a snapshot, computed once per snapshot. @internal */
export const price = (st: StepSettings, ledger: LedgerState, demand: RankDemand): Demand => {
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
  const fallback = demand.maxPool > 0 ? demand.maxPool : 262_144
  const slotCaps = ledger.snapshots.map((row) =>
    orElse(st.slotCap ?? (row?.unknown === undefined ? row?.maxRunningRequests : undefined), 1, Infinity)
  )
  return {
    ...demand,
    queuedSeconds: demand.queued.map((q) => prefillSeconds(st.cost, q, 0)),
    cacheTokens: demand.pool.map((pool) => st.cacheTokens ?? (Number.isNaN(pool) ? fallback : pool)),
    slotCaps,
    anyCap: slotCaps.some((c) => c !== Number.POSITIVE_INFINITY),
    oldestTimestamp,
    maxQueued,
    maxContext,
    // at the oldest snapshot's time every published rank is fresh
    freshMax: freshMax(ledger, oldestTimestamp, st.staleAfter),
    anyUndated: ledger.rowTimestamp.some((t) => Number.isNaN(t))
  }
}

export const init = (st: StepSettings, dpSize: number): StepTimeAwareState => {
  const ledger = emptyLedger(dpSize)
  const ranks = packed(ledger.dpSize * FIELDS, 0)
  for (let r = 0; r < ledger.dpSize; r++) ranks[r * FIELDS + PENDING_SINCE] = Number.NEGATIVE_INFINITY
  const demand = rankDemand(ledger.snapshots, packed(ledger.dpSize, st.fixedPool ?? Number.NaN))
  return {
    ledger,
    demand: price(st, ledger, demand),
    cursor: 0,
    routes: 0,
    routedUncached: 0,
    waitingUnpriced: false,
    ranks,
    inflight: emptyTrie(1_000_000),
    prefixes: emptyRankPrefixes(st.maxBlocks)
  }
}

export const observe = (
  st: StepSettings,
  s: StepTimeAwareState,
  loads: ReadonlyArray<RankLoad>,
  now: number
): StepTimeAwareState => {
  if (!Number.isFinite(now)) return s
  const ledger = observeLedger(s.ledger, loads, st.margin, now)
  if (ledger === s.ledger) return s
  const ranks = s.ranks.slice()
  const pools = s.demand.pool.slice()
  for (let r = 0; r < ledger.dpSize; r++) {
    const row = ledger.snapshots[r]
    if (row === s.ledger.snapshots[r]) continue
    // a row stamped after the newest pending route includes every pending route (a partial one too)
    if (ledger.rowTimestamp[r]! - st.margin >= ranks[r * FIELDS + PENDING_SINCE]!) {
      ranks[r * FIELDS + PENDING_REQUESTS] = 0
      ranks[r * FIELDS + PENDING_TOKENS] = 0
    }
    const pool = st.fixedPool ?? (row === undefined || row.unknown !== undefined ? undefined : poolOf(row))
    if (pool !== undefined) pools[r] = pool
  }
  const counted = rankDemand(ledger.snapshots, pools)
  const mean = s.routes > 0 ? s.routedUncached / s.routes : 0
  return {
    ...s,
    // nothing routed yet: waiting requests without tokens are priced at route time
    waitingUnpriced: s.routes === 0 && withWaitingEstimate(counted, ledger.snapshots, 1) !== counted,
    ledger,
    demand: price(st, ledger, withWaitingEstimate(counted, ledger.snapshots, mean)),
    ranks
  }
}

export const finish = (
  st: StepSettings,
  s: StepTimeAwareState,
  ids: ReadonlyArray<string>
): StepTimeAwareState => {
  if (!st.trackInflight) return s
  let inflight = s.inflight
  let ranks: Array<number> | undefined
  for (const id of ids) {
    const x = getTrie(inflight, id)
    if (x === undefined) continue
    const o = (x % RANK_SPAN) * FIELDS
    ranks ??= s.ranks.slice()
    ranks[o + INFLIGHT] = Math.max(0, ranks[o + INFLIGHT]! - 1)
    ranks[o + INFLIGHT_TOKENS] = Math.max(0, ranks[o + INFLIGHT_TOKENS]! - (x - (x % RANK_SPAN)) / RANK_SPAN)
    inflight = setTrie(inflight, id, undefined)
  }
  return ranks === undefined ? s : { ...s, ranks, inflight }
}

/** A rank marked unhealthy keeps none of its prefix entries (the stale-prefix law): its clock jumps past any cache. */
export const setStatus = (s: StepTimeAwareState, status: ReadonlyArray<boolean>): StepTimeAwareState => {
  const ledger = setLedgerStatus(s.ledger, status)
  if (ledger === s.ledger) return s
  const ranks = s.ranks.slice()
  for (let r = 0; r < ledger.dpSize; r++)
    if (s.ledger.healthy[r] !== false && ledger.healthy[r] === false)
      ranks[r * FIELDS + SENT]! += FORGET_TOKENS
  return { ...s, ledger, ranks }
}
