/**
 * A persistent string-keyed map with a mutable fast path: every version is immutable to its
 * readers, but the versions of one history share one `Map` that is kept at the newest version
 * asked for. Reading or writing the version the `Map` is at costs a `Map` operation; asking for
 * another version (an older state reused, a branch) rebuilds the `Map` from the nearest
 * checkpoint and the writes since, O(size + writes since).
 *
 * Bounded like the ranks' caches: past `maxSize` keys the least recently written key is dropped.
 * A checkpoint (a frozen copy of the `Map`) is taken once the writes since the last one reach four
 * times the map's size (at least 1,024), so rebuilds and the history a version keeps alive stay
 * O(size) and the copies cost O(1) amortized per write (a quarter of a key copy).
 *
 * Why not the persistent `HashTrie`: with the trie, a `step-time-aware` route spent half its time
 * in its prefix index (two trie writes and four lookups for a two-block prompt, each hashing its
 * key in JavaScript); on the built code this map made the route 2.6x faster at 8 ranks
 * (`pnpm bench --built own`, see the policy's docstring for the figures).
 *
 * @internal
 */

/** One write: `key` set to `value`, or deleted when `value` is `undefined`. @internal */
type Write<V> = readonly [key: string, value: V | undefined]

interface Store<V> {
  readonly map: Map<string, V>
  at: Version<V>
  readonly maxSize: number
}

/**
 * One version. `writes` are what it changed over `parent`; a checkpoint (`base` set) has no
 * parent and holds the whole map.
 *
 * @internal
 */
export interface Version<V> {
  readonly store: Store<V>
  readonly parent: Version<V> | undefined
  readonly writes: ReadonlyArray<Write<V>>
  readonly base: ReadonlyMap<string, V> | undefined
  readonly sinceBase: number
}

/** An empty map keeping at most `maxSize` keys. @internal */
export const emptyVersionedMap = <V>(maxSize: number): Version<V> => {
  const store: Store<V> = {
    map: new Map(),
    at: undefined as unknown as Version<V>,
    maxSize: Math.max(1, maxSize)
  }
  const v: Version<V> = { store, parent: undefined, writes: [], base: new Map(), sinceBase: 0 }
  store.at = v
  return v
}

const apply = <V>(map: Map<string, V>, w: Write<V>): void => {
  map.delete(w[0])
  if (w[1] !== undefined) map.set(w[0], w[1])
}

/** Bring the shared `Map` to version `v` (a no-op when it is there). */
const checkout = <V>(v: Version<V>): Map<string, V> => {
  const store = v.store
  if (store.at === v) return store.map
  const chain: Array<Version<V>> = []
  let c: Version<V> = v
  while (c.base === undefined) {
    chain.push(c)
    c = c.parent!
  }
  const map = store.map
  map.clear()
  for (const [k, x] of c.base) map.set(k, x)
  for (let i = chain.length - 1; i >= 0; i--) for (const w of chain[i]!.writes) apply(map, w)
  store.at = v
  return map
}

/** The value of `key` in version `v`. @internal */
export const getVersioned = <V>(v: Version<V>, key: string): V | undefined => checkout(v).get(key)

/**
 * A new version: `v` with each `[key, value]` of `sets` written in order (the key becomes the
 * most recently written), then the least recently written keys dropped past `maxSize`. @internal
 */
export const setVersioned = <V>(v: Version<V>, sets: ReadonlyArray<readonly [string, V]>): Version<V> => {
  if (sets.length === 0) return v
  const map = checkout(v)
  const store = v.store
  const writes: Array<Write<V>> = []
  for (const w of sets) {
    apply(map, w)
    writes.push(w)
  }
  while (map.size > store.maxSize) {
    const oldest = map.keys().next().value as string
    map.delete(oldest)
    writes.push([oldest, undefined])
  }
  const sinceBase = v.sinceBase + writes.length
  const next: Version<V> =
    sinceBase >= Math.max(1024, 4 * map.size)
      ? { store, parent: undefined, writes: [], base: new Map(map), sinceBase: 0 }
      : { store, parent: v, writes, base: undefined, sinceBase }
  store.at = next
  return next
}
