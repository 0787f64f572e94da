// The router state laws on toy routers: each one fails, with fast-check's shrunk counterexample,
// on a toy broken in the way the cited field reports describe, and holds on the repaired toy.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type MarkHarness, markClearedLaw, overloadBoundLaw, type RouterHarness } from "../src/index.js"

/** Least in-flight over 2 ranks; `bound` refuses when both are at it. */
const toyRouter = (bound?: number) => (): RouterHarness => {
  const at = new Map<string, number>()
  const counts = [0, 0]
  return {
    route: (id) => {
      const rank = counts[0]! <= counts[1]! ? 0 : 1
      if (bound !== undefined && counts[rank]! >= bound) return { _tag: "Rejected", reason: "Overloaded" }
      at.set(id, rank)
      counts[rank]!++
      return { _tag: "Placed", rank }
    },
    release: (id) => {
      const rank = at.get(id)
      if (rank !== undefined) counts[rank]!--
      at.delete(id)
    },
    inflight: () => counts
  }
}

/** A breaker: marked by failures; `countsClientErrors` marks on a 4xx too (sgl-project/sglang #25811). */
const toyBreaker = (countsClientErrors: boolean) => (): MarkHarness => {
  let marked = false
  let ok = false
  return {
    mark: () => {
      marked = true
    },
    report: (healthy) => {
      ok = healthy
      if (healthy) marked = false
    },
    clientError: () => {
      if (countsClientErrors) marked = true
    },
    usable: () => ok && !marked
  }
}

describe("router state laws on toy routers", () => {
  it("overloadBoundLaw holds with the bound and fails without it at the fifth request", () => {
    expect(fc.check(overloadBoundLaw({ make: toyRouter(2), dpSize: 2, bound: 2 }), { seed: 5 }).failed).toBe(
      false
    )
    const out = fc.check(overloadBoundLaw({ make: toyRouter(), dpSize: 2, bound: 2 }), { seed: 5 })
    expect(out.counterexample).toEqual([Array.from({ length: 5 }, () => ({ op: "route" }))])
  })

  it("overloadBoundLaw fails on a router that rejects while a rank is under the bound", () => {
    const out = fc.check(overloadBoundLaw({ make: toyRouter(1), dpSize: 2, bound: 2 }), { seed: 5 })
    expect(out.counterexample).toEqual([[{ op: "route" }, { op: "route" }, { op: "route" }]])
  })

  it("markClearedLaw fails on a breaker a client error opens", () => {
    expect(fc.check(markClearedLaw({ make: toyBreaker(false) }), { seed: 2 }).failed).toBe(false)
    const out = fc.check(markClearedLaw({ make: toyBreaker(true) }), { seed: 2 })
    expect(out.counterexample).toEqual([["healthy", "client-error"]])
  })
})
