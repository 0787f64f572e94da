/**
 * llm-d's approximate prefix indexer: hash -> pods, and per pod a fixed-capacity LRU of hashes
 * (hashicorp golang-lru/v2 semantics), kept persistent with effect HashMaps (O(log n) per update).
 * Hash keys are strings (decimal XXH64, or a trace's own block ids).
 */
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"

interface PodLru {
  readonly capacity: number
  readonly size: number
  readonly next: number
  readonly oldest: number
  readonly seqOf: HashMap.HashMap<string, number>
  readonly bySeq: HashMap.HashMap<number, string>
}

export interface LruIndex {
  readonly hashToPods: HashMap.HashMap<string, ReadonlyArray<string>>
  readonly lrus: HashMap.HashMap<string, PodLru>
}

export const emptyLruIndex = (): LruIndex => ({ hashToPods: HashMap.empty(), lrus: HashMap.empty() })

export const podsHolding = (ix: LruIndex, h: string): ReadonlyArray<string> =>
  Option.getOrUndefined(HashMap.get(ix.hashToPods, h)) ?? []

/** `matchLongestPrefix`: per pod, the number of leading blocks credited (stops at an unknown block). */
export const matchLongest = (ix: LruIndex, hashes: ReadonlyArray<string>): Map<string, number> => {
  const m = new Map<string, number>()
  for (const h of hashes) {
    const ps = podsHolding(ix, h)
    if (ps.length === 0) break
    for (const p of ps) m.set(p, (m.get(p) ?? 0) + 1)
  }
  return m
}

/** `indexer.Add(hashes, pod)`: LRU adds (evicting the oldest beyond capacity), then hash -> pod for every hash. */
export const addToIndex = (
  ix: LruIndex,
  hashes: ReadonlyArray<string>,
  pod: string,
  capacityIfNew: number
): LruIndex => {
  let h2p = ix.hashToPods
  let lru: PodLru = Option.getOrUndefined(HashMap.get(ix.lrus, pod)) ?? {
    capacity: capacityIfNew,
    size: 0,
    next: 0,
    oldest: 0,
    seqOf: HashMap.empty(),
    bySeq: HashMap.empty()
  }
  let { size, next, oldest, seqOf, bySeq } = lru
  for (const h of hashes) {
    const old = Option.getOrUndefined(HashMap.get(seqOf, h))
    if (old !== undefined) bySeq = HashMap.remove(bySeq, old)
    else size++
    seqOf = HashMap.set(seqOf, h, next)
    bySeq = HashMap.set(bySeq, next, h)
    next++
    if (old === undefined && size > lru.capacity) {
      while (!HashMap.has(bySeq, oldest)) oldest++
      const victim = Option.getOrUndefined(HashMap.get(bySeq, oldest))!
      bySeq = HashMap.remove(bySeq, oldest)
      seqOf = HashMap.remove(seqOf, victim)
      size--
      const ps = (Option.getOrUndefined(HashMap.get(h2p, victim)) ?? []).filter((p) => p !== pod)
      h2p = ps.length === 0 ? HashMap.remove(h2p, victim) : HashMap.set(h2p, victim, ps)
    }
  }
  lru = { capacity: lru.capacity, size, next, oldest, seqOf, bySeq }
  for (const h of hashes) {
    const ps = Option.getOrUndefined(HashMap.get(h2p, h)) ?? []
    if (!ps.includes(pod)) h2p = HashMap.set(h2p, h, [...ps, pod])
  }
  return { hashToPods: h2p, lrus: HashMap.set(ix.lrus, pod, lru) }
}
