/**
 * The loop's list helpers do what the array methods they replace do (internal/lists.ts).
 */
import { fc, test } from "@fast-check/vitest"
import { describe, expect } from "vitest"
import { emptyList, removeAt } from "../src/internal/lists.js"

describe("list helpers", () => {
  test.prop([fc.array(fc.integer()), fc.integer({ min: -12, max: 12 })])(
    "removeAt(a, i) leaves a as a.splice(i, 1) does, negative and out-of-range indices included",
    (xs, i) => {
      const a = xs.slice()
      const b = xs.slice()
      removeAt(a, i)
      b.splice(i, 1)
      expect(a).toEqual(b)
    }
  )

  test.prop([fc.array(fc.integer())])("emptyList empties", (xs) => {
    const a = xs.slice()
    emptyList(a)
    expect(a).toEqual([])
    a.push(1)
    expect(a).toEqual([1])
  })
})
