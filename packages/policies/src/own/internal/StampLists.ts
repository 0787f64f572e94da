/**
 * A persistent map from a key to a list of `(rank, stamp)` pairs, most recently touched first,
 * bounded by two generations as `HashTrie`: the store of `RankPrefixes`. One mutable `Map` per
 * generation is shared by every version; a version other than the head is reached by rerooting
 * (H. Baker, "Shallow binding makes functional arrays fast", 1991). O(1) per lookup of the head;
 * why and the measured gain: `docs/own-policies.md` ("Data structures").
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
 * A version, and the touch that made it from its parent: `rank` moved to the front of `key`'s
 * list with `stamp`. Either the current generation held the key (`list` is its list, edited in
 * place; `at` the index of the rank's pair before, -1 when absent, and `oldStamp` its stamp) or it
 * did not (`list` is the new list, a copy of the previous generation's with the pair in front,
 * added to the current generation: `added`); `turnover`: the touch filled the current generation.
 * The empty version was made by no touch (`list` undefined).
 *
 * Opaque. `next` leads toward the head (undefined at the head): `next` is this version touched
 * (`nextIsTouched`: the touch is held by `next`) or this version was made by touching `next`.
 * `#child`, the version this version's last touch made, is a memo, not part of the version's
 * value: a private field, so that a deep comparison of two states follows each version's one link
 * (`next`) instead of two links to the same version per touch (exponential in the touches).
 *
 * @internal
 */
export class StampLists {
  next: StampLists | undefined = undefined
  nextIsTouched = false
  #child: StampLists | undefined = undefined

  constructor(
    readonly store: Store,
    readonly key: string,
    readonly rank: number,
    readonly stamp: number,
    readonly list: Array<number> | undefined,
    readonly at: number,
    readonly oldStamp: number,
    readonly added: boolean,
    readonly turnover: Turnover | undefined
  ) {}

  /** The version of `m` with `rank` first in `key`'s list, with `stamp` (see {@link touchStampList}). */
  static touch(m: StampLists, key: string, rank: number, stamp: number): StampLists {
    const last = m.#child
    if (last !== undefined && last.key === key && last.rank === rank && last.stamp === stamp) return last
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
    const w = new StampLists(s, key, rank, stamp, list, at, oldStamp, added, turnover)
    apply(s, w, true)
    m.next = w
    m.nextIsTouched = true
    m.#child = w
    s.head = w
    return w
  }
}

/**
 * An empty map keeping at most `maxSize` keys (at least the `maxSize / 2` most recently touched).
 *
 * @internal
 */
export const emptyStampLists = (maxSize: number): StampLists => {
  const store: Store = {
    current: new Map(),
    previous: new Map(),
    currentSize: 0,
    maxSize: Math.max(2, maxSize),
    head: undefined as unknown as StampLists
  }
  store.head = new StampLists(store, "", -1, 0, undefined, -1, 0, false, undefined)
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

/** Apply the touch that made `t` to the store, forward (`t`'s parent is the head) or backward. */
const apply = (s: Store, t: StampLists, forward: boolean): void => {
  if (forward) {
    const current = s.current
    if (t.added) {
      current.set(t.key, t.list!)
      s.currentSize++
    } else moveToFront(t.list!, t.at, t.rank, t.stamp)
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
    } else moveBack(t.list!, t.at, t.oldStamp)
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
    // the head is `x` touched: undo that touch; else `x` is the head touched: redo it
    if (x.nextIsTouched) apply(s, head, false)
    else apply(s, x, true)
    head.next = x
    head.nextIsTouched = !x.nextIsTouched
    x.next = undefined
    x.nextIsTouched = false
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
export const touchStampList = (m: StampLists, key: string, rank: number, stamp: number): StampLists =>
  StampLists.touch(m, key, rank, stamp)
