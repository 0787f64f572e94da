/**
 * Issue 30 item 4 (c): `vllm-kv-pressure-kv-guard` never picks a rank whose free KV cannot hold the
 * prompt while another healthy rank's can (a size check beside the usage threshold), when the rows
 * carry the KV capacity; without a capacity it routes as before.
 */
import { fc, test } from "@fast-check/vitest"
import { describe, expect, it } from "vitest"
import { findPolicy, type Policy, type RankLoad } from "../src/index.js"

const guard = findPolicy("vllm-kv-pressure-kv-guard")!.make({}) as Policy<unknown>
const plain = findPolicy("vllm-kv-pressure")!.make({}) as Policy<unknown>

describe("the KV guard's size check (issue 30 4c)", () => {
  test.prop([
    fc.array(fc.record({ free: fc.nat(80_000), waiting: fc.nat(4), running: fc.nat(4) }), {
      minLength: 2,
      maxLength: 8
    }),
    fc.integer({ min: 1, max: 60_000 })
  ])("the chosen rank's free KV holds the prompt whenever some rank's does", (ranks, inputLength) => {
    const rows: Array<RankLoad> = ranks.map((r, dpRank) => ({
      dpRank,
      timestamp: 1,
      numWaitingReqs: r.waiting,
      numRunningReqs: r.running,
      kvCacheUsage: 0.5,
      kvAvailableTokens: r.free
    }))
    const out = guard.route(
      guard.observe(guard.init(ranks.length), rows, 1),
      { requestId: "a", inputLength },
      1
    )
    if (out._tag !== "Routed") throw new Error(out.message)
    if (ranks.some((r) => r.free >= inputLength))
      expect(ranks[out.rank]!.free).toBeGreaterThanOrEqual(inputLength)
  })

  it("a 55,000-token prompt skips the idle rank that cannot hold it; without capacity, as before", () => {
    const rows = (cap: boolean): Array<RankLoad> =>
      [
        { free: 10_000, waiting: 0, running: 0 },
        { free: 200_000, waiting: 0, running: 3 }
      ].map((r, dpRank) => ({
        dpRank,
        timestamp: 1,
        numWaitingReqs: r.waiting,
        numRunningReqs: r.running,
        kvCacheUsage: 0.5,
        ...(cap ? { kvAvailableTokens: r.free } : {})
      }))
    const req = { requestId: "a", inputLength: 55_000 }
    const a = guard.route(guard.observe(guard.init(2), rows(true), 1), req, 1)
    expect(a._tag === "Routed" && [a.rank, a.explanation.details?.["kvGuarded"]]).toEqual([1, [0]])
    const b = guard.route(guard.observe(guard.init(2), rows(false), 1), req, 1)
    const c = plain.route(plain.observe(plain.init(2), rows(false), 1), req, 1)
    expect(b._tag === "Routed" && c._tag === "Routed" && [b.rank, c.rank]).toEqual([0, 0])
  })
})
