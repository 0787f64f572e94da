import { isDeepStrictEqual } from "node:util"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  emptyStampLists,
  lookupStampList,
  StampLists,
  touchStampList
} from "../src/own/internal/StampLists.js"

/** The specification: an immutable copy per version, two generations as `HashTrie`. */
interface Model {
  readonly current: ReadonlyMap<string, ReadonlyArray<number>>
  readonly previous: ReadonlyMap<string, ReadonlyArray<number>>
  readonly currentSize: number
}

const modelLookup = (m: Model, key: string) => m.current.get(key) ?? m.previous.get(key)

const modelTouch = (m: Model, maxSize: number, key: string, rank: number, stamp: number): Model => {
  const old = modelLookup(m, key) ?? []
  const list = [rank, stamp]
  for (let i = 0; i < old.length; i += 2) if (old[i] !== rank) list.push(old[i]!, old[i + 1]!)
  const current = new Map(m.current).set(key, list)
  const currentSize = m.currentSize + (m.current.has(key) ? 0 : 1)
  return currentSize >= Math.max(2, maxSize) / 2
    ? { current: new Map(), previous: current, currentSize: 0 }
    : { current, previous: m.previous, currentSize }
}

const keys = ["a", "b", "c", "d", "e", "f"]

/** An operation: touch or look up the version at `from` (an index into the versions so far). */
const op = fc.record({
  touch: fc.boolean(),
  from: fc.nat(),
  key: fc.constantFrom(...keys),
  rank: fc.nat({ max: 4 }),
  stamp: fc.nat({ max: 3 })
})

describe("StampLists (the rerooted prefix index store)", () => {
  it("every version reads as its own immutable copy, whichever versions were used since", () => {
    fc.assert(
      fc.property(fc.constantFrom(2, 3, 4, 8, 64), fc.array(op, { maxLength: 120 }), (maxSize, ops) => {
        const versions: Array<StampLists> = [emptyStampLists(maxSize)]
        const models: Array<Model> = [{ current: new Map(), previous: new Map(), currentSize: 0 }]
        for (const o of ops) {
          const i = o.from % versions.length
          if (o.touch) {
            versions.push(touchStampList(versions[i]!, o.key, o.rank, o.stamp))
            models.push(modelTouch(models[i]!, maxSize, o.key, o.rank, o.stamp))
          }
          // read a version (after a touch, often an older one, which reroots the store to it)
          const j = (o.from * 7 + o.stamp) % versions.length
          for (const k of keys) expect(lookupStampList(versions[j]!, k)).toEqual(modelLookup(models[j]!, k))
        }
        for (let j = versions.length - 1; j >= 0; j--)
          for (const k of keys) expect(lookupStampList(versions[j]!, k)).toEqual(modelLookup(models[j]!, k))
      }),
      { numRuns: 300 }
    )
  })

  it("repeating a version's last touch returns the version it made; another touch makes a new one", () => {
    const v0 = emptyStampLists(64)
    const v1 = touchStampList(v0, "a", 1, 10)
    const v2 = touchStampList(v1, "a", 2, 20)
    expect(touchStampList(v0, "a", 1, 10)).toBe(v1)
    expect(touchStampList(v1, "a", 2, 20)).toBe(v2)
    const w = touchStampList(v1, "a", 2, 21)
    expect(w).not.toBe(v2)
    expect(lookupStampList(v2, "a")).toEqual([2, 20, 1, 10])
    expect(lookupStampList(w, "a")).toEqual([2, 21, 1, 10])
    expect(lookupStampList(v0, "a")).toBeUndefined()
  })

  it("a full current generation becomes the previous one; a touch of its key copies the list", () => {
    // maxSize 4: the second new key fills the current generation (2 keys)
    const v1 = touchStampList(emptyStampLists(4), "a", 0, 1)
    const v2 = touchStampList(v1, "b", 1, 2)
    expect(lookupStampList(v2, "a")).toEqual([0, 1])
    const v3 = touchStampList(v2, "a", 2, 3)
    expect(lookupStampList(v3, "a")).toEqual([2, 3, 0, 1])
    const v4 = touchStampList(v3, "c", 0, 4)
    // "a" and "c" filled the next generation: "b" (two generations back) is gone
    expect(lookupStampList(v4, "b")).toBeUndefined()
    expect(lookupStampList(v2, "a")).toEqual([0, 1])
    expect(lookupStampList(v4, "a")).toEqual([2, 3, 0, 1])
  })

  it("a version links at most one other version, so deep comparisons of states stay linear", () => {
    // a version that also linked its successor as the memo of its last touch made a deep
    // comparison of two states double per touch (the registry's determinism law never finished)
    const history = () => {
      let v = emptyStampLists(1 << 10)
      const versions: Array<StampLists> = [v]
      for (let i = 0; i < 40; i++) {
        v = touchStampList(v, `k${i % 7}`, i % 5, i)
        versions.push(v)
      }
      return versions
    }
    const a = history()
    for (const v of a)
      expect(Object.values(v).filter((x) => x instanceof StampLists).length).toBeLessThanOrEqual(1)
    expect(isDeepStrictEqual(a, history())).toBe(true)
    // a history whose last touch differs does not compare equal
    const c = history()
    expect(isDeepStrictEqual(a[40], touchStampList(c[39]!, "k0", 9, 9))).toBe(false)
  })
})
