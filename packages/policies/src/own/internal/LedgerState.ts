/**
 * The one in-flight charge ledger of the own policies: its types, and its charges (`Charges`), a
 * persistent store of per-rank sums and per-request entries, below every module that reads or
 * edits the ledger.
 *
 * @internal
 */
import type { RankLoad } from "../../Policy.js"

/** One routed request charged to a rank. */
export interface Charge {
  readonly requestId: string
  readonly routedAtSeconds: number
  readonly requests: number
  readonly tokens: number
}

/** A charge held on a rank; `seq` orders the charges by routing (sums are recounted in that order). */
interface Held {
  readonly charge: Charge
  readonly rank: number
  readonly seq: number
}

/** A routed, unfinished request: its rank and charge, and `live` while no snapshot includes it. */
interface IdEntry {
  readonly rank: number
  readonly held: Held
  readonly live: boolean
}

/** The mutable columns, as the head version sees them. */
export interface Store {
  readonly requests: Array<number>
  readonly tokens: Array<number>
  /** Per rank, its live charges by request id. */
  readonly live: Array<Map<string, Held>>
  /** Per rank, how many of its live charges are not exact integers (their sums are recounted). */
  readonly inexact: Array<number>
  readonly inflightRequests: Array<number> | undefined
  readonly inflightTokens: Array<number> | undefined
  readonly ids: Map<string, IdEntry>
  head: Charges
}

/** Marks an absent map key in an edit. */
const ABSENT: unique symbol = Symbol("absent")
type Target = Array<unknown> | Map<string, unknown>

const put = (t: Target, k: number | string, v: unknown): void => {
  if (Array.isArray(t)) t[k as number] = v
  else if (v === ABSENT) t.delete(k as string)
  else t.set(k as string, v)
}

/**
 * The charges of a ledger version. One mutable {@link Store} is shared by every version; the
 * head reads and writes it directly, any other version is reached by rerooting (as `HashTrie`):
 * each version holds the edits that made it from its parent (`target, key, before, after`, four
 * slots each), `#next` leads toward the head. O(1) per charge, finish and read of the newest
 * version at any rank count; a version k operations old answers as it did after O(k). Opaque
 * (private fields: a deep comparison of two versions sees none).
 *
 * @internal
 */
export class Charges {
  #store: Store
  #next: Charges | undefined = undefined
  #nextIsChild = false
  readonly #edits: Array<unknown>
  readonly #seq: number

  constructor(store: Store | undefined, edits: Array<unknown>, seq: number, n = 0, inflight = false) {
    this.#store = store ?? {
      requests: Array.from({ length: n }, () => 0),
      tokens: Array.from({ length: n }, () => 0),
      live: Array.from({ length: n }, () => new Map()),
      inexact: Array.from({ length: n }, () => 0),
      inflightRequests: inflight ? Array.from({ length: n }, () => 0) : undefined,
      inflightTokens: inflight ? Array.from({ length: n }, () => 0) : undefined,
      ids: new Map(),
      head: this
    }
    this.#edits = edits
    this.#seq = seq
  }

  static #apply(t: Charges, forward: boolean): void {
    const e = t.#edits
    if (forward) for (let i = 0; i < e.length; i += 4) put(e[i] as Target, e[i + 1] as string, e[i + 3])
    else for (let i = e.length - 4; i >= 0; i -= 4) put(e[i] as Target, e[i + 1] as string, e[i + 2])
  }

  /** The store, with `v` its head. */
  static store(v: Charges): Store {
    const s = v.#store
    if (s.head === v) return s
    const path: Array<Charges> = []
    for (let x: Charges = v; x !== s.head; x = x.#next!) path.push(x)
    for (let i = path.length - 1; i >= 0; i--) {
      const x = path[i]!
      const head = x.#next!
      // the head is `x`'s child: undo its edits; else `x` is the head's child: redo `x`'s
      Charges.#apply(x.#nextIsChild ? head : x, !x.#nextIsChild)
      head.#next = x
      head.#nextIsChild = !x.#nextIsChild
      x.#next = undefined
      x.#nextIsChild = false
      s.head = x
    }
    return s
  }

  /** A child of `v` made by `edit` (which writes through `set`); `v` itself when it wrote nothing. */
  static edit(
    v: Charges,
    edit: (s: Store, set: (t: Target, k: number | string, x: unknown) => void) => void
  ) {
    const s = Charges.store(v)
    const edits: Array<unknown> = []
    edit(s, (t, k, x) => {
      const before = Array.isArray(t) ? t[k as number] : t.has(k as string) ? t.get(k as string) : ABSENT
      edits.push(t, k, before, x)
      put(t, k, x)
    })
    if (edits.length === 0) return v
    const w = new Charges(s, edits, v.#seq + 1)
    v.#next = w
    v.#nextIsChild = true
    s.head = w
    return w
  }

  static seq(v: Charges): number {
    return v.#seq
  }
}

export const isExact = (c: Charge): boolean =>
  Number.isSafeInteger(c.requests) && c.requests >= 0 && Number.isSafeInteger(c.tokens) && c.tokens >= 0

type Write = (t: Target, k: number | string, x: unknown) => void

/** Rank `r`'s sums recounted over its live charges in routing order (inexact sums). */
const recount = (s: Store, r: number, set: Write): void => {
  const held = [...s.live[r]!.values()].sort((a, b) => a.seq - b.seq)
  let q = 0
  let t = 0
  for (const h of held) {
    q += h.charge.requests
    t += h.charge.tokens
  }
  set(s.requests, r, q)
  set(s.tokens, r, t)
}

/** Take `h` off its rank's live charges (its request stays held, not live). */
const unlive = (s: Store, h: Held, set: Write): void => {
  const r = h.rank
  const id = h.charge.requestId
  const inexact = s.inexact[r]!
  set(s.live[r]!, id, ABSENT)
  if (!isExact(h.charge)) set(s.inexact, r, inexact - 1)
  if (s.live[r]!.size === 0) {
    set(s.requests, r, 0)
    set(s.tokens, r, 0)
  } else if (inexact > 0) recount(s, r, set)
  else {
    set(s.requests, r, s.requests[r]! - h.charge.requests)
    set(s.tokens, r, s.tokens[r]! - h.charge.tokens)
  }
}

/** `v` with `charge` held on `rank` (a request id already held is finished first). */
export const chargeTo = (v: Charges, rank: number, charge: Charge): Charges =>
  Charges.edit(v, (s, set) => {
    const id = charge.requestId
    if (s.ids.has(id)) finishIn(s, id, set)
    const held: Held = { charge, rank, seq: Charges.seq(v) }
    set(s.ids, id, { rank, held, live: true })
    set(s.live[rank]!, id, held)
    if (!isExact(charge)) set(s.inexact, rank, s.inexact[rank]! + 1)
    set(s.requests, rank, s.requests[rank]! + charge.requests)
    set(s.tokens, rank, s.tokens[rank]! + charge.tokens)
    if (s.inflightRequests !== undefined) {
      set(s.inflightRequests, rank, s.inflightRequests[rank]! + charge.requests)
      set(s.inflightTokens!, rank, s.inflightTokens![rank]! + charge.tokens)
    }
  })

const finishIn = (s: Store, id: string, set: Write): void => {
  const e = s.ids.get(id)
  if (e === undefined) return
  const { rank: r, held } = e
  set(s.ids, id, ABSENT)
  if (e.live) unlive(s, held, set)
  if (s.inflightRequests !== undefined) {
    set(s.inflightRequests, r, Math.max(0, s.inflightRequests[r]! - held.charge.requests))
    set(s.inflightTokens!, r, Math.max(0, s.inflightTokens![r]! - held.charge.tokens))
  }
}

/** `v` without the requests `ids` (unknown ids are ignored). */
export const finishIds = (v: Charges, ids: ReadonlyArray<string>): Charges =>
  Charges.edit(v, (s, set) => {
    for (const id of ids) finishIn(s, id, set)
  })

/** `v` without rank `r`'s live charges routed before `timestamp - margin` (a snapshot includes them). */
export const dropIncluded = (v: Charges, r: number, timestamp: number, margin: number): Charges => {
  const s = Charges.store(v)
  if (s.live[r]!.size === 0) return v
  return Charges.edit(v, (s, set) => {
    const dropped: Array<Held> = []
    for (const h of s.live[r]!.values()) if (h.charge.routedAtSeconds + margin < timestamp) dropped.push(h)
    for (const h of dropped) {
      set(s.ids, h.charge.requestId, { rank: r, held: h, live: false })
      unlive(s, h, set)
    }
  })
}

/**
 * The ledger, column-wise: the newest row per rank (`snap*`; `snapTimestamp` NaN when unknown,
 * `rowTimestamp` the newest row with request counts, `snapKv` NaN unreported, `snapFree` the free
 * KV tokens it reports, NaN none), health, and the {@link Charges} no snapshot includes yet (and,
 * when asked for, the in-flight floor: every routed, unfinished request's charge). Immutable; see
 * docs/own-policies.md.
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
  readonly snapFree: ReadonlyArray<number>
  readonly healthy: ReadonlyArray<boolean>
  readonly charges: Charges
}

/** Where a wrapped policy keeps its ledger, so a wrapper shares it instead of a second copy. */
export interface LedgerHolder<S> {
  readonly of: (state: S) => LedgerState
  readonly scale: number
  readonly margin: number
}
