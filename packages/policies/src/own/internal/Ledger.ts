import { packed } from "../../internal/packed.js"
import type { RankLoad } from "../../Policy.js"
import type { RankView } from "../RankView.js"
import { emptyTrie, getTrie, type HashTrie, setTrie } from "./HashTrie.js"

/**
 * One routed request charged to a rank: `requests` and `tokens` are added to the rank's published
 * load until a snapshot stamped after `routedAtSeconds` (plus the inclusion margin) arrives, or the
 * request finishes.
 *
 * @internal
 */
export interface Charge {
  readonly requestId: string
  readonly routedAtSeconds: number
  readonly requests: number
  readonly tokens: number
}

/**
 * One charge in a rank's charge list (newest first). A node stays in the list after its request
 * finished (a tombstone, skipped and compacted away); it is live while the `live` map still lists
 * this exact `Held` under its request id.
 *
 * @internal
 */
export interface ChargeNode {
  readonly held: Held
  readonly next: ChargeNode | undefined
}

/** A charge and the rank it was charged to: the identity the `live` map lists. @internal */
export interface Held {
  readonly charge: Charge
  readonly rank: number
}

/**
 * A rank's charges: the list (newest first, tombstones included), how many of its nodes are live
 * and dead, how many live charges are not non-negative safe integers (`inexact`: their sums are
 * recomputed in routing order instead of updated by subtraction, so the doubles stay those of a
 * recount), and whether `routedAtSeconds` never decreases from oldest to newest (`ordered`: a
 * snapshot then drops a suffix of the list and stops at the first charge it keeps).
 *
 * @internal
 */
export interface ChargeList {
  readonly head: ChargeNode | undefined
  readonly live: number
  readonly dead: number
  readonly inexact: number
  readonly ordered: boolean
}

const noCharges: ChargeList = { head: undefined, live: 0, dead: 0, inexact: 0, ordered: true }

/**
 * The in-flight-charging ledger both loadledger policies build on, stored column-wise so routing
 * reads flat arrays: the newest snapshot per rank (`snapshots`, and its numbers in `snap*`, with
 * `snapTimestamp` NaN for a rank that never published and `snapKv` NaN when KV usage was not
 * reported), the charges not yet provably included (per rank, a persistent list in routing order)
 * and their sums, per-rank health, which rank each request id was charged to (for `finish`;
 * bounded, see `HashTrie`) and the live charges by request id (`live`). Nothing here is ever
 * mutated after construction; charging, finishing and dropping cost O(ranks) plus O(1) amortized
 * per charge, whatever the number of requests in flight.
 *
 * @internal
 */
export interface LedgerState {
  readonly dpSize: number
  readonly snapshots: ReadonlyArray<RankLoad | undefined>
  readonly snapTimestamp: ReadonlyArray<number>
  readonly snapRequests: ReadonlyArray<number>
  readonly snapWaiting: ReadonlyArray<number>
  readonly snapTokens: ReadonlyArray<number>
  readonly snapKv: ReadonlyArray<number>
  readonly charges: ReadonlyArray<ChargeList>
  readonly chargedRequests: ReadonlyArray<number>
  readonly chargedTokens: ReadonlyArray<number>
  readonly healthy: ReadonlyArray<boolean>
  readonly owner: HashTrie<number>
  readonly live: HashTrie<ReadonlyArray<Held>>
}

/** A fresh ledger for `dpSize` ranks: nothing published, nothing charged, all healthy. @internal */
export const emptyLedger = (dpSize: number, maxTrackedRequests = 1_000_000): LedgerState => {
  const n = Number.isInteger(dpSize) && dpSize > 0 ? dpSize : 0
  return {
    dpSize: n,
    snapshots: packed<RankLoad | undefined>(n, undefined),
    snapTimestamp: packed<number>(n, Number.NaN),
    snapRequests: packed<number>(n, 0),
    snapWaiting: packed<number>(n, 0),
    snapTokens: packed<number>(n, 0),
    snapKv: packed<number>(n, Number.NaN),
    charges: packed<ChargeList>(n, noCharges),
    chargedRequests: packed<number>(n, 0),
    chargedTokens: packed<number>(n, 0),
    healthy: packed<boolean>(n, true),
    owner: emptyTrie(maxTrackedRequests),
    live: emptyTrie(Number.POSITIVE_INFINITY)
  }
}

const withCharges = (
  s: LedgerState,
  charges: ReadonlyArray<ChargeList>,
  chargedRequests: ReadonlyArray<number>,
  chargedTokens: ReadonlyArray<number>,
  owner: HashTrie<number>,
  live: HashTrie<ReadonlyArray<Held>>
): LedgerState => ({
  dpSize: s.dpSize,
  snapshots: s.snapshots,
  snapTimestamp: s.snapTimestamp,
  snapRequests: s.snapRequests,
  snapWaiting: s.snapWaiting,
  snapTokens: s.snapTokens,
  snapKv: s.snapKv,
  charges,
  chargedRequests,
  chargedTokens,
  healthy: s.healthy,
  owner,
  live
})

const isCount = (x: number | undefined): x is number => x !== undefined && Number.isFinite(x) && x >= 0

/**
 * What a snapshot row means to the ledger: `"invalid"` (rank out of range, a timestamp that is
 * present but not finite, or a `kvCacheUsage` outside [0, 1]: ignored), `"unknown"` (an `unknown`
 * row, or `numRunningReqs` / `numWaitingReqs` / `numTotalTokens` absent or not finite non-negative:
 * the rank's load becomes unknown), else `"known"`.
 *
 * @internal
 */
export const classifyLoad = (l: RankLoad, dpSize: number): "invalid" | "unknown" | "known" => {
  if (!Number.isInteger(l.dpRank) || l.dpRank < 0 || l.dpRank >= dpSize) return "invalid"
  if (l.timestamp !== undefined && !Number.isFinite(l.timestamp)) return "invalid"
  if (l.unknown !== undefined) return "unknown"
  if (!isCount(l.numRunningReqs) || !isCount(l.numWaitingReqs) || !isCount(l.numTotalTokens)) return "unknown"
  const kv = l.kvCacheUsage
  return kv === undefined || (Number.isFinite(kv) && kv >= 0 && kv <= 1) ? "known" : "invalid"
}

/** True when a snapshot row is usable as a known load (see {@link classifyLoad}). @internal */
export const validLoad = (l: RankLoad, dpSize: number): boolean => classifyLoad(l, dpSize) === "known"

/** Charges whose sums are exact under any order of additions and subtractions. */
const isExact = (c: Charge): boolean =>
  Number.isSafeInteger(c.requests) && c.requests >= 0 && Number.isSafeInteger(c.tokens) && c.tokens >= 0

const isLive = (live: HashTrie<ReadonlyArray<Held>>, node: ChargeNode): boolean => {
  const xs = getTrie(live, node.held.charge.requestId)
  if (xs === undefined) return false
  for (let i = 0; i < xs.length; i++) if (xs[i] === node.held) return true
  return false
}

/** Remove `node` from the live map (it is known to be live). */
const unlive = (live: HashTrie<ReadonlyArray<Held>>, node: ChargeNode): HashTrie<ReadonlyArray<Held>> => {
  const id = node.held.charge.requestId
  const xs = getTrie(live, id)!
  if (xs.length === 1) return setTrie(live, id, undefined)
  return setTrie(
    live,
    id,
    xs.filter((x) => x !== node.held)
  )
}

/** Rebuild a list from nodes given newest first (fresh nodes, same charges). */
const relink = (nodes: ReadonlyArray<ChargeNode>): ChargeNode | undefined => {
  let head: ChargeNode | undefined
  for (let i = nodes.length - 1; i >= 0; i--) head = { held: nodes[i]!.held, next: head }
  return head
}

/**
 * The sums of the live charges (given newest first), added in routing order (oldest first) as a
 * recount does.
 */
const recount = (nodes: ReadonlyArray<ChargeNode>): readonly [number, number] => {
  let q = 0
  let t = 0
  for (let i = nodes.length - 1; i >= 0; i--) {
    q += nodes[i]!.held.charge.requests
    t += nodes[i]!.held.charge.tokens
  }
  return [q, t]
}

/** The live nodes of a list, newest first. */
const liveNodes = (live: HashTrie<ReadonlyArray<Held>>, head: ChargeNode | undefined): Array<ChargeNode> => {
  const out: Array<ChargeNode> = []
  for (let x = head; x !== undefined; x = x.next) if (isLive(live, x)) out.push(x)
  return out
}

const countInexact = (nodes: ReadonlyArray<ChargeNode>): number => {
  let k = 0
  for (const x of nodes) if (!isExact(x.held.charge)) k++
  return k
}

/** Mutable working copies of the charge columns, made on first change. */
interface ChargeEdit {
  charges: Array<ChargeList>
  chargedRequests: Array<number>
  chargedTokens: Array<number>
  live: HashTrie<ReadonlyArray<Held>>
}

/**
 * Drop the charges of rank `r` routed strictly before `timestamp - margin` (provably included in a
 * snapshot stamped `timestamp`). Returns whether anything changed; the sums become the recount of
 * the charges kept, in routing order.
 */
const dropIncluded = (e: ChargeEdit, r: number, timestamp: number, margin: number): void => {
  const list = e.charges[r]!
  if (list.live === 0 && list.head === undefined) return
  const kept: Array<ChargeNode> = []
  let removed = false
  let q = e.chargedRequests[r]!
  let t = e.chargedTokens[r]!
  let inexact = list.inexact
  let x = list.head
  // walk newest first; in an ordered list, the first charge to drop means every older one drops too
  for (; x !== undefined; x = x.next) {
    const live = isLive(e.live, x)
    if (!(x.held.charge.routedAtSeconds + margin < timestamp)) {
      if (live) kept.push(x)
      continue
    }
    if (live) {
      removed = true
      e.live = unlive(e.live, x)
      q -= x.held.charge.requests
      t -= x.held.charge.tokens
      if (!isExact(x.held.charge)) inexact--
    }
    if (list.ordered) {
      for (let y = x.next; y !== undefined; y = y.next) {
        if (!isLive(e.live, y)) continue
        removed = true
        e.live = unlive(e.live, y)
        q -= y.held.charge.requests
        t -= y.held.charge.tokens
        if (!isExact(y.held.charge)) inexact--
      }
      break
    }
  }
  if (!removed) return
  if (list.inexact > 0) [q, t] = recount(kept)
  e.charges[r] = {
    head: relink(kept),
    live: kept.length,
    dead: 0,
    inexact,
    ordered: list.ordered || isOrdered(kept)
  }
  e.chargedRequests[r] = kept.length === 0 ? 0 : q
  e.chargedTokens[r] = kept.length === 0 ? 0 : t
}

const isOrdered = (newestFirst: ReadonlyArray<ChargeNode>): boolean => {
  for (let i = 1; i < newestFirst.length; i++)
    if (!(newestFirst[i]!.held.charge.routedAtSeconds <= newestFirst[i - 1]!.held.charge.routedAtSeconds))
      return false
  return true
}

/**
 * Fold snapshots in. A row older than the one held is ignored (never an overwrite with older data);
 * a row is applied when its timestamp is equal or newer. Charges routed strictly before
 * `timestamp - inclusionMarginSeconds` are provably included in the row and are dropped; the rest
 * stay. Invalid rows are ignored (the rank keeps its previous view). A row without `timestamp` is
 * observed at `now`. An unknown row (see {@link classifyLoad}) makes the rank unknown, as if it never
 * published: `snapTimestamp` NaN (never fresh: routing takes {@link unknownBase} for it), KV usage
 * as reported by a partial row (else unknown), no charge dropped.
 *
 * @internal
 */
export const observeLedger = (
  state: LedgerState,
  loads: ReadonlyArray<RankLoad>,
  inclusionMarginSeconds: number,
  now: number
): LedgerState => {
  let snaps:
    | {
        snapshots: Array<RankLoad | undefined>
        snapTimestamp: Array<number>
        snapRequests: Array<number>
        snapWaiting: Array<number>
        snapTokens: Array<number>
        snapKv: Array<number>
      }
    | undefined
  let edit: ChargeEdit | undefined
  for (const row of loads) {
    const kind = classifyLoad(row, state.dpSize)
    if (kind === "invalid") continue
    const l = row.timestamp === undefined ? { ...row, timestamp: now } : row
    const timestamp = l.timestamp!
    const r = l.dpRank
    const held = (snaps ?? state).snapTimestamp[r]!
    if (timestamp < held) continue // NaN (never published, or unknown) compares false: applied
    snaps ??= {
      snapshots: state.snapshots.slice(),
      snapTimestamp: state.snapTimestamp.slice(),
      snapRequests: state.snapRequests.slice(),
      snapWaiting: state.snapWaiting.slice(),
      snapTokens: state.snapTokens.slice(),
      snapKv: state.snapKv.slice()
    }
    snaps.snapshots[r] = l
    if (kind === "unknown") {
      // a partial row keeps the KV usage it did report
      const kv = l.unknown === undefined ? l.kvCacheUsage : undefined
      snaps.snapTimestamp[r] = Number.NaN
      snaps.snapKv[r] = kv !== undefined && kv >= 0 && kv <= 1 ? kv : Number.NaN
      continue
    }
    snaps.snapTimestamp[r] = timestamp
    snaps.snapRequests[r] = l.numRunningReqs! + l.numWaitingReqs!
    snaps.snapWaiting[r] = l.numWaitingReqs!
    snaps.snapTokens[r] = l.numTotalTokens!
    snaps.snapKv[r] = l.kvCacheUsage === undefined ? Number.NaN : l.kvCacheUsage
    if ((edit ?? state).charges[r]!.live === 0) continue
    edit ??= {
      charges: state.charges.slice(),
      chargedRequests: state.chargedRequests.slice(),
      chargedTokens: state.chargedTokens.slice(),
      live: state.live
    }
    dropIncluded(edit, r, timestamp, inclusionMarginSeconds)
  }
  if (snaps === undefined) return state
  return {
    dpSize: state.dpSize,
    snapshots: snaps.snapshots,
    snapTimestamp: snaps.snapTimestamp,
    snapRequests: snaps.snapRequests,
    snapWaiting: snaps.snapWaiting,
    snapTokens: snaps.snapTokens,
    snapKv: snaps.snapKv,
    charges: edit?.charges ?? state.charges,
    chargedRequests: edit?.chargedRequests ?? state.chargedRequests,
    chargedTokens: edit?.chargedTokens ?? state.chargedTokens,
    healthy: state.healthy,
    owner: state.owner,
    live: edit?.live ?? state.live
  }
}

/**
 * Charge one routed request to `rank`: O(ranks) for the copied columns plus two persistent-map
 * writes, whatever the number of charges held. @internal
 */
export const chargeLedger = (state: LedgerState, rank: number, charge: Charge): LedgerState => {
  const list = state.charges[rank]!
  const held: Held = { charge, rank }
  const node: ChargeNode = { held, next: list.head }
  const charges = state.charges.slice()
  charges[rank] = {
    head: node,
    live: list.live + 1,
    dead: list.dead,
    inexact: isExact(charge) ? list.inexact : list.inexact + 1,
    ordered:
      list.ordered &&
      (list.head === undefined || list.head.held.charge.routedAtSeconds <= charge.routedAtSeconds)
  }
  const chargedRequests = state.chargedRequests.slice()
  chargedRequests[rank] = chargedRequests[rank]! + charge.requests
  const chargedTokens = state.chargedTokens.slice()
  chargedTokens[rank] = chargedTokens[rank]! + charge.tokens
  const prev = getTrie(state.live, charge.requestId)
  const live = setTrie(state.live, charge.requestId, prev === undefined ? [held] : [...prev, held])
  return withCharges(
    state,
    charges,
    chargedRequests,
    chargedTokens,
    setTrie(state.owner, charge.requestId, rank),
    live
  )
}

/**
 * Drop the charges of finished or aborted requests (unknown ids are ignored). Each id is looked up
 * in the owner map, so the cost does not grow with the requests in flight. A request id reused
 * while still charged keeps only its latest rank in the map; an older charge under the same id then
 * leaves at the next snapshot that includes it.
 *
 * @internal
 */
export const finishLedger = (state: LedgerState, requestIds: ReadonlyArray<string>): LedgerState => {
  let edit: ChargeEdit | undefined
  let owner = state.owner
  for (const id of requestIds) {
    const r = getTrie(owner, id)
    if (r === undefined) continue
    owner = setTrie(owner, id, undefined)
    const live = edit?.live ?? state.live
    const xs = getTrie(live, id)
    if (xs === undefined) continue
    let onRank = 0
    for (const x of xs) if (x.rank === r) onRank++
    if (onRank === 0) continue
    edit ??= {
      charges: state.charges.slice(),
      chargedRequests: state.chargedRequests.slice(),
      chargedTokens: state.chargedTokens.slice(),
      live: state.live
    }
    const rest = onRank === xs.length ? undefined : xs.filter((x) => x.rank !== r)
    edit.live = setTrie(edit.live, id, rest)
    const list = edit.charges[r]!
    let q = edit.chargedRequests[r]!
    let t = edit.chargedTokens[r]!
    let inexact = list.inexact
    for (const x of xs) {
      if (x.rank !== r) continue
      q -= x.charge.requests
      t -= x.charge.tokens
      if (!isExact(x.charge)) inexact--
    }
    const liveLeft = list.live - onRank
    const dead = list.dead + onRank
    if (liveLeft === 0) {
      edit.charges[r] = noCharges
      edit.chargedRequests[r] = 0
      edit.chargedTokens[r] = 0
    } else if (list.inexact > 0 || dead > 32 + liveLeft) {
      // recount in routing order (inexact sums), or compact the tombstones away (amortized O(1))
      const kept = liveNodes(edit.live, list.head)
      if (list.inexact > 0) [q, t] = recount(kept)
      const compact = dead > 32 + liveLeft
      edit.charges[r] = {
        head: compact ? relink(kept) : list.head,
        live: liveLeft,
        dead: compact ? 0 : dead,
        inexact: countInexact(kept),
        ordered: compact ? list.ordered || isOrdered(kept) : list.ordered
      }
      edit.chargedRequests[r] = q
      edit.chargedTokens[r] = t
    } else {
      edit.charges[r] = { head: list.head, live: liveLeft, dead, inexact, ordered: list.ordered }
      edit.chargedRequests[r] = q
      edit.chargedTokens[r] = t
    }
  }
  if (owner === state.owner) return state
  return withCharges(
    state,
    edit?.charges ?? state.charges,
    edit?.chargedRequests ?? state.chargedRequests,
    edit?.chargedTokens ?? state.chargedTokens,
    owner,
    edit?.live ?? state.live
  )
}

/** Replace health; a status of the wrong length is ignored (as upstream). @internal */
export const setLedgerStatus = (state: LedgerState, status: ReadonlyArray<boolean>): LedgerState =>
  status.length === state.dpSize ? { ...state, healthy: [...status] } : state

/**
 * The busiest fresh base load at `now` (`requests < 0` when no rank is fresh), and per field the
 * busiest known values (`knownRunning` / `knownWaiting` / `knownTokens`: the maxima over every rank
 * whose last row is known, stale ones included; `< 0` when none). Stale ranks take the fresh maxima
 * as their floor; unknown and never-published ranks the known ones (see {@link unknownBase}).
 *
 * @internal
 */
export interface FreshMax {
  readonly requests: number
  readonly tokens: number
  readonly knownRunning: number
  readonly knownWaiting: number
  readonly knownTokens: number
}

/** @internal */
export const freshMax = (state: LedgerState, now: number, staleAfterSeconds: number): FreshMax => {
  let q = -1
  let t = -1
  let kr = -1
  let kw = -1
  let kt = -1
  const ts = state.snapTimestamp
  for (let r = 0; r < state.dpSize; r++) {
    const at = ts[r]!
    if (Number.isNaN(at)) continue
    const requests = state.snapRequests[r]!
    const waiting = state.snapWaiting[r]!
    const tokens = state.snapTokens[r]!
    kr = Math.max(kr, requests - waiting)
    kw = Math.max(kw, waiting)
    kt = Math.max(kt, tokens)
    if (now - at <= staleAfterSeconds) {
      q = Math.max(q, requests)
      t = Math.max(t, tokens)
    }
  }
  return { requests: q, tokens: t, knownRunning: kr, knownWaiting: kw, knownTokens: kt }
}

/** A field of an unknown rank's row: its own value when it reported a usable one, else the busiest known. */
const ownOrBusiest = (x: number | undefined, busiest: number): number =>
  isCount(x) ? x : Math.max(busiest, 0)

/**
 * The base `[requests, tokens, waiting]` of a rank whose load is unknown (an `unknown` row, a row
 * missing a count, or never published): each field it reported, and for each field it did not the
 * busiest known value (see {@link FreshMax}), so it is never less busy than a known rank would be
 * in its place; when its row is stale (or it never published), at least the busiest fresh base as
 * for a stale rank. With no known rank at all, an unreported field counts 0 (every rank is unknown).
 *
 * @internal
 */
export const unknownBase = (
  row: RankLoad | undefined,
  fm: FreshMax,
  now: number,
  staleAfterSeconds: number
): readonly [number, number, number] => {
  const known = row !== undefined && row.unknown === undefined
  const running = ownOrBusiest(known ? row.numRunningReqs : undefined, fm.knownRunning)
  const waiting = ownOrBusiest(known ? row.numWaitingReqs : undefined, fm.knownWaiting)
  const tokens = ownOrBusiest(known ? row.numTotalTokens : undefined, fm.knownTokens)
  const at = row?.timestamp
  // a stale (or never published) one also takes the stale floor, as a known stale rank would
  if (fm.requests >= 0 && !(at !== undefined && now - at <= staleAfterSeconds))
    return [Math.max(running + waiting, fm.requests), Math.max(tokens, fm.tokens), waiting]
  return [running + waiting, tokens, waiting]
}

/** The base `[requests, tokens, waiting]` of rank `r` at `now` (fresh, stale or unknown). @internal */
export const baseOf = (
  state: LedgerState,
  r: number,
  now: number,
  staleAfterSeconds: number,
  fm: FreshMax
): readonly [number, number, number] => {
  if (Number.isNaN(state.snapTimestamp[r]!))
    return unknownBase(state.snapshots[r], fm, now, staleAfterSeconds)
  const fresh = isFresh(state, r, now, staleAfterSeconds)
  const q = state.snapRequests[r]!
  const t = state.snapTokens[r]!
  const w = state.snapWaiting[r]!
  return fresh || fm.requests < 0 ? [q, t, w] : [Math.max(q, fm.requests), Math.max(t, fm.tokens), w]
}

/** True when rank `r`'s snapshot is fresh at `now` (false when it never published or is unknown). @internal */
export const isFresh = (state: LedgerState, r: number, now: number, staleAfterSeconds: number): boolean =>
  now - state.snapTimestamp[r]! <= staleAfterSeconds

/** Effective requests of rank `r` at `now` (base per the staleness rule, plus charges). @internal */
export const effectiveRequests = (
  state: LedgerState,
  r: number,
  now: number,
  staleAfterSeconds: number,
  fm: FreshMax
): number => baseOf(state, r, now, staleAfterSeconds, fm)[0] + state.chargedRequests[r]!

/**
 * The highest KV usage any rank reported (its last known row), `undefined` when none did: what a
 * rank whose KV usage is unknown is taken to have wherever KV usage gates a choice.
 *
 * @internal
 */
export const maxKnownKv = (state: LedgerState): number | undefined => {
  let m = Number.NaN
  for (const kv of state.snapKv) if (!(kv <= m)) m = Number.isNaN(kv) ? m : kv
  return Number.isNaN(m) ? undefined : m
}

/** KV usage of rank `r`, `undefined` when not reported. @internal */
export const kvOf = (state: LedgerState, r: number): number | undefined => {
  const kv = state.snapKv[r]!
  return Number.isNaN(kv) ? undefined : kv
}

/** Every rank's view at `now` (allocates; routing uses the scalar helpers above). @internal */
export const ledgerView = (
  state: LedgerState,
  now: number,
  staleAfterSeconds: number
): ReadonlyArray<RankView> => {
  const fm = freshMax(state, now, staleAfterSeconds)
  return state.snapshots.map((s, r) => {
    const fresh = isFresh(state, r, now, staleAfterSeconds)
    const [requests, tokens, waiting] = baseOf(state, r, now, staleAfterSeconds, fm)
    return {
      requests: requests + state.chargedRequests[r]!,
      tokens: tokens + state.chargedTokens[r]!,
      waiting: waiting + state.chargedRequests[r]!,
      kvCacheUsage: kvOf(state, r),
      ageSeconds:
        s?.timestamp === undefined || Number.isNaN(state.snapTimestamp[r]!) ? undefined : now - s.timestamp,
      stale: s !== undefined && !fresh && !Number.isNaN(state.snapTimestamp[r]!),
      unknown: Number.isNaN(state.snapTimestamp[r]!)
    }
  })
}
