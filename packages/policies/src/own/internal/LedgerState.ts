/**
 * The in-flight charge ledger's types (`LedgerState`, its per-rank `ChargeList` of `Charge`s),
 * below every module that reads or edits the ledger.
 *
 * @internal
 */
import type { RankLoad } from "../../Policy.js"
import type { HashTrie } from "./HashTrie.js"

/** One routed request charged to a rank. */
export interface Charge {
  readonly requestId: string
  readonly routedAtSeconds: number
  readonly requests: number
  readonly tokens: number
}

/** One charge in a rank's charge list (newest first). */
export interface ChargeNode {
  readonly held: Held
  readonly next: ChargeNode | undefined
}

/** A charge and the rank it was charged to. */
export interface Held {
  readonly charge: Charge
  readonly rank: number
}

/** A rank's charges, newest first, tombstones included (`inexact`: sums recounted; `ordered`: by time). */
export interface ChargeList {
  readonly head: ChargeNode | undefined
  readonly live: number
  readonly dead: number
  readonly inexact: number
  readonly ordered: boolean
}

/** A request id's rank (`undefined` once finished) and its live charges. */
export interface IdEntry {
  readonly rank: number | undefined
  readonly live: ReadonlyArray<Held>
  /** The charge counted in `inflight*` until the request finishes (when the ledger tracks them). */
  readonly routed: Charge | undefined
}

export const noCharges: ChargeList = { head: undefined, live: 0, dead: 0, inexact: 0, ordered: true }

/**
 * The one in-flight charge ledger, column-wise: the newest row per rank (`snap*`; `snapTimestamp`
 * NaN when unknown, `rowTimestamp` the newest row with request counts, `snapKv` NaN unreported),
 * the charges no snapshot includes yet and their sums, health, and per request id its rank and live
 * charges. `inflight*` (when asked for): the charges of the requests routed and not yet finished,
 * whatever the snapshots say (the in-flight floor). Immutable; see docs/own-policies.md.
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
  readonly inflightRequests: ReadonlyArray<number> | undefined
  readonly inflightTokens: ReadonlyArray<number> | undefined
}

/** Where a wrapped policy keeps its ledger, so a wrapper shares it instead of a second copy. */
export interface LedgerHolder<S> {
  readonly of: (state: S) => LedgerState
  readonly scale: number
  readonly margin: number
}
