/**
 * The router-side bookkeeping every peer `Policy` adapter shares: health, the latest `RankLoad` per
 * rank, in-flight requests, tokens and KV blocks charged on route and released on finish, and the
 * seeded generator. Pure: every function returns a new value.
 */

import type { RankLoad } from "@loadledger/schema"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import { ranksOf } from "../../internal/ranksOf.js"
import type { Explanation, Policy, PolicyError, RouteRequest, RouteResult } from "../../Policy.js"
import { policyError } from "../../Policy.js"
import { checkStatus } from "../../RankStatus.js"
import { checkInputLength, checkNow, checkRequestFields } from "../../RequestChecks.js"
import { type RngState, rngFromSeed, withDraws } from "../Draws.js"

export interface Charge {
  readonly rank: number
  readonly tokens: number
  readonly blocks: number
}

export interface PeerLedger {
  readonly dpSize: number
  readonly status: ReadonlyArray<boolean>
  readonly loads: ReadonlyArray<RankLoad | undefined>
  readonly requests: ReadonlyArray<number>
  readonly tokens: ReadonlyArray<number>
  /** KV blocks charged (Dynamo's decode-block projection); 0 for policies that charge none. */
  readonly blocks: ReadonlyArray<number>
  readonly open: HashMap.HashMap<string, Charge>
  readonly rng: RngState
}

export const initLedger = (dpSize: number, seed: number): PeerLedger => ({
  dpSize,
  status: new Array<boolean>(dpSize).fill(true),
  loads: new Array<RankLoad | undefined>(dpSize).fill(undefined),
  requests: new Array<number>(dpSize).fill(0),
  tokens: new Array<number>(dpSize).fill(0),
  blocks: new Array<number>(dpSize).fill(0),
  open: HashMap.empty(),
  rng: rngFromSeed(seed)
})

/** Keep the latest row per rank; rows for ranks outside [0, dpSize) are ignored. */
export const observeLedger = (l: PeerLedger, rows: ReadonlyArray<RankLoad>): PeerLedger => {
  const loads = [...l.loads]
  for (const r of rows)
    if (Number.isInteger(r.dpRank) && r.dpRank >= 0 && r.dpRank < l.dpSize) loads[r.dpRank] = r
  return { ...l, loads }
}

/** Replace health with `status`, already checked (`checkStatus`: one boolean per rank). */
export const setStatusLedger = (l: PeerLedger, status: ReadonlyArray<boolean>): PeerLedger => ({
  ...l,
  status: status.slice()
})

export const chargeLedger = (l: PeerLedger, requestId: string, c: Charge): PeerLedger => {
  const requests = [...l.requests]
  const tokens = [...l.tokens]
  const blocks = [...l.blocks]
  requests[c.rank] = requests[c.rank]! + 1
  tokens[c.rank] = tokens[c.rank]! + c.tokens
  blocks[c.rank] = blocks[c.rank]! + c.blocks
  return { ...l, requests, tokens, blocks, open: HashMap.set(l.open, requestId, c) }
}

/** Release finished requests (unknown ids are ignored); counters never go below 0. */
export const releaseLedger = (
  l: PeerLedger,
  ids: ReadonlyArray<string>
): { readonly ledger: PeerLedger; readonly released: ReadonlyArray<Charge> } => {
  let open = l.open
  const released: Array<Charge> = []
  for (const id of ids) {
    const e = Option.getOrUndefined(HashMap.get(open, id))
    if (e === undefined) continue
    open = HashMap.remove(open, id)
    released.push(e)
  }
  if (released.length === 0) return { ledger: l, released }
  const requests = [...l.requests]
  const tokens = [...l.tokens]
  const blocks = [...l.blocks]
  for (const e of released) {
    requests[e.rank] = Math.max(0, requests[e.rank]! - 1)
    tokens[e.rank] = Math.max(0, tokens[e.rank]! - e.tokens)
    blocks[e.rank] = Math.max(0, blocks[e.rank]! - e.blocks)
  }
  return { ledger: { ...l, requests, tokens, blocks, open }, released }
}

/** A load row usable for the given fields: present, not `unknown`, every field reported. */
export const knownRow = (
  l: PeerLedger,
  rank: number,
  fields: ReadonlyArray<keyof RankLoad>
): RankLoad | undefined => {
  const r = l.loads[rank]
  if (r === undefined || r.unknown !== undefined) return undefined
  for (const f of fields) if (r[f] === undefined) return undefined
  return r
}

/**
 * The ranks a policy may choose: healthy ranks whose needed fields are known; when no healthy rank
 * is known, every healthy rank (all equally unknown: none is preferred because of it).
 */
export const candidateRanks = (
  l: PeerLedger,
  fields: ReadonlyArray<keyof RankLoad>
): { readonly ranks: ReadonlyArray<number>; readonly unknown: ReadonlyArray<number> } => {
  const healthy: Array<number> = []
  for (let i = 0; i < l.dpSize; i++) if (l.status[i] === true) healthy.push(i)
  if (fields.length === 0) return { ranks: healthy, unknown: [] }
  const known = healthy.filter((i) => knownRow(l, i, fields) !== undefined)
  const unknown = healthy.filter((i) => knownRow(l, i, fields) === undefined)
  return { ranks: known.length > 0 ? known : healthy, unknown }
}

export interface PeerState<X> {
  readonly ledger: PeerLedger
  readonly extra: X
}

export interface PeerDecision<X> {
  readonly rank: number
  readonly extra: X
  /** Tokens charged to the rank's in-flight count (released on finish). */
  readonly tokens: number
  /** KV blocks charged (released on finish); default 0. */
  readonly blocks?: number | undefined
  readonly explanation: Explanation
}

/**
 * Build a `Policy` from a decision function: the adapter charges the decision's rank (one request,
 * `tokens`, `blocks`) under the request id, releases on `finish`, keeps the generator state the
 * decision used.
 */
export const peerPolicy = <X>(spec: {
  readonly name: string
  readonly seed: number
  readonly initExtra: (dpSize: number) => X
  readonly decide: (
    ledger: PeerLedger,
    extra: X,
    request: RouteRequest,
    now: number,
    draw: (bound: number) => number
  ) => PeerDecision<X> | PolicyError
  readonly onFinish?: ((extra: X, released: ReadonlyArray<Charge>) => X) | undefined
  readonly onObserve?: ((extra: X, ledger: PeerLedger) => X) | undefined
}): Policy<PeerState<X>> => ({
  name: spec.name,
  init: (dpSize) => ({
    ledger: initLedger(ranksOf(dpSize), spec.seed),
    extra: spec.initExtra(ranksOf(dpSize))
  }),
  observe: (s, loads: ReadonlyArray<RankLoad>, now) => {
    if (loads.length === 0 || !Number.isFinite(now)) return s
    const ledger = observeLedger(s.ledger, loads)
    return { ledger, extra: spec.onObserve === undefined ? s.extra : spec.onObserve(s.extra, ledger) }
  },
  setStatus: (s, status) =>
    checkStatus(status, s.ledger.dpSize) === undefined
      ? { ...s, ledger: setStatusLedger(s.ledger, status) }
      : s,
  finish: (s, ids) => {
    const { ledger, released } = releaseLedger(s.ledger, ids)
    if (released.length === 0) return s
    return { ledger, extra: spec.onFinish === undefined ? s.extra : spec.onFinish(s.extra, released) }
  },
  route: (s, request, now): RouteResult<PeerState<X>> => {
    const bad = checkInputLength(request.inputLength) ?? checkNow(now) ?? checkRequestFields(request)
    if (bad !== undefined) return bad
    if (!s.ledger.status.some((x) => x))
      return policyError("AllRanksUnavailable", "no healthy rank", "status")
    const out = withDraws(s.ledger.rng, (draw) => spec.decide(s.ledger, s.extra, request, now, draw))
    const d = out.value
    if ("_tag" in d) return d
    const ledger = chargeLedger({ ...s.ledger, rng: out.rng }, request.requestId, {
      rank: d.rank,
      tokens: d.tokens,
      blocks: d.blocks ?? 0
    })
    return { _tag: "Routed", rank: d.rank, state: { ledger, extra: d.extra }, explanation: d.explanation }
  }
})
