/**
 * A persistent map from a key to a list of `(rank, stamp)` pairs, most recently touched first,
 * bounded by two generations as `HashTrie` (writes go to the current generation; when it holds
 * `maxSize / 2` keys it becomes the previous one and the previous one is dropped): the store of
 * `RankPrefixes`.
 *
 * One mutable `Map` per generation, whose lists are edited in place, is shared by every version:
 * the version the store holds (the head) reads and writes it directly; any other version is
 * reached by "rerooting" (H. Baker, "Shallow binding makes functional arrays fast", 1991;
 * S. Conchon and J.-C. Filliâtre, "A persistent union-find data structure", 2007): between two
 * neighbouring versions lies one {@link Touch}, and reading a version applies the touches between
 * it and the head, each in the direction that leads to it, and flips the links. Every version
 * stays readable and writable: the structure is as persistent as a trie, only the cost moves:
 * O(1) per lookup and O(list) per touch of the newest version (a router threading its state uses
 * only that one), O(touches between) for an older version the first time it is used again (the
 * laws' "route twice from one state" pays one route's touches).
 *
 * Why (`step-time-aware`, built, route + finish at 8 ranks as `pnpm bench` drives it, one shared
 * and one own block per prompt, on the shared 2-core machine at load 6-7): as a `HashTrie` of
 * copied lists the prefix index took three quarters of a route (a trie write path-copies three
 * levels of 32-slot nodes: 230-400 ns; route 2.0-2.4 us); over rerooted Maps of copied lists the
 * route took 775-815 ns, with the lists edited in place 674-722 ns (interleaved in one process).
 *
 * A touch that repeats a version's last touch (same key, rank and stamp) returns the version that
 * touch made, so routing twice from one state returns the same state object.
 *
 * @internal
 */

/** The generations, as the head version sees them. */
interface Store {
  current: Map<string, Array<number>>
  previous: Map<string, Array<number>>
  currentSize: number
  readonly maxSize: number
  head: StampLists
}

/** The generation fields around a touch that started a new generation. */
interface Turnover {
  readonly current: Map<string, Array<number>>
  readonly previous: Map<string, Array<number>>
  readonly currentSize: number
  readonly newCurrent: Map<string, Array<number>>
}

/**
 * One touch, as applied to the version before it: `rank` moved to the front of `key`'s list with
 * `stamp`. Either the current generation held the key (`list` is its list, edited in place; `at`
 * the index of the rank's pair before, -1 when absent, and `oldStamp` its stamp) or it did not
 * (`list` is the new list, a copy of the previous generation's with the pair in front, added to
 * the current generation: `added`). `turnover`: the touch filled the current generation.
 */
interface Touch {
  readonly key: string
  readonly rank: number
  readonly stamp: number
  readonly list: Array<number>
  readonly at: number
  readonly oldStamp: number
  readonly added: boolean
  readonly turnover: Turnover | undefined
}

/**
 * A version. Opaque: `next` leads toward the head (undefined at the head) across `touch`, applied
 * forward (`next` = this version touched) or backward (`next` = this version untouched); `child`
 * is the version this version's last touch made (`childKey`, `childRank`, `childStamp`).
 *
 * @internal
 */
export interface StampLists {
  readonly store: Store
  next: StampLists | undefined
  touch: Touch | undefined
  forward: boolean
  child: StampLists | undefined
  childKey: string
  childRank: number
  childStamp: number
}

const version = (store: Store): StampLists => ({
  store,
  next: undefined,
  touch: undefined,
  forward: true,
  child: undefined,
  childKey: "",
  childRank: -1,
  childStamp: 0
})

/** An empty map keeping at most `maxSize` keys (at least the `maxSize / 2` most recently touched). @internal */
export const emptyStampLists = (maxSize: number): StampLists => {
  const store: Store = {
    current: new Map(),
    previous: new Map(),
    currentSize: 0,
    maxSize: Math.max(2, maxSize),
    head: undefined as unknown as StampLists
  }
  store.head = version(store)
  return store.head
}

/** `list` with the pair at `at` (or a new one, `at` -1) moved to the front, holding `rank, stamp`. */
const moveToFront = (list: Array<number>, at: number, rank: number, stamp: number): void => {
  let i = at
  if (i < 0) {
    i = list.length
    list.push(0, 0)
  }
  for (; i > 0; i -= 2) {
    list[i] = list[i - 2]!
    list[i + 1] = list[i - 1]!
  }
  list[0] = rank
  list[1] = stamp
}

/** The inverse of {@link moveToFront}: the front pair back to `at` with `stamp` (dropped, `at` -1). */
const moveBack = (list: Array<number>, at: number, stamp: number): void => {
  const rank = list[0]!
  const end = at < 0 ? list.length - 2 : at
  for (let i = 0; i < end; i += 2) {
    list[i] = list[i + 2]!
    list[i + 1] = list[i + 3]!
  }
  if (at < 0) {
    list.pop()
    list.pop()
  } else {
    list[at] = rank
    list[at + 1] = stamp
  }
}

/** Apply `t` to the store, forward (the version before it is the head) or backward. */
const apply = (s: Store, t: Touch, forward: boolean): void => {
  if (forward) {
    const current = s.current
    if (t.added) {
      current.set(t.key, t.list)
      s.currentSize++
    } else moveToFront(t.list, t.at, t.rank, t.stamp)
    if (t.turnover !== undefined) {
      s.previous = current
      s.current = t.turnover.newCurrent
      s.currentSize = 0
    }
  } else {
    if (t.turnover !== undefined) {
      s.current = t.turnover.current
      s.previous = t.turnover.previous
      s.currentSize = t.turnover.currentSize
    }
    if (t.added) {
      s.current.delete(t.key)
      if (t.turnover === undefined) s.currentSize--
    } else moveBack(t.list, t.at, t.oldStamp)
  }
}

/** Make `v` the head: walk to the head, then apply the touches back to `v`, flipping each link. */
const reroot = (v: StampLists): void => {
  const s = v.store
  if (s.head === v) return
  const path: Array<StampLists> = []
  for (let x: StampLists = v; x !== s.head; x = x.next!) path.push(x)
  for (let i = path.length - 1; i >= 0; i--) {
    const x = path[i]!
    const head = x.next!
    apply(s, x.touch!, !x.forward)
    head.next = x
    head.touch = x.touch
    head.forward = !x.forward
    x.next = undefined
    x.touch = undefined
    s.head = x
  }
}

/**
 * The list of `key` in version `m` (`undefined` when absent): read it before the next call of
 * this module on any version of the same map, which may edit it in place. @internal
 */
export const lookupStampList = (m: StampLists, key: string): ReadonlyArray<number> | undefined => {
  reroot(m)
  return m.store.current.get(key) ?? m.store.previous.get(key)
}

/** The index of `rank`'s pair in `list`, -1 when absent. */
const pairOf = (list: ReadonlyArray<number>, rank: number): number => {
  for (let i = 0; i < list.length; i += 2) if (list[i] === rank) return i
  return -1
}

/** The version of `m` with `rank` first in `key`'s list, with `stamp` (its older pair dropped). @internal */
export const touchStampList = (m: StampLists, key: string, rank: number, stamp: number): StampLists => {
  if (m.child !== undefined && m.childKey === key && m.childRank === rank && m.childStamp === stamp)
    return m.child
  reroot(m)
  const s = m.store
  const inCurrent = s.current.get(key)
  const added = inCurrent === undefined
  // a key the current generation does not hold gets a list of its own there: a copy of the
  // previous generation's, already touched (the previous generation's lists are never edited)
  const list = inCurrent ?? s.previous.get(key)?.slice() ?? []
  const at = pairOf(list, rank)
  const oldStamp = at < 0 ? 0 : list[at + 1]!
  if (added) moveToFront(list, at, rank, stamp)
  const turnover =
    s.currentSize + (added ? 1 : 0) >= s.maxSize / 2
      ? { current: s.current, previous: s.previous, currentSize: s.currentSize, newCurrent: new Map() }
      : undefined
  const touch: Touch = { key, rank, stamp, list, at, oldStamp, added, turnover }
  apply(s, touch, true)
  const w = version(s)
  m.next = w
  m.touch = touch
  m.forward = true
  m.child = w
  m.childKey = key
  m.childRank = rank
  m.childStamp = stamp
  s.head = w
  return w
}
