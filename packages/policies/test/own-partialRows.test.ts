// vLLM's DP coordinator publishes per engine `[waiting, running, KV usage]`: no tokens, no time.
// The own ledger took such a partial row as undated, so step-time-aware's prefill pending since the
// last snapshot never left and grew with every route (scores of ~25 s after fifty short finished
// requests), and with no tokens reported it saw no queue anywhere. A partial row that counts
// requests is now dated (the ledger's `rowTimestamp`), and its waiting requests are a queue.
import { describe, expect, it } from "vitest"
import { makeStepTimeAware, type RankLoad } from "../src/index.js"

/** What a vLLM front end receives from the coordinator: counts and KV usage, nothing else. */
const vllmRow = (dpRank: number, waiting: number, running: number): RankLoad => ({
  dpRank,
  numWaitingReqs: waiting,
  numRunningReqs: running,
  kvCacheUsage: 0.1
})

describe("own policies on vLLM's coordinator rows (counts, no tokens, no time)", () => {
  it("step-time-aware: what was pending leaves at the next publish; waiting requests count as a queue", () => {
    const p = makeStepTimeAware({ clientCount: 4, clientIndex: 0 })
    let s = p.observe(p.init(2), [vllmRow(0, 0, 0), vllmRow(1, 0, 0)], 0)
    let now = 0
    for (let i = 0; i < 50; i++) {
      now += 0.15
      const r = p.route(s, { requestId: `q${i}`, inputLength: 2000 }, now)
      if (r._tag !== "Routed") throw new Error(r.message)
      s = p.finish(r.state, [`q${i}`], now + 0.05)
      s = p.observe(s, [vllmRow(0, 0, 0), vllmRow(1, 0, 0)], now + 0.1)
    }
    const idle = p.route(s, { requestId: "x", inputLength: 2000 }, now + 5)
    if (idle._tag !== "Routed") throw new Error(idle.message)
    // two idle engines: the score is this prompt's own prefill (about 0.1 s), not fifty prompts'
    for (const score of idle.explanation.scores!) expect(score).toBeLessThan(0.2)
    // engine 0 reports 40 waiting requests: about 40 x 2,000 tokens of prefill queued there
    const busy = p.observe(s, [vllmRow(0, 40, 8), vllmRow(1, 0, 8)], now + 5)
    const r = p.route(busy, { requestId: "y", inputLength: 2000 }, now + 5.01)
    expect(r._tag === "Routed" && r.rank).toBe(1)
    const scores = r._tag === "Routed" ? r.explanation.scores! : []
    expect(scores[0]! - scores[1]!).toBeGreaterThan(1)
  })
})
