/**
 * A small persistent (immutable, path-copying) hash trie keyed by strings, with a two-generation bound.
 *
 * @internal
 */

/** A branch (`children` set. */
interface Node<V> {
  readonly bitmap: number
  readonly children: ReadonlyArray<Node<V>> | undefined
  readonly hash: number
  readonly key: string
  readonly value: V | undefined
  readonly more: Node<V> | undefined
}
type Slot<V> = Node<V> | undefined

export interface HashTrie<V> {
  readonly current: Slot<V>
  readonly previous: Slot<V>
  readonly currentSize: number
  readonly maxSize: number
}

/** 32-bit FNV-1a of a string's UTF-16 code units (the trie's key hash). */
export const fnv1a = (s: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

const popcount = (x: number): number => {
  let v = x - ((x >>> 1) & 0x55555555)
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333)
  return (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 63
}

const leaf = <V>(hash: number, key: string, value: V | undefined, more: Node<V> | undefined): Node<V> => ({
  bitmap: 0,
  children: undefined,
  hash,
  key,
  value,
  more
})

const branch = <V>(bitmap: number, children: ReadonlyArray<Node<V>>): Node<V> => ({
  bitmap,
  children,
  hash: 0,
  key: "",
  value: undefined,
  more: undefined
})

/** Marks "no entry for the key in this generation" (a stored `undefined` is a deletion). */
const MISSING: unique symbol = Symbol("missing")

const find = <V>(slot: Slot<V>, key: string, hash: number): V | undefined | typeof MISSING => {
  let shift = 0
  let s = slot
  while (s !== undefined) {
    const children = s.children
    if (children === undefined) {
      if (s.hash !== hash) return MISSING
      for (let l: Slot<V> = s; l !== undefined; l = l.more) if (l.key === key) return l.value
      return MISSING
    }
    const bit = 1 << ((hash >>> shift) & 31)
    if ((s.bitmap & bit) === 0) return MISSING
    s = children[popcount(s.bitmap & (bit - 1))]
    shift += 5
  }
  return MISSING
}

/** Set by `insert`. */
let added = false

/** A copy of the same-hash chain `l` with `key` set to `value` (appended when absent). */
const setInChain = <V>(l: Node<V> | undefined, hash: number, key: string, value: V | undefined): Node<V> => {
  if (l === undefined) {
    added = true
    return leaf(hash, key, value, undefined)
  }
  if (l.key === key) return leaf(hash, key, value, l.more)
  return leaf(hash, l.key, l.value, setInChain(l.more, hash, key, value))
}

const insert = <V>(
  slot: Slot<V>,
  key: string,
  hash: number,
  value: V | undefined,
  shift: number
): Node<V> => {
  if (slot === undefined) {
    added = true
    return leaf(hash, key, value, undefined)
  }
  const children = slot.children
  if (children === undefined) {
    if (slot.hash === hash) return setInChain(slot, hash, key, value)
    return insert(branch(1 << ((slot.hash >>> shift) & 31), [slot]), key, hash, value, shift)
  }
  const bit = 1 << ((hash >>> shift) & 31)
  const idx = popcount(slot.bitmap & (bit - 1))
  if ((slot.bitmap & bit) !== 0) {
    const next = children.slice()
    next[idx] = insert(children[idx], key, hash, value, shift + 5)
    return branch(slot.bitmap, next)
  }
  added = true
  const next: Array<Node<V>> = []
  for (let i = 0; i < idx; i++) next.push(children[i]!)
  next.push(leaf(hash, key, value, undefined))
  for (let i = idx; i < children.length; i++) next.push(children[i]!)
  return branch(slot.bitmap | bit, next)
}

/** An empty trie keeping at most `maxSize` keys. */
export const emptyTrie = <V>(maxSize: number): HashTrie<V> => ({
  current: undefined,
  previous: undefined,
  currentSize: 0,
  maxSize: Math.max(2, maxSize)
})

/** Look a key up. */
export const getTrie = <V>(t: HashTrie<V>, key: string): V | undefined => {
  const h = fnv1a(key)
  const v = find(t.current, key, h)
  if (v !== MISSING) return v
  const p = find(t.previous, key, h)
  return p === MISSING ? undefined : p
}

/** Set (or, with `undefined`, delete) a key. */
export const setTrie = <V>(t: HashTrie<V>, key: string, value: V | undefined): HashTrie<V> => {
  added = false
  const current = insert(t.current, key, fnv1a(key), value, 0)
  const currentSize = t.currentSize + (added ? 1 : 0)
  if (currentSize >= t.maxSize / 2)
    return { current: undefined, previous: current, currentSize: 0, maxSize: t.maxSize }
  return { current, previous: t.previous, currentSize, maxSize: t.maxSize }
}

const mapSlot = <V>(s: Slot<V>, f: (v: V) => V): Slot<V> => {
  if (s === undefined) return undefined
  if (s.children !== undefined)
    return branch(
      s.bitmap,
      s.children.map((c) => mapSlot(c, f)!)
    )
  return leaf(s.hash, s.key, s.value === undefined ? undefined : f(s.value), mapSlot(s.more, f))
}

/** A copy with every stored value `v` replaced by `f(v)` (deletions stay deletions. */
export const mapTrieValues = <V>(t: HashTrie<V>, f: (v: V) => V): HashTrie<V> => ({
  current: mapSlot(t.current, f),
  previous: mapSlot(t.previous, f),
  currentSize: t.currentSize,
  maxSize: t.maxSize
})
