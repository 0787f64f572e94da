/**
 * A persistent (immutable) least-recently-used map from a prefix key to an engine index, for
 * vLLM's prefix-affinity tie-break (`PrefixAffinity.ts`): upstream keeps an `OrderedDict`,
 * `move_to_end` on every write and `popitem(last=False)` past its capacity. Here a `HashMap` holds
 * `key -> [engine, stamp]` and a functional queue (two lists) holds `[key, stamp]` in write order;
 * an entry of the queue whose stamp is no longer the key's is stale and skipped. The queue is
 * rebuilt from the map when stale entries outnumber live ones, so it stays O(capacity).
 */
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"

type Stamped = readonly [key: string, stamp: number]

/** A cons cell: the newest entry first, shared between states (no copy per write). */
interface Cons {
  readonly head: Stamped
  readonly tail: Cons | null
}

const reversed = (list: Cons | null): Array<Stamped> => {
  const out: Array<Stamped> = []
  for (let c = list; c !== null; c = c.tail) out.push(c.head)
  return out.reverse()
}

export interface AffinityLru {
  readonly capacity: number
  readonly map: HashMap.HashMap<string, readonly [engine: number, stamp: number]>
  /** Queue front (oldest first) and back (newest first), Okasaki style. */
  readonly front: ReadonlyArray<Stamped>
  readonly frontAt: number
  readonly back: Cons | null
  readonly backLength: number
  readonly stamp: number
}

export const emptyLru = (capacity: number): AffinityLru => ({
  capacity,
  map: HashMap.empty(),
  front: [],
  frontAt: 0,
  back: null,
  backLength: 0,
  stamp: 0
})

/** The engine remembered for `key`, or `undefined`. Reading does not refresh (upstream `.get`). */
export const lruGet = (lru: AffinityLru, key: string): number | undefined =>
  Option.getOrUndefined(HashMap.get(lru.map, key))?.[0]

export const lruSize = (lru: AffinityLru): number => HashMap.size(lru.map)

/** Set `key -> engine` as the most recent entry, then evict the oldest past `capacity`. */
export const lruSet = (lru: AffinityLru, key: string, engine: number): AffinityLru => {
  const stamp = lru.stamp + 1
  let map = HashMap.set(lru.map, key, [engine, stamp] as const)
  let front = lru.front
  let frontAt = lru.frontAt
  let back: Cons | null = { head: [key, stamp], tail: lru.back }
  let backLength = lru.backLength + 1
  while (HashMap.size(map) > lru.capacity) {
    if (frontAt >= front.length) {
      front = reversed(back)
      frontAt = 0
      back = null
      backLength = 0
    }
    const [k, s] = front[frontAt++]!
    if (Option.getOrUndefined(HashMap.get(map, k))?.[1] === s) map = HashMap.remove(map, k)
  }
  const queued = front.length - frontAt + backLength
  if (queued > 2 * HashMap.size(map) + 16) {
    // rebuild: live entries in stamp order
    const live = [...HashMap.toEntries(map)].sort((a, b) => a[1][1] - b[1][1])
    front = live.map(([k, v]): Stamped => [k, v[1]])
    frontAt = 0
    back = null
    backLength = 0
  }
  return { capacity: lru.capacity, map, front, frontAt, back, backLength, stamp }
}
