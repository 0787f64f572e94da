/**
 * The in-flight charges of loadledger's own policies: every routed request charged to its rank
 * until a snapshot stamped after it arrives or it finishes, plus the newest snapshot per rank.
 *
 * Over 300 lines: one concept (the ledger state and the five edits over it: observe, charge,
 * finish, status, batch charge), which all keep the same per-rank list and sum invariants.
 *
 * @internal
 */

import { isCount, malformedRow } from "../../internal/counts.js"
import { packed } from "../../internal/packed.js"
import type { RankLoad, RouteRequest } from "../../Policy.js"
import { checkStatus } from "../../RankStatus.js"
import {
  type ChargeEdit,
  countInexact,
  dropIncluded,
  isExact,
  isOrdered,
  liveNodes,
  recount,
  relink
} from "./ChargeLists.js"
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
 * The charge of `request` routed at `now`, counted `scale` times (a front end that charges for
 * the `clientCount` front ends it stands for: `scale` requests, `scale x inputLength` tokens).
 *
 * @internal
 */
export const chargeOf = (request: RouteRequest, now: number, scale: number): Charge => ({
  requestId: request.requestId,
  routedAtSeconds: now,
  requests: scale,
  tokens: scale * request.inputLength
})

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
 * `snapTimestamp` NaN for a rank that never published or whose row is unknown, `rowTimestamp` the
 * time of its newest row that reported its request counts, partial or complete (NaN: none), and
 * `snapKv` NaN when KV usage was not reported), the charges not yet provably included (per rank, a
 * persistent list in routing order)
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
  readonly rowTimestamp: ReadonlyArray<number>
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
    rowTimestamp: packed<number>(n, Number.NaN),
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
  rowTimestamp: s.rowTimestamp,
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
        rowTimestamp: Array<number>
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
    // the newest row that reported counts is held; NaN (none) compares false: applied
    const held = (snaps ?? state).rowTimestamp[r]!
    if (timestamp < held) continue
    snaps ??= {
      snapshots: state.snapshots.slice(),
      snapTimestamp: state.snapTimestamp.slice(),
      rowTimestamp: state.rowTimestamp.slice(),
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
      // a partial row that counts requests (vLLM's coordinator publishes no tokens) is dated: the
      // time of its counts. Its charges stay until their requests finish: every front end reads
      // the same counts, and dropping each front end's charges at every publish herded them onto
      // the least-counted rank (simulator, four vLLM front ends on vLLM's rows: ledger-balanced's
      // TTFT p99 5x on the Azure conversation trace at 70%)
      const counted =
        l.unknown === undefined &&
        !malformedRow(l) &&
        (isCount(l.numRunningReqs) || isCount(l.numWaitingReqs))
      snaps.rowTimestamp[r] = counted ? timestamp : Number.NaN
      continue
    }
    snaps.snapTimestamp[r] = timestamp
    snaps.rowTimestamp[r] = timestamp
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
    rowTimestamp: snaps.rowTimestamp,
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
 * Charge one routed request to `rank` ({@link chargeLedgerMany} of one item): O(ranks) for the
 * copied columns plus two persistent-map writes, whatever the number of charges held. @internal
 */
export const chargeLedger = (state: LedgerState, rank: number, charge: Charge): LedgerState =>
  chargeLedgerMany(state, [{ charge, rank }])

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

/** Whether `requestId` holds a charge (routed, not finished). @internal */
export const ledgerHolds = (state: LedgerState, requestId: string): boolean =>
  getTrie(state.owner, requestId) !== undefined

/** Replace health; a status of the wrong length is ignored (as upstream). @internal */
export const setLedgerStatus = (state: LedgerState, status: ReadonlyArray<boolean>): LedgerState =>
  checkStatus(status, state.dpSize) === undefined ? { ...state, healthy: [...status] } : state

/**
 * Charge several routed requests in order (each `Held` names its charge and rank): the same state
 * as {@link chargeLedger} called once per item, with the columns copied once, so a batch of k
 * charges costs O(ranks + k) instead of O(ranks x k). The `Held` objects are kept as given (their
 * identity is what the `live` map lists). @internal
 */
export const chargeLedgerMany = (state: LedgerState, items: ReadonlyArray<Held>): LedgerState => {
  if (items.length === 0) return state
  const charges = state.charges.slice()
  const chargedRequests = state.chargedRequests.slice()
  const chargedTokens = state.chargedTokens.slice()
  let owner = state.owner
  let live = state.live
  for (const held of items) {
    const { charge, rank } = held
    const list = charges[rank]!
    charges[rank] = {
      head: { held, next: list.head },
      live: list.live + 1,
      dead: list.dead,
      inexact: isExact(charge) ? list.inexact : list.inexact + 1,
      ordered:
        list.ordered &&
        (list.head === undefined || list.head.held.charge.routedAtSeconds <= charge.routedAtSeconds)
    }
    chargedRequests[rank] = chargedRequests[rank]! + charge.requests
    chargedTokens[rank] = chargedTokens[rank]! + charge.tokens
    const prev = getTrie(live, charge.requestId)
    live = setTrie(live, charge.requestId, prev === undefined ? [held] : [...prev, held])
    owner = setTrie(owner, charge.requestId, rank)
  }
  return withCharges(state, charges, chargedRequests, chargedTokens, owner, live)
}

/**
 * What a policy that keeps an in-flight ledger says about it, so a wrapper around it reads that
 * ledger instead of keeping a second copy of the same charges (`withKvAdmission` around
 * `withStaleness`): where it is in the state, and the charge scale and inclusion margin it keeps
 * it with (a wrapper shares it only when its own are the same). @internal
 */
export interface LedgerHolder<S> {
  readonly of: (state: S) => LedgerState
  readonly scale: number
  readonly margin: number
}
