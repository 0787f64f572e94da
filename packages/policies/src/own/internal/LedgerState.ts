/**
 * The in-flight charge ledger's types (`LedgerState`, its per-rank `ChargeList` of `Charge`s), below
 * every module that reads or edits the ledger.
 *
 * @internal
 */
import type { RankLoad } from "../../Policy.js"
import type { HashTrie } from "./HashTrie.js"

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
 * finished (a tombstone, skipped and compacted away); it is live while its request's entry in
 * `byId` still lists this exact `Held`.
 *
 * @internal
 */
export interface ChargeNode {
  readonly held: Held
  readonly next: ChargeNode | undefined
}

/** A charge and the rank it was charged to: the identity a request's `live` list holds. @internal */
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

/**
 * A request id's entry in `byId`: the rank it was last charged to (`undefined` once it finished:
 * then no longer held) and its charges still live (newest last; a snapshot drops them, `finish`
 * those on `rank`). One map for both: a route and a finish each read and write it once.
 *
 * @internal
 */
export interface IdEntry {
  readonly rank: number | undefined
  readonly live: ReadonlyArray<Held>
}

export const noCharges: ChargeList = { head: undefined, live: 0, dead: 0, inexact: 0, ordered: true }

/**
 * The in-flight-charging ledger both loadledger policies build on, stored column-wise so routing
 * reads flat arrays: the newest snapshot per rank (`snapshots`, and its numbers in `snap*`, with
 * `snapTimestamp` NaN for a rank that never published or whose row is unknown, `rowTimestamp` the
 * time of its newest row that reported its request counts, partial or complete (NaN: none), and
 * `snapKv` NaN when KV usage was not reported), the charges not yet provably included (per rank, a
 * persistent list in routing order)
 * and their sums, per-rank health, and per request id the rank it was charged to and its live
 * charges (`byId`, see {@link IdEntry}). Nothing here is ever
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
  readonly byId: HashTrie<IdEntry>
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
