import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { emptyTrie, getTrie, type HashTrie, mapTrieValues, setTrie } from "../src/own/internal/HashTrie.js"

/** The specification: an immutable copy per version, two generations (a stored `undefined` is a deletion). */
interface Model {
  readonly current: ReadonlyMap<string, number | undefined>
  readonly previous: ReadonlyMap<string, number | undefined>
  readonly currentSize: number
}

const modelGet = (m: Model, key: string) => (m.current.has(key) ? m.current.get(key) : m.previous.get(key))

const modelSet = (m: Model, maxSize: number, key: string, value: number | undefined): Model => {
  const current = new Map(m.current).set(key, value)
  const currentSize = m.currentSize + (m.current.has(key) ? 0 : 1)
  return currentSize >= Math.max(2, maxSize) / 2
    ? { current: new Map(), previous: current, currentSize: 0 }
    : { current, previous: m.previous, currentSize }
}

const keys = ["a", "b", "c", "d", "e", "f"]

/** An operation: set (or delete) in, or read, the version at `from` (an index into the versions so far). */
const op = fc.record({
  set: fc.boolean(),
  from: fc.nat(),
  key: fc.constantFrom(...keys),
  value: fc.option(fc.nat({ max: 9 }), { nil: undefined })
})

describe("HashTrie (the rerooted persistent map)", () => {
  it("every version reads as its own immutable copy, whichever versions were used since", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(2, 3, 4, 8, 64, Infinity),
        fc.array(op, { maxLength: 120 }),
        (maxSize, ops) => {
          const versions: Array<HashTrie<number>> = [emptyTrie(maxSize)]
          const models: Array<Model> = [{ current: new Map(), previous: new Map(), currentSize: 0 }]
          for (const o of ops) {
            const i = o.from % versions.length
            if (o.set) {
              versions.push(setTrie(versions[i]!, o.key, o.value))
              models.push(modelSet(models[i]!, maxSize, o.key, o.value))
            }
            // read a version (after a set, often an older one, which reroots the store to it)
            const j = (o.from * 7 + (o.value ?? 3)) % versions.length
            for (const k of keys) expect(getTrie(versions[j]!, k)).toBe(modelGet(models[j]!, k))
          }
          for (let j = versions.length - 1; j >= 0; j--)
            for (const k of keys) expect(getTrie(versions[j]!, k)).toBe(modelGet(models[j]!, k))
        }
      ),
      { numRuns: 300 }
    )
  })

  it("a full current generation becomes the previous one; two generations back is gone", () => {
    // maxSize 4: the second new key fills the current generation (2 keys)
    const v2 = setTrie(setTrie(emptyTrie<number>(4), "a", 1), "b", 2)
    const v4 = setTrie(setTrie(v2, "a", 3), "c", 4)
    expect(getTrie(v4, "b")).toBeUndefined()
    expect(getTrie(v4, "a")).toBe(3)
    expect(getTrie(v2, "b")).toBe(2)
    expect(getTrie(v2, "a")).toBe(1)
  })

  it("mapTrieValues maps a version's values into a new map and leaves the version as it was", () => {
    const v = setTrie(setTrie(setTrie(emptyTrie<number>(64), "a", 1), "b", 2), "a", undefined)
    const m = mapTrieValues(v, (x) => x * 10)
    expect([getTrie(m, "a"), getTrie(m, "b")]).toEqual([undefined, 20])
    expect([getTrie(v, "a"), getTrie(v, "b")]).toEqual([undefined, 2])
    expect(getTrie(setTrie(m, "c", 5), "c")).toBe(5)
    expect(getTrie(v, "c")).toBeUndefined()
  })
})
