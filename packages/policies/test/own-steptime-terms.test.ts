// step-time-aware's per-term explanation: `details.terms` holds, per rank, the score's terms
// [wait, own, decode, slot, home] in seconds, and they sum (in the order the score is summed:
// wait + own + home + decode + slot) to `scores[r]` exactly, on every route: one front end or
// several, home credit, slot cap, stale, unknown and unhealthy ranks.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  glm53H200StepCost,
  makeStepTimeAware,
  prefillSeconds,
  type RankLoad,
  type RouteResult,
  type StepTimeAwareOptions,
  type StepTimeAwareState
} from "../src/index.js"
import { cappedRows, idleAt as idle } from "./support/stepTimeRows.js"

const names = ["wait", "own", "decode", "slot", "home"]
const fnv = (x: string, n: number) => {
  let h = 0x811c9dc5
  for (let i = 0; i < x.length; i++) h = Math.imul(h ^ x.charCodeAt(i), 0x01000193)
  return (h >>> 0) % n
}

/** Rank `r`'s terms, by name. */
const termsOf = (r: RouteResult<StepTimeAwareState>) => {
  if (r._tag !== "Routed") throw new Error(r.message)
  const t = r.explanation.details?.["terms"] as ReadonlyArray<number>
  const n = r.explanation.scores!.length
  return Array.from({ length: n }, (_, rank) => ({
    wait: t[5 * rank]!,
    own: t[5 * rank + 1]!,
    decode: t[5 * rank + 2]!,
    slot: t[5 * rank + 3]!,
    home: t[5 * rank + 4]!
  }))
}

/** The terms' shape and signs, and their sum (in the score's order) is each rank's score, exactly. */
const expectTermsSum = (r: RouteResult<StepTimeAwareState>, label = "") => {
  if (r._tag !== "Routed") throw new Error(r.message)
  const scores = r.explanation.scores!
  expect(r.explanation.details?.["termNames"], label).toEqual(names)
  expect((r.explanation.details?.["terms"] as ReadonlyArray<number> | undefined)?.length, label).toBe(
    5 * scores.length
  )
  termsOf(r).forEach(({ wait, own, decode, slot, home }, rank) => {
    expect(wait + own + home + decode + slot, `${label} rank ${rank}`).toBe(scores[rank])
    for (const x of [wait, own, decode, slot]) expect(x, `${label} rank ${rank}`).toBeGreaterThanOrEqual(0)
    expect(home, `${label} rank ${rank}`).toBeLessThanOrEqual(0)
  })
  return termsOf(r)
}

describe("step-time-aware: per-term explanation", () => {
  it("one front end with a cap: the wait, own prefill, decode and slot terms of each rank", () => {
    // rank 0 at its cap (64 running, 3 waiting) with little queued; rank 1 below it with more
    const rows = cappedRows
    const p = makeStepTimeAware({ maxRunningRequests: 64 })
    const r = p.route(p.observe(p.init(2), rows, 0), { requestId: "a", inputLength: 500 }, 0)
    const [t0, t1] = expectTermsSum(r)
    const c = glm53H200StepCost
    expect(t0!.wait).toBe(prefillSeconds(c, 300, 0))
    expect(t1!.wait).toBe(prefillSeconds(c, 4000, 0))
    expect(t0!.own).toBe(prefillSeconds(c, 500, 0))
    expect(t1!.own).toBe(t0!.own)
    // 67 requests + this one against a cap of 64: 4 beyond it, 0.3 s each
    expect(t0!.slot).toBeCloseTo(1.2, 12)
    expect(t1!.slot).toBe(0)
    // w = 8 x ((requests + 1) x per request + (context + prompt) x per context token)
    expect(t0!.decode).toBeCloseTo(
      8 * (68 * c.decodeSecondsPerRequest + 64_500 * c.decodeSecondsPerContextToken),
      12
    )
    expect(t1!.decode).toBeCloseTo(
      8 * (12 * c.decodeSecondsPerRequest + 10_500 * c.decodeSecondsPerContextToken),
      12
    )
    expect(t0!.home + t1!.home).toBe(0)
  })

  it("four front ends: the home credit is minus 0.3 x own prefill on the home rank only", () => {
    const p = makeStepTimeAware({ clientCount: 4, clientIndex: 1, maxRunningRequests: 64 })
    const s0 = p.observe(
      p.init(4),
      [0, 1, 2, 3].map((r) => idle(r)),
      0
    )
    const r = p.route(s0, { requestId: "a", inputLength: 1000, prefixHashes: ["conv-7", "turn-1"] }, 0)
    const terms = expectTermsSum(r)
    const home = fnv("conv-7", 4)
    const own = prefillSeconds(glm53H200StepCost, 1000, 0)
    expect(terms.map((t) => t.home)).toEqual([0, 1, 2, 3].map((i) => (i === home ? -0.3 * own : 0)))
    // several front ends: no decode term by default, nothing waits
    expect(terms.map((t) => [t.wait, t.own, t.decode, t.slot])).toEqual(
      [0, 1, 2, 3].map(() => [0, own, 0, 0])
    )
  })

  it("a pinned request is not scored: no terms", () => {
    const p = makeStepTimeAware()
    const r = p.route(
      p.observe(p.init(2), [idle(0), idle(1)], 0),
      { requestId: "a", inputLength: 10, routedDpRank: 1 },
      0
    )
    if (r._tag !== "Routed") throw new Error(r.message)
    expect(r.explanation.details).toEqual({ matchedBlocks: [0, 0] })
  })

  it("over random histories (front ends, home credit, caps, stale, unknown and unhealthy ranks) the terms sum to every score", () => {
    const n = 4
    const row = (dpRank: number) =>
      fc.oneof(
        {
          weight: 6,
          arbitrary: fc.record({
            dpRank: fc.constant(dpRank),
            timestamp: fc.integer({ min: 0, max: 3000 }).map((ms) => ms / 1000),
            numRunningReqs: fc.nat({ max: 80 }),
            numWaitingReqs: fc.nat({ max: 20 }),
            numTotalTokens: fc.nat({ max: 300_000 }),
            numWaitingUncachedTokens: fc.option(fc.nat({ max: 60_000 }), { nil: undefined }),
            kvAvailableTokens: fc.option(fc.nat({ max: 400_000 }), { nil: undefined }),
            maxRunningRequests: fc.option(fc.integer({ min: 1, max: 64 }), { nil: undefined })
          })
        },
        {
          weight: 1,
          arbitrary: fc.constant<RankLoad>({
            dpRank,
            unknown: { reason: "unreachable", message: "timeout" }
          })
        }
      )
    const op = fc.oneof(
      {
        weight: 6,
        arbitrary: fc.record({
          kind: fc.constant("route" as const),
          inputLength: fc.integer({ min: 1, max: 20_000 }),
          blocks: fc.array(fc.constantFrom("sys", "a", "b", "c", "d", "e"), { maxLength: 4 }),
          // one route in eight pinned
          pin: fc.oneof(
            { weight: 7, arbitrary: fc.constant(undefined) },
            { weight: 1, arbitrary: fc.nat({ max: n - 1 }) }
          )
        })
      },
      {
        weight: 2,
        arbitrary: fc.record({
          kind: fc.constant("observe" as const),
          rows: fc.tuple(row(0), row(1), row(2), row(3))
        })
      },
      {
        weight: 1,
        arbitrary: fc.record({
          kind: fc.constant("status" as const),
          status: fc.array(fc.boolean(), { minLength: n, maxLength: n })
        })
      },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant("finish" as const), back: fc.nat({ max: 5 }) }) }
    )
    const options = fc.record({
      clientCount: fc.integer({ min: 1, max: 4 }),
      maxRunningRequests: fc.option(fc.integer({ min: 1, max: 16 }), { nil: undefined }),
      decodeWeight: fc.option(fc.constantFrom(0, 0.5, 8), { nil: undefined }),
      homeWeight: fc.option(fc.constantFrom(0, 0.3, 1), { nil: undefined })
    })
    let scored = 0
    let homes = 0
    let slots = 0
    fc.assert(
      fc.property(options, fc.array(op, { minLength: 10, maxLength: 40, size: "max" }), (o, ops) => {
        const p = makeStepTimeAware({ ...o, clientIndex: o.clientCount - 1 } satisfies StepTimeAwareOptions)
        let s = p.observe(
          p.init(n),
          [0, 1, 2, 3].map((r) => idle(r)),
          0
        )
        let now = 0
        const ids: Array<string> = []
        for (const x of ops) {
          now += 0.05
          if (x.kind === "observe") s = p.observe(s, x.rows, now)
          else if (x.kind === "status") s = p.setStatus(s, x.status)
          else if (x.kind === "finish") s = p.finish(s, ids.slice(-1 - x.back), now)
          else {
            const id = `r${ids.length}`
            ids.push(id)
            const r = p.route(
              s,
              { requestId: id, inputLength: x.inputLength, prefixHashes: x.blocks, routedDpRank: x.pin },
              now
            )
            if (r._tag !== "Routed") continue
            s = r.state
            if (x.pin !== undefined) continue
            const terms = expectTermsSum(r)
            scored++
            if (terms.some((t) => t.home < 0)) homes++
            if (terms.some((t) => t.slot > 0)) slots++
          }
        }
      }),
      { numRuns: 100, seed: 20_261_203 }
    )
    // the histories reached every term
    expect(scored).toBeGreaterThan(800)
    expect(homes).toBeGreaterThan(200)
    expect(slots).toBeGreaterThan(200)
  })
})
