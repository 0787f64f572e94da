// vLLM's DP coordinator publishes per engine `[waiting, running, KV usage]`: no tokens, no time.
// The own ledger took such a partial row as undated, so step-time-aware's prefill pending since the
// last snapshot never left and grew with every route (scores of ~25 s after fifty short finished
// requests), and with no tokens reported it saw no queue anywhere. A partial row that counts
// requests is now dated (the ledger's `rowTimestamp`), and its waiting requests are a queue.
import { readFileSync } from "node:fs"
import {
  findPolicy,
  makeStepTimeAware,
  policyEntries,
  type RankLoad,
  type RankView
} from "@loadledger/policies"
import { decodeLedger } from "@loadledger/schema"
import { Result } from "effect"
import { describe, expect, it } from "vitest"

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

// A fresh user (2026-12-02): on rows without `numTotalTokens` (every vLLM payload) the own policies
// took a rank that never published as idle and a stale row as fresh, because the busiest known and
// fresh loads were taken from complete rows only. The class: wherever a partial row reports a
// count, that count bounds what an unknown or stale rank is taken to hold; its age is its row's.
// (the `vllm-kv-pressure` wrappers keep vLLM's balancer's view of the rows: upstream, an engine
// that never published counts 0)
const own = policyEntries().filter((e) => !e.reference && !e.name.startsWith("vllm-kv-pressure"))
const routed = (r: ReturnType<ReturnType<NonNullable<ReturnType<typeof findPolicy>>["make"]>["route"]>) => {
  if (r._tag !== "Routed") throw new Error(`${r._tag}: ${r.message}`)
  return r
}

describe("own policies: partial rows bound unknown and stale ranks (the ledger contract)", () => {
  // vLLM #36748's logger lines: engines 0 and 1 with 51 / 31 running and 117 / 108 waiting, no tokens
  const text = readFileSync(
    new URL("../../../fixtures/payloads/vllm_logger_dp8_waiting_stack__vllm_issue36748.log", import.meta.url),
    "utf8"
  )
  const decoded = decodeLedger(text)
  if (Result.isFailure(decoded)) throw new Error(decoded.failure.message)
  const rows = decoded.success.filter((r) => r.dpRank < 2).map((r) => ({ ...r, timestamp: 100 }))

  it("the real rows decode as the test assumes: two engines, counts, no tokens", () => {
    expect(rows.map((r) => [r.dpRank, r.numRunningReqs, r.numWaitingReqs, r.numTotalTokens])).toEqual([
      [0, 51, 117, undefined],
      [1, 31, 108, undefined]
    ])
  })

  it("a rank that never published is never chosen over a published one (was: every own policy sent to it)", () => {
    for (const e of own) {
      const p = e.make({})
      const s = p.observe(p.init(3), rows, 100)
      const r = routed(p.route(s, { requestId: "a", inputLength: 100 }, 100.1))
      expect([e.name, r.rank === 2]).toEqual([e.name, false])
    }
  })

  it("a stale count-only row is never taken below a fresh one: listed stale, and loses the tie", () => {
    const old = { dpRank: 0, timestamp: 100 - 3600, numRunningReqs: 0, numWaitingReqs: 0 }
    const fresh = { dpRank: 1, timestamp: 100, numRunningReqs: 2, numWaitingReqs: 0 }
    for (const e of own) {
      const p = e.make({})
      const s = p.observe(p.init(2), [old, fresh], 100)
      const r = routed(p.route(s, { requestId: "a", inputLength: 100 }, 100.1))
      expect([e.name, r.rank]).toEqual([e.name, 1])
      if (r.explanation.stale !== undefined) expect([e.name, r.explanation.stale]).toEqual([e.name, [0]])
    }
    // the view says so too: stale, with its age (was: not stale, no age)
    const p = makeStepTimeAware()
    const view: ReadonlyArray<RankView> = p.view(p.observe(p.init(2), [old, fresh], 100), 100.1)
    expect(
      view.map((v) => [v.stale, v.unknown, v.ageSeconds === undefined ? undefined : Math.round(v.ageSeconds)])
    ).toEqual([
      [true, true, 3600],
      [false, true, 0]
    ])
  })

  it("over many routes too: a stale or never-published rank is never below the busiest fresh one, charges included", () => {
    // second fresh-user trial: the bound held for the first route only (the fresh ranks' charges
    // since their rows were not in it), so never-published ranks were chosen from the third route
    const T = 100
    const cases: ReadonlyArray<readonly [string, number, ReadonlyArray<RankLoad>]> = [
      ["vLLM #36748 rows at DP 8", 8, rows],
      [
        "an hour-old row beside partial fresh ones",
        3,
        [
          { dpRank: 0, timestamp: T - 3600, numRunningReqs: 0, numWaitingReqs: 0 },
          { dpRank: 1, timestamp: T, numRunningReqs: 3 },
          { dpRank: 2, timestamp: T, numWaitingReqs: 4 }
        ]
      ],
      [
        "an hour-old row beside complete fresh ones",
        4,
        [
          { dpRank: 0, timestamp: T - 3600, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0 },
          ...[1, 2, 3].map((dpRank) => ({
            dpRank,
            timestamp: T,
            numRunningReqs: 2,
            numWaitingReqs: 0,
            numTotalTokens: 1000
          }))
        ]
      ]
    ]
    for (const [label, dp, given] of cases) {
      const fresh = new Set(given.filter((r) => r.timestamp === T).map((r) => r.dpRank))
      for (const e of own)
        for (const options of [{}, { clientCount: 2, clientIndex: 1 }]) {
          const p = e.make(options)
          let s = p.observe(p.init(dp), given, T)
          const sent: Array<number> = []
          for (let i = 0; i < 20; i++) {
            const r = routed(p.route(s, { requestId: `r${i}`, inputLength: 512 }, T + 0.01 * i))
            sent.push(r.rank)
            s = r.state
          }
          expect([label, e.name, options, sent.filter((r) => !fresh.has(r))]).toEqual([
            label,
            e.name,
            options,
            []
          ])
        }
    }
  })

  it("nor by a prefix or a session it holds, nor by a term it scores lower on (third trial)", () => {
    const T = 100
    const freshRow = { dpRank: 1, timestamp: T, numRunningReqs: 30, numWaitingReqs: 9, numTotalTokens: 50000 }
    const staleRow = {
      dpRank: 0,
      timestamp: T - 3600,
      numRunningReqs: 0,
      numWaitingReqs: 0,
      numTotalTokens: 10
    }
    const hashes = ["a", "b", "c", "d"]
    for (const e of own)
      for (const given of [[staleRow, freshRow], [freshRow]])
        for (const options of [{}, { clientCount: 2, clientIndex: 1 }]) {
          const p = e.make(options)
          let s = p.observe(p.init(2), given, T)
          // rank 0 is sent the prefix (and the session) by pins, then free requests follow
          for (let i = 0; i < 3; i++) {
            const r = p.route(
              s,
              {
                requestId: `p${i}`,
                inputLength: 2000,
                prefixHashes: hashes,
                sessionId: "s",
                routedDpRank: 0
              },
              T + 0.001 * i
            )
            if (r._tag === "Routed") s = r.state
          }
          const sent: Array<number> = []
          for (let i = 0; i < 5; i++) {
            const r = routed(
              p.route(
                s,
                { requestId: `q${i}`, inputLength: 2000, prefixHashes: hashes, sessionId: "s" },
                T + 0.01 + 0.001 * i
              )
            )
            sent.push(r.rank)
            s = r.state
          }
          expect([e.name, given.length, options, sent]).toEqual([
            e.name,
            given.length,
            options,
            [1, 1, 1, 1, 1]
          ])
        }
    // step-time-aware: the stale rank's smaller context once scored below the fresh one (1, 0, 2)
    const p = findPolicy("step-time-aware")!.make({})
    let s = p.observe(
      p.init(3),
      [staleRow, { dpRank: 1, timestamp: T, numRunningReqs: 30, numWaitingReqs: 5 }],
      T
    )
    const sent: Array<number> = []
    for (let i = 1; i <= 3; i++) {
      const r = routed(p.route(s, { requestId: `a${i}`, inputLength: 2000 }, T + 0.001 * i))
      sent.push(r.rank)
      s = r.state
    }
    expect(sent).toEqual([1, 1, 1])
  })

  it("a pin to an unhealthy rank, or a pin that is not a number, is refused naming routedDpRank", () => {
    for (const e of own) {
      const p = e.make({})
      const s = p.setStatus(p.observe(p.init(3), rows, 100), [true, false, true])
      const sick = p.route(s, { requestId: "a", inputLength: 100, routedDpRank: 1 }, 100.1)
      expect([
        e.name,
        sick._tag === "Routed" ? "Routed" : sick.reason,
        sick._tag === "Routed" ? undefined : sick.field
      ]).toEqual([e.name, "InvalidRoutedRank", "routedDpRank"])
      const text = p.route(
        s,
        { requestId: "b", inputLength: 100, routedDpRank: "2" as unknown as number },
        100.1
      )
      expect(text._tag === "Routed" ? "" : text.message).toContain("routedDpRank must be absent or a number")
      // a bigint threw a TypeError from JSON.stringify (second trial)
      for (const odd of [1n, null, [1], { r: 1 }, Symbol("r")]) {
        const r = p.route(
          s,
          { requestId: "b", inputLength: 100, routedDpRank: odd as unknown as number },
          100.1
        )
        expect([e.name, r._tag === "Routed" ? "Routed" : r.reason]).toEqual([e.name, "InvalidRoutedRank"])
      }
      expect(routed(p.route(s, { requestId: "c", inputLength: 100, routedDpRank: 2 }, 100.1)).rank).toBe(2)
    }
  })
})

describe("step-time-aware: waiting requests without tokens, before this front end routed anything", () => {
  it("a rank with eleven waiting requests is not idle on the first routes (miles PR #2012's snapshot, S16)", () => {
    // rank summary lines: r0/r1/r3 running 0, queue 0; r2 running 1, queue 11; no tokens, no time
    const text = readFileSync(
      new URL(
        "../../../fixtures/payloads/sglang_dp4_rank_snapshot__radixark_miles_pr2012.txt",
        import.meta.url
      ),
      "utf8"
    )
    const decoded = decodeLedger(text)
    if (Result.isFailure(decoded)) throw new Error(decoded.failure.message)
    const p = findPolicy("step-time-aware")!.make({})
    let s = p.observe(p.init(4), decoded.success, 0)
    const ranks: Array<number> = []
    for (let i = 0; i < 6; i++) {
      const r = routed(p.route(s, { requestId: `r${i}`, inputLength: 2000 }, 0.01 * i))
      ranks.push(r.rank)
      s = r.state
    }
    // was 0, 1, 2, 3, ...: priced at a mean prompt of 0 (nothing routed yet), rank 2's queue was empty
    expect(ranks).toEqual([0, 1, 3, 0, 1, 3])
  })
})
