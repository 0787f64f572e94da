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

  /** A child of `v` made by `edits` (already applied to the store, `v` its head before); `v` itself when none. */
  static commit(v: Charges, edits: Array<unknown>): Charges {
    if (edits.length === 0) return v
    const s = v.#store
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

/** Write `x` to rank `r` of column `t`, recording the edit in `e`. */
const setN = (e: Array<unknown>, t: Array<number>, r: number, x: number): void => {
  e.push(t, r, t[r], x)
  t[r] = x
}

/** Set (`ABSENT`: delete) key `k` of `t`, recording the edit in `e`. */
const setM = <V>(e: Array<unknown>, t: Map<string, V>, k: string, x: V | typeof ABSENT): void => {
  e.push(t, k, t.has(k) ? t.get(k) : ABSENT, x)
  if (x === ABSENT) t.delete(k)
  else t.set(k, x)
}

/** Rank `r`'s sums recounted over its live charges in routing order (inexact sums). */
const recount = (s: Store, r: number, e: Array<unknown>): void => {
  const held = [...s.live[r]!.values()].sort((a, b) => a.seq - b.seq)
  let q = 0
  let t = 0
  for (const h of held) {
    q += h.charge.requests
    t += h.charge.tokens
  }
  setN(e, s.requests, r, q)
  setN(e, s.tokens, r, t)
}

/** Take `h` off its rank's live charges (its request stays held, not live). */
const unlive = (s: Store, h: Held, e: Array<unknown>): void => {
  const r = h.rank
  const id = h.charge.requestId
  const inexact = s.inexact[r]!
  setM(e, s.live[r]!, id, ABSENT)
  if (!isExact(h.charge)) setN(e, s.inexact, r, inexact - 1)
  if (s.live[r]!.size === 0) {
    setN(e, s.requests, r, 0)
    setN(e, s.tokens, r, 0)
  } else if (inexact > 0) recount(s, r, e)
  else {
    setN(e, s.requests, r, s.requests[r]! - h.charge.requests)
    setN(e, s.tokens, r, s.tokens[r]! - h.charge.tokens)
  }
}

/** `v` with `charge` held on `rank` (a request id already held is finished first). */
export const chargeTo = (v: Charges, rank: number, charge: Charge): Charges => {
  const s = Charges.store(v)
  const e: Array<unknown> = []
  const id = charge.requestId
  if (s.ids.has(id)) finishIn(s, id, e)
  const held: Held = { charge, rank, seq: Charges.seq(v) }
  setM(e, s.ids, id, { rank, held, live: true })
  setM(e, s.live[rank]!, id, held)
  if (!isExact(charge)) setN(e, s.inexact, rank, s.inexact[rank]! + 1)
  setN(e, s.requests, rank, s.requests[rank]! + charge.requests)
  setN(e, s.tokens, rank, s.tokens[rank]! + charge.tokens)
  if (s.inflightRequests !== undefined) {
    setN(e, s.inflightRequests, rank, s.inflightRequests[rank]! + charge.requests)
    setN(e, s.inflightTokens!, rank, s.inflightTokens![rank]! + charge.tokens)
  }
  return Charges.commit(v, e)
}

const finishIn = (s: Store, id: string, e: Array<unknown>): void => {
  const entry = s.ids.get(id)
  if (entry === undefined) return
  const { rank: r, held } = entry
  setM(e, s.ids, id, ABSENT)
  if (entry.live) unlive(s, held, e)
  if (s.inflightRequests !== undefined) {
    setN(e, s.inflightRequests, r, Math.max(0, s.inflightRequests[r]! - held.charge.requests))
    setN(e, s.inflightTokens!, r, Math.max(0, s.inflightTokens![r]! - held.charge.tokens))
  }
}

/** `v` without the requests `ids` (unknown ids are ignored). */
export const finishIds = (v: Charges, ids: ReadonlyArray<string>): Charges => {
  const s = Charges.store(v)
  const e: Array<unknown> = []
  for (const id of ids) finishIn(s, id, e)
  return Charges.commit(v, e)
}

/** `v` without rank `r`'s live charges routed before `timestamp - margin` (a snapshot includes them). */
export const dropIncluded = (v: Charges, r: number, timestamp: number, margin: number): Charges => {
  const s = Charges.store(v)
  if (s.live[r]!.size === 0) return v
  const e: Array<unknown> = []
  const dropped: Array<Held> = []
  for (const h of s.live[r]!.values()) if (h.charge.routedAtSeconds + margin < timestamp) dropped.push(h)
  for (const h of dropped) {
    setM(e, s.ids, h.charge.requestId, { rank: r, held: h, live: false })
    unlive(s, h, e)
  }
  return Charges.commit(v, e)
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
