/**
 * Issue 30 item 4 (a): a rank's waiting requests are never priced as no queue because its row
 * carries no token counts (vLLM's rows: requests and KV usage only). The waiting-token term falls
 * back to a count-based estimate (waiting requests x the prompt's tokens), 0 only when nothing waits.
 */
import { fc, test } from "@fast-check/vitest"
import { describe, expect } from "vitest"
import { makeScored, Scorers } from "../src/index.js"

const costsOf = (details: Readonly<Record<string, unknown>> | undefined): ReadonlyArray<number> | undefined =>
  (details?.["costs"] as Record<string, ReadonlyArray<number>> | undefined)?.["numWaitingUncachedTokens"]

const p = makeScored({ scorers: [{ scorer: Scorers.waitingUncachedTokens, weight: 1, normalise: "none" }] })

describe("a counted queue without token counts (issue 30 4a)", () => {
  test.prop([fc.array(fc.nat(20), { minLength: 2, maxLength: 8 }), fc.integer({ min: 1, max: 60_000 })])(
    "waitingUncachedTokens prices each rank's waiting requests x the prompt, never 0 for a queue",
    (waiting, inputLength) => {
      const rows = waiting.map((numWaitingReqs, dpRank) => ({
        dpRank,
        timestamp: 1,
        numRunningReqs: 1,
        numWaitingReqs,
        kvCacheUsage: 0.1
      }))
      const r = p.route(p.observe(p.init(waiting.length), rows, 1), { requestId: "a", inputLength }, 1)
      expect(r._tag).toBe("Routed")
      if (r._tag !== "Routed") return
      const costs = costsOf(r.explanation.details)
      expect(costs).toEqual(waiting.map((w) => w * inputLength))
      const least = Math.min(...waiting)
      expect(waiting[r.rank]).toBe(least)
    }
  )

  test.prop([fc.array(fc.nat(20), { minLength: 2, maxLength: 8 }), fc.nat(5000)])(
    "a reported token count wins over the estimate; a rank without one is at least the highest reported",
    (waiting, reported) => {
      const rows = waiting.map((numWaitingReqs, dpRank) =>
        dpRank === 0
          ? { dpRank, timestamp: 1, numRunningReqs: 0, numWaitingReqs, numWaitingUncachedTokens: reported }
          : { dpRank, timestamp: 1, numRunningReqs: 0, numWaitingReqs }
      )
      const r = p.route(p.observe(p.init(waiting.length), rows, 1), { requestId: "a", inputLength: 100 }, 1)
      if (r._tag !== "Routed") throw new Error(r.message)
      const costs = costsOf(r.explanation.details)!
      expect(costs[0]).toBe(reported)
      for (let i = 1; i < waiting.length; i++) expect(costs[i]).toBe(Math.max(reported, waiting[i]! * 100))
    }
  )
})
