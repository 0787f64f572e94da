/**
 * A persistent map of strings bounded by two generations, as `HashTrie`, kept in one mutable
 * `Map` per generation shared by every version: the version in the store (the head) reads and
 * writes the Maps directly; any other version is reached by "rerooting" (H. Baker, "Shallow
 * binding makes functional arrays fast", 1991; S. Conchon and J.-C. Filliâtre, "A persistent
 * union-find data structure", 2007): each version off the head records the one write that turns
 * the head's side of it back into it, and reading it applies those writes back, flipping them.
 *
 * Why: `step-time-aware`'s prefix index took three quarters of a route as a `HashTrie` (a write
 * path-copies three levels of 32-slot nodes: 230-400 ns per write on the built code); a `Map`
 * write is 25 ns. Every version stays readable and writable, so the structure is as persistent as
 * the trie; only the cost moves: O(1) per read and write of the newest version, as a router
 * threading its state uses it, and O(writes between) for an older version the first time it is
 * used again (the laws' "route twice from one state" pays one route's writes).
 *
 * Writing to a version the same key and an equal value as its last write returns that write's
 * version (not a new one), so routing twice from one state returns the same state object.
 *
 * Values are never `undefined` (this map has no deletion).
 *
 * @internal
 */

/** The Maps and generation counter of every version of one map, as the head version sees them. */
interface Store<V> {
  current: Map<string, V>
  previous: Map<string, V>
  currentSize: number
  readonly maxSize: number
  readonly same: (a: V, b: V) => boolean
  head: VersionedMap<V>
}

/**
 * One write off a version: the store's fields (`current`, `previous`, `currentSize`) and `key`'s
 * entry in `map` (`has`, `value`) as they are in the version that holds this `Undo`.
 */
interface Undo<V> {
  readonly current: Map<string, V>
  readonly previous: Map<string, V>
  readonly currentSize: number
  readonly map: Map<string, V>
  readonly key: string
  readonly has: boolean
  readonly value: V | undefined
}

/**
 * A version of the map. Opaque: `next` / `undo` lead to the head (both undefined at the head);
 * `child` is the version the last write from this one made (`childKey` set to `childValue`).
 *
 * @internal
 */
export interface VersionedMap<V> {
  readonly store: Store<V>
  next: VersionedMap<V> | undefined
  undo: Undo<V> | undefined
  child: VersionedMap<V> | undefined
  childKey: string
  childValue: V | undefined
}

const version = <V>(store: Store<V>): VersionedMap<V> => ({
  store,
  next: undefined,
  undo: undefined,
  child: undefined,
  childKey: "",
  childValue: undefined
})

/**
 * An empty map keeping at most `maxSize` keys (at least the `maxSize / 2` most recently written);
 * `same(a, b)` says when two values are equal (a write of an equal value returns the version of
 * the previous identical write). @internal
 */
export const emptyVersionedMap = <V>(maxSize: number, same: (a: V, b: V) => boolean): VersionedMap<V> => {
  const store: Store<V> = {
    current: new Map(),
    previous: new Map(),
    currentSize: 0,
    maxSize: Math.max(2, maxSize),
    same,
    head: undefined as unknown as VersionedMap<V>
  }
  store.head = version(store)
  return store.head
}

/** The store's fields and `key`'s entry in `map` as they are now. */
const undoOf = <V>(s: Store<V>, map: Map<string, V>, key: string): Undo<V> => ({
  current: s.current,
  previous: s.previous,
  currentSize: s.currentSize,
  map,
  key,
  has: map.has(key),
  value: map.get(key)
})

/** Make `v` the head: walk to the head, then undo the writes back to `v`, each one flipped. */
const reroot = <V>(v: VersionedMap<V>): void => {
  const s = v.store
  if (s.head === v) return
  const path: Array<VersionedMap<V>> = []
  for (let x: VersionedMap<V> = v; x !== s.head; x = x.next!) path.push(x)
  for (let i = path.length - 1; i >= 0; i--) {
    const x = path[i]!
    const head = x.next!
    const u = x.undo!
    head.undo = undoOf(s, u.map, u.key)
    head.next = x
    s.current = u.current
    s.previous = u.previous
    s.currentSize = u.currentSize
    if (u.has) u.map.set(u.key, u.value!)
    else u.map.delete(u.key)
    x.next = undefined
    x.undo = undefined
    s.head = x
  }
}

/** The value of `key` in version `m`, `undefined` when absent. @internal */
export const getVersioned = <V>(m: VersionedMap<V>, key: string): V | undefined => {
  reroot(m)
  return m.store.current.get(key) ?? m.store.previous.get(key)
}

/**
 * The version of `m` with `key` set to `update(old)`, `old` its value in `m` (`undefined` when
 * absent). A key the current generation does not hold counts as new; when the current generation
 * reaches `maxSize / 2` keys it becomes the previous one, and the previous one is dropped. One
 * lookup and one write of the Maps (a lookup then a set would look the key up three times). @internal
 */
export const updateVersioned = <V>(
  m: VersionedMap<V>,
  key: string,
  update: (old: V | undefined) => V
): VersionedMap<V> => {
  reroot(m)
  const s = m.store
  const map = s.current
  const inCurrent = map.get(key)
  const value = update(inCurrent ?? s.previous.get(key))
  if (m.child !== undefined && m.childKey === key && s.same(m.childValue!, value)) return m.child
  const w = version(s)
  m.undo = {
    current: map,
    previous: s.previous,
    currentSize: s.currentSize,
    map,
    key,
    has: inCurrent !== undefined,
    value: inCurrent
  }
  m.next = w
  m.child = w
  m.childKey = key
  m.childValue = value
  if (inCurrent === undefined) s.currentSize++
  map.set(key, value)
  if (s.currentSize >= s.maxSize / 2) {
    s.previous = map
    s.current = new Map()
    s.currentSize = 0
  }
  s.head = w
  return w
}
