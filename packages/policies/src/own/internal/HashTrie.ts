/**
 * A small persistent (immutable, path-copying) hash trie keyed by strings, with a two-generation
 * bound: writes go to `current`; when it holds `maxSize / 2` keys it becomes `previous` and a new
 * `current` starts, so the map keeps at least the `maxSize / 2` most recently written keys and at
 * most `maxSize`. A write copies at most 7 nodes of 32 slots, whatever the size.
 *
 * @internal
 */

interface Leaf<V> {
  readonly hash: number
  readonly entries: ReadonlyArray<readonly [string, V | undefined]>
}
type Slot<V> = Branch<V> | Leaf<V> | undefined
interface Branch<V> {
  readonly children: ReadonlyArray<Slot<V>>
}

/** @internal */
export interface HashTrie<V> {
  readonly current: Slot<V>
  readonly previous: Slot<V>
  readonly currentSize: number
  readonly maxSize: number
}

const fnv1a = (s: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

const isLeaf = <V>(s: Branch<V> | Leaf<V>): s is Leaf<V> => "entries" in s

/** Marks "no entry for the key in this generation" (a stored `undefined` is a deletion). */
const MISSING: unique symbol = Symbol("missing")

const find = <V>(slot: Slot<V>, key: string, hash: number): V | undefined | typeof MISSING => {
  let shift = 0
  let s = slot
  while (s !== undefined) {
    if (isLeaf(s)) {
      if (s.hash !== hash) return MISSING
      const es = s.entries
      for (let i = 0; i < es.length; i++) if (es[i]![0] === key) return es[i]![1]
      return MISSING
    }
    s = s.children[(hash >>> shift) & 31]
    shift += 5
  }
  return MISSING
}

const emptyChildren = <V>(): Array<Slot<V>> => new Array<Slot<V>>(32).fill(undefined)

/** Returns the new slot and whether a key was added. */
const insert = <V>(
  slot: Slot<V>,
  key: string,
  hash: number,
  value: V | undefined,
  shift: number
): readonly [Slot<V>, boolean] => {
  if (slot === undefined) return [{ hash, entries: [[key, value]] }, true]
  if (isLeaf(slot)) {
    if (slot.hash === hash) {
      const i = slot.entries.findIndex(([k]) => k === key)
      if (i < 0) return [{ hash, entries: [...slot.entries, [key, value]] }, true]
      const entries = [...slot.entries]
      entries[i] = [key, value]
      return [{ hash, entries }, false]
    }
    const children = emptyChildren<V>()
    children[(slot.hash >>> shift) & 31] = slot
    return insert({ children }, key, hash, value, shift)
  }
  const idx = (hash >>> shift) & 31
  const [child, added] = insert(slot.children[idx], key, hash, value, shift + 5)
  const children = [...slot.children]
  children[idx] = child
  return [{ children }, added]
}

/** An empty trie keeping at most `maxSize` keys. @internal */
export const emptyTrie = <V>(maxSize: number): HashTrie<V> => ({
  current: undefined,
  previous: undefined,
  currentSize: 0,
  maxSize: Math.max(2, maxSize)
})

/** Look a key up; `undefined` when absent or deleted. @internal */
export const getTrie = <V>(t: HashTrie<V>, key: string): V | undefined => {
  const h = fnv1a(key)
  const v = find(t.current, key, h)
  if (v !== MISSING) return v
  const p = find(t.previous, key, h)
  return p === MISSING ? undefined : p
}

/** Set (or, with `undefined`, delete) a key. @internal */
export const setTrie = <V>(t: HashTrie<V>, key: string, value: V | undefined): HashTrie<V> => {
  const [current, added] = insert(t.current, key, fnv1a(key), value, 0)
  const currentSize = t.currentSize + (added ? 1 : 0)
  if (currentSize >= t.maxSize / 2)
    return { current: undefined, previous: current, currentSize: 0, maxSize: t.maxSize }
  return { current, previous: t.previous, currentSize, maxSize: t.maxSize }
}
