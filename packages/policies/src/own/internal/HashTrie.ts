/**
 * A persistent map keyed by strings, with a two-generation bound: at most `maxSize` keys, at
 * least the `maxSize / 2` most recently set. One pair of mutable `Map`s (the generations) is
 * shared by every version; a version other than the newest is reached by rerooting (H. Baker,
 * "Shallow binding makes functional arrays fast", 1991): O(1) per get and set on the newest
 * version, O(k) to read a version k sets old (it answers as it did: the persistence laws).
 * Replaced a path-copying hash trie (a write copied three levels of 32-slot nodes): the own
 * policies' route + finish at 8 ranks took 0.22-0.89 of the trie's time (tsx, interleaved in one
 * process, 2026-12-08); built figures with the one ledger: packages/policies/README.md.
 *
 * Versions hold their data in private fields: a deep comparison of two versions sees no field
 * (vacuously equal), the decisions they lead to are what the laws compare.
 *
 * @internal
 */

/** The generations, as the head version sees them. */
interface Store<V> {
  current: Map<string, V | undefined>
  previous: Map<string, V | undefined>
  currentSize: number
  head: HashTrie<V>
}

/** Marks "the current generation did not hold the key" (a stored `undefined` is a deletion). */
const MISSING: unique symbol = Symbol("missing")
type Old<V> = V | undefined | typeof MISSING

/** The generation fields before a set that started a new generation. */
interface Turnover<V> {
  readonly current: Map<string, V | undefined>
  readonly previous: Map<string, V | undefined>
  readonly newCurrent: Map<string, V | undefined>
}

/**
 * A version: the set that made it from its parent (`key` to `value`; `old` the current
 * generation's value before, `MISSING` when it had none; `turnover` when the set filled the
 * generation). `#next` leads toward the head: `#next` is this version's child (`#nextIsChild`) or
 * this version was made from `#next`. Opaque.
 *
 * @internal
 */
export class HashTrie<V> {
  #store: Store<V>
  #next: HashTrie<V> | undefined = undefined
  #nextIsChild = false
  readonly #key: string
  readonly #value: V | undefined
  readonly #old: Old<V>
  readonly #oldSize: number
  readonly #turnover: Turnover<V> | undefined
  readonly #maxSize: number

  constructor(
    store: Store<V> | undefined,
    maxSize: number,
    key = "",
    value: V | undefined = undefined,
    old: Old<V> = MISSING,
    oldSize = 0,
    turnover: Turnover<V> | undefined = undefined
  ) {
    this.#store = store ?? { current: new Map(), previous: new Map(), currentSize: 0, head: this }
    this.#maxSize = maxSize
    this.#key = key
    this.#value = value
    this.#old = old
    this.#oldSize = oldSize
    this.#turnover = turnover
  }

  /** Apply the set that made `t` to the store, forward (`t`'s parent is the head) or backward. */
  static #apply<V>(s: Store<V>, t: HashTrie<V>, forward: boolean): void {
    if (forward) {
      const current = s.current
      current.set(t.#key, t.#value)
      s.currentSize = t.#oldSize + (t.#old === MISSING ? 1 : 0)
      if (t.#turnover !== undefined) {
        s.previous = current
        s.current = t.#turnover.newCurrent
        s.currentSize = 0
      }
      return
    }
    if (t.#turnover !== undefined) {
      s.current = t.#turnover.current
      s.previous = t.#turnover.previous
    }
    if (t.#old === MISSING) s.current.delete(t.#key)
    else s.current.set(t.#key, t.#old)
    s.currentSize = t.#oldSize
  }

  /** Make `v` the head: walk to the head, then apply the sets back to `v`, flipping each link. */
  static #reroot<V>(v: HashTrie<V>): Store<V> {
    const s = v.#store
    if (s.head === v) return s
    const path: Array<HashTrie<V>> = []
    for (let x: HashTrie<V> = v; x !== s.head; x = x.#next!) path.push(x)
    for (let i = path.length - 1; i >= 0; i--) {
      const x = path[i]!
      const head = x.#next!
      // the head is `x`'s child: undo its set; else `x` is the head's child: redo `x`'s
      if (x.#nextIsChild) HashTrie.#apply(s, head, false)
      else HashTrie.#apply(s, x, true)
      head.#next = x
      head.#nextIsChild = !x.#nextIsChild
      x.#next = undefined
      x.#nextIsChild = false
      s.head = x
    }
    return s
  }

  static get<V>(t: HashTrie<V>, key: string): V | undefined {
    const s = HashTrie.#reroot(t)
    const v = s.current.get(key)
    if (v !== undefined || s.current.has(key)) return v
    return s.previous.get(key)
  }

  static set<V>(t: HashTrie<V>, key: string, value: V | undefined): HashTrie<V> {
    const s = HashTrie.#reroot(t)
    const current = s.current
    const old: Old<V> = current.has(key) ? current.get(key) : MISSING
    const size = s.currentSize + (old === MISSING ? 1 : 0)
    const turnover =
      size >= t.#maxSize / 2 ? { current, previous: s.previous, newCurrent: new Map() } : undefined
    const w = new HashTrie(s, t.#maxSize, key, value, old, s.currentSize, turnover)
    HashTrie.#apply(s, w, true)
    t.#next = w
    t.#nextIsChild = true
    s.head = w
    return w
  }

  static map<V>(t: HashTrie<V>, f: (v: V) => V): HashTrie<V> {
    const s = HashTrie.#reroot(t)
    const copy = (m: Map<string, V | undefined>) => {
      const out = new Map<string, V | undefined>()
      for (const [k, v] of m) out.set(k, v === undefined ? undefined : f(v))
      return out
    }
    const u = new HashTrie<V>(undefined, t.#maxSize)
    u.#store.current = copy(s.current)
    u.#store.previous = copy(s.previous)
    u.#store.currentSize = s.currentSize
    return u
  }
}

/** 32-bit FNV-1a of a string's UTF-16 code units. */
export const fnv1a = (s: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

/** An empty map keeping at most `maxSize` keys. */
export const emptyTrie = <V>(maxSize: number): HashTrie<V> => new HashTrie<V>(undefined, Math.max(2, maxSize))

/** Look a key up. */
export const getTrie = <V>(t: HashTrie<V>, key: string): V | undefined => HashTrie.get(t, key)

/** Set (or, with `undefined`, delete) a key. */
export const setTrie = <V>(t: HashTrie<V>, key: string, value: V | undefined): HashTrie<V> =>
  HashTrie.set(t, key, value)

/** A copy with every stored value `v` replaced by `f(v)` (deletions stay deletions). */
export const mapTrieValues = <V>(t: HashTrie<V>, f: (v: V) => V): HashTrie<V> => HashTrie.map(t, f)
