/**
 * The cost terms of `step-time-aware`, each a per-rank cost in seconds of lockstep step time (their
 * weights are options, named in `stepTimeTerms`), and `scoreRanks`, which sums them. The loads they
 * read: {@link snapshotQueue} (seconds) and {@link heldRequests} (requests).
 *
 * @internal
 */
import { prefillSeconds } from "../StepCost.js"
import { fnv1a } from "./HashTrie.js"
import type { LedgerState } from "./LedgerState.js"
import { type FreshMax, isDated, unknownBase } from "./LoadView.js"
import type { Demand } from "./RankDemand.js"
import {
  FIELDS,
  HORIZON,
  INFLIGHT,
  PENDING_REQUESTS,
  PENDING_TOKENS,
  type StepSettings
} from "./stepState.js"

/** `explanation.details.termNames`: a rank's `TERMS` terms in `details.terms`, in this order. */
export const termNames: ReadonlyArray<string> = Object.freeze(["wait", "own", "decode", "slot", "home"])
export const TERMS = 5

/** What the terms of one route read (`stepRoute.ts` fills it; `own` / `ownCached` memoise `ownPrefill`). @internal */
export interface RouteInputs {
  readonly st: StepSettings
  readonly ledger: LedgerState
  readonly ranks: ReadonlyArray<number>
  readonly demand: Demand
  readonly now: number
  readonly input: number
  readonly matched: ReadonlyArray<number>
  readonly blockTokens: number
  readonly maxQueued: number
  readonly maxContext: number
  readonly fm: FreshMax | undefined
  readonly home: number
  /** Per rank, its learned speed (`withSpeed`): its wait, own, decode and slot seconds are divided by it. */
  readonly speeds: ReadonlyArray<number> | undefined
  floorWait: number
  floorRequests: number
  freshHealthy: boolean
  own: number
  ownCached: number
}

/**
 * Seconds of prefill the snapshot shows queued on rank `r`, as this front end counts it: one front end,
 * a fresh rank's queue in full; several, in whole `sharedQuantum` steps (a term all of them read from
 * one stale snapshot herds); a stale (`!f`) or unknown rank at least the busiest fresh queue, plus
 * `clientCount - 1` times this front end's routes since. @internal
 */
export const snapshotQueue = (x: RouteInputs, r: number, f: boolean): number => {
  const { demand } = x
  const { clientCount, sharedQuantum } = x.st
  if (clientCount === 1 && f) return demand.queuedSeconds[r]!
  if (clientCount === 1 || !f) {
    const q = f ? demand.queued[r]! : Math.max(demand.queued[r]!, x.maxQueued)
    return prefillSeconds(x.st.cost, q + (clientCount - 1) * x.ranks[r * FIELDS + PENDING_TOKENS]!, 0)
  }
  return sharedQuantum > 0 ? Math.floor(demand.queuedSeconds[r]! / sharedQuantum) * sharedQuantum : 0
}

/**
 * Requests rank `r` holds: its snapshot's running and waiting (unknown: `unknownBase`; stale: at least
 * the busiest fresh) plus this front end's routes since, `clientCount` times; stale or unknown at least
 * `floorRequests`. @internal
 */
export const heldRequests = (x: RouteInputs, r: number, f: boolean): number => {
  const { ledger } = x
  const fm = x.fm!
  const snap = ledger.snapRequests[r]!
  const held =
    (Number.isNaN(ledger.snapTimestamp[r]!)
      ? unknownBase(ledger.snapshots[r], fm, x.now, x.st.staleAfter)[0]
      : f || fm.requests < 0
        ? snap
        : Math.max(snap, fm.requests)) +
    x.st.clientCount * x.ranks[r * FIELDS + PENDING_REQUESTS]!
  return f ? held : Math.max(held, x.floorRequests)
}

/** Prompt tokens rank `r` is taken to cache: its matched blocks, leaving at least the last token to compute. @internal */
export const cachedOf = (x: RouteInputs, r: number): number =>
  x.matched[r] === 0 ? 0 : Math.max(0, Math.min(x.input - 1, x.matched[r]! * x.blockTokens))

/** `wait`, seconds before this prompt's prefill starts: this front end's horizon, the snapshot queue, a stale rank's floor. */
const queuedPrefill = (x: RouteInputs, r: number, f: boolean): number =>
  Math.max(x.ranks[r * FIELDS + HORIZON]! - x.now, snapshotQueue(x, r, f), f ? 0 : x.floorWait)

/** `own`, seconds: this prompt's prefill after the prefix `r` caches (priced once per distinct length). */
const ownPrefill = (x: RouteInputs, r: number): number => {
  const cached = cachedOf(x, r)
  if (cached !== x.ownCached) {
    x.ownCached = cached
    x.own = prefillSeconds(x.st.cost, x.input - cached, cached)
  }
  return x.own
}

/** `decode`, seconds x `decodeWeight`: the rank's decode step after admission (`held + 1` requests, context + prompt). */
const decodeLoad = (x: RouteInputs, r: number, f: boolean, held: number): number => {
  const { decodeWeight, clientCount, cost } = x.st
  if (!(decodeWeight > 0)) return 0
  const o = r * FIELDS
  const decoding = x.st.trackInflight ? Math.max(held, clientCount * x.ranks[o + INFLIGHT]!) : held
  const c = x.demand.context[r]!
  const context = (f ? c : Math.max(c, x.maxContext)) + clientCount * x.ranks[o + PENDING_TOKENS]!
  return (
    decodeWeight *
    ((decoding + 1) * cost.decodeSecondsPerRequest + (context + x.input) * cost.decodeSecondsPerContextToken)
  )
}

/** `slot`, seconds: `slotWait` per request the rank would hold beyond its running cap with this one. */
const slotWait = (x: RouteInputs, r: number, held: number): number => {
  const cap = x.demand.slotCaps[r]!
  return held >= cap ? x.st.slotWait * (held + 1 - cap) : 0
}

/** `home`, seconds (<= 0): minus `homeWeight` x `own` on the request's fresh, known home rank. */
const homeCredit = (x: RouteInputs, r: number, f: boolean, own: number): number =>
  r === x.home && f && x.ledger.snapshots[r]?.unknown === undefined ? -(x.st.homeWeight * own) : 0

/** Each rank's terms into `terms` (`TERMS` per rank) and their sum, `wait + own + home + decode + slot` in that order, into `scores`. @internal */
export const scoreRanks = (x: RouteInputs, scores: Array<number>, terms: Array<number>): void => {
  for (let r = 0; r < x.ledger.dpSize; r++) {
    // fresh: its newest row with request counts is recent (a partial one too: vLLM's rows)
    const f = isDated(x.ledger, r, x.now, x.st.staleAfter)
    const held = x.fm === undefined ? -1 : heldRequests(x, r, f)
    const t = r * TERMS
    terms[t] = queuedPrefill(x, r, f)
    terms[t + 1] = ownPrefill(x, r)
    terms[t + 2] = decodeLoad(x, r, f, held)
    terms[t + 3] = slotWait(x, r, held)
    const speed = x.speeds?.[r] ?? 1
    if (speed < 1 && speed > 0) for (let k = 0; k < 4; k++) terms[t + k]! /= speed
    terms[t + 4] = homeCredit(x, r, f, terms[t + 1]!)
    // wait + own + home + decode + slot (the sum's order before the terms were named)
    scores[r] = terms[t]! + terms[t + 1]! + terms[t + 4]! + terms[t + 2]! + terms[t + 3]!
  }
}

/** The request's home rank: the hash of its first block held by at most one rank, mod `n`. @internal */
export const homeOf = (hashes: ReadonlyArray<string>, matched: ArrayLike<number>, n: number): number => {
  // the second-largest match: the leading blocks two or more ranks hold
  let first = 0
  let second = 0
  for (let r = 0; r < n; r++) {
    const m = matched[r]!
    if (m > first) {
      second = first
      first = m
    } else if (m > second) second = m
  }
  return fnv1a(hashes[Math.min(hashes.length - 1, second)]!) % n
}
