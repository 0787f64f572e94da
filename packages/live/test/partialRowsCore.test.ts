/**
 * Partial rows through the pure core on the vendored vLLM #48808 payload: a page cut at every line
 * keeps each engine's reports as they came (nothing invented, nothing dropped), and for every policy
 * in the registry the router's decision on the cut-off block is the policy's own decision on the
 * decoded rows: the router adds no rule of its own for partial rows.
 */
import { readFileSync } from "node:fs"
import { policyEntries, type RouteRequest, vllmKvPressure } from "@loadledger/policies"
import { decodeLedger, type RankLoad } from "@loadledger/schema"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import {
  applyPoll,
  makeRouter,
  route,
  type SourceSpec,
  sourcePublishedFields,
  statuses
} from "../src/index.js"

const dp4 = readFileSync(
  new URL(
    "../../../fixtures/payloads/vllm_metrics_dp4_engine_imbalance__vllm_issue48808.prom",
    import.meta.url
  ),
  "utf8"
)
// the paste holds two time points, each under a `# <timestamp>` line: 8/8/8/8 complete, then the cut-off one
const secondAt = dp4.indexOf("# 2026-05-28 13:00:26")
const firstBlock = dp4.slice(0, secondAt)
const secondBlock = dp4.slice(secondAt)

const decoded = (text: string): ReadonlyArray<RankLoad> => {
  const r = decodeLedger(text, "vllm-metrics")
  // a page cut before its first # HELP / # TYPE line exposes nothing: no page (none sent)
  if (Result.isFailure(r) && r.failure.message.startsWith("no sample and no # HELP / # TYPE line")) return []
  if (Result.isFailure(r)) throw new Error(`${r.failure._tag}: ${r.failure.message}`)
  return r.success
}
const src = (url: string, dpSize: number): SourceSpec => ({
  url,
  dpSize,
  kind: "vllm-metrics",
  intervalMs: 10_000,
  timeoutMs: 500
})

describe("a vLLM page cut at every line of either block (pure core, real payload)", () => {
  const cuts = (block: string) => {
    const lines = block.split("\n")
    return Array.from({ length: lines.length }, (_, k) => `${lines.slice(0, k + 1).join("\n")}\n`)
  }

  it("every engine that sent a sample is known with exactly what it sent; the first pick is a least-running known engine; none sent: the fallback", () => {
    const published = sourcePublishedFields("vllm-metrics")
    let checked = 0
    let fallbacks = 0
    for (const page of [...cuts(firstBlock), ...cuts(secondBlock)]) {
      const rows = decoded(page)
      const sent = new Map(rows.map((row) => [row.dpRank, row]))
      let r = makeRouter(vllmKvPressure, [src("b", 4)], { staleAfterSeconds: 5 })
      r = applyPoll(r, "b", Result.succeed(rows), 0)
      const s = statuses(r, 0)
      for (let e = 0; e < 4; e++) {
        const row = sent.get(e)
        if (row === undefined) {
          expect([page, e, s[e]?.condition, s[e]?.reason]).toEqual([page, e, "unknown", "not-in-payload"])
          continue
        }
        const lacking = published.filter((f) => row[f] === undefined)
        expect([page, e, s[e]?.condition, s[e]?.missing]).toEqual([
          page,
          e,
          "known",
          lacking.length > 0 ? lacking : undefined
        ])
        // nothing invented: the router's row is the decoded one, re-indexed
        expect(s[e]?.row).toEqual({ ...row, dpRank: e, worker: "b", workerDpRank: e })
      }
      const d = route(r, { requestId: "q", inputLength: 512 }, 0.1)
      if (d._tag !== "Routed") throw new Error(d.message)
      if (sent.size === 0) {
        expect([page, d.decision.mode, d.decision.fallbackReason]).toEqual([
          page,
          "fallback",
          "no-known-rank"
        ])
        fallbacks++
        continue
      }
      // every waiting count reported in these blocks is 0: the least loaded is the least running
      const least = Math.min(
        ...[...sent.values()].map((row) => row.numRunningReqs ?? Number.POSITIVE_INFINITY)
      )
      expect([page, d.decision.mode, sent.get(d.decision.dpRank)?.numRunningReqs ?? least]).toEqual([
        page,
        "policy",
        least
      ])
      checked++
    }
    // 8 + 1 cuts of the first block, 5 + 1 of the second, each timestamp line alone
    expect([checked, fallbacks]).toEqual([15, 2])
  })
})

describe("the router adds no rule of its own for partial rows", () => {
  // every registered policy, on the cut-off block: the live decision is the policy's own decision on the
  // decoded rows (SGLang's total-requests keeps its own rule and passes over partial ranks)
  const requests: ReadonlyArray<RouteRequest> = Array.from({ length: 4 }, (_, i) => ({
    requestId: `q${i}`,
    inputLength: 512 + i,
    prefixHashes: ["a", `b${i % 2}`],
    sessionId: `s${i % 3}`,
    bootstrapRoom: `${i}`
  }))

  it("for every policy in the registry, routing through the router equals routing the policy on the decoded rows", () => {
    const rows: ReadonlyArray<RankLoad> = decoded(secondBlock)
    let compared = 0
    for (const entry of policyEntries()) {
      const policy = entry.make({ seed: 7 })
      let direct = policy.observe(policy.init(4), rows, 0)
      let r = applyPoll(
        makeRouter(policy, [src("b", 4)], { staleAfterSeconds: 5 }),
        "b",
        Result.succeed(rows),
        0
      )
      expect([entry.name, r.view.members]).toEqual([entry.name, [0, 1, 2, 3]])
      for (const [i, q] of requests.entries()) {
        const now = 0.1 + i / 100
        const own = policy.route(direct, q, now)
        const through = route(r, q, now)
        if (own._tag === "Routed") {
          if (through._tag !== "Routed") throw new Error(`${entry.name}: ${through.message}`)
          expect([entry.name, i, through.decision.mode, through.decision.rank]).toEqual([
            entry.name,
            i,
            "policy",
            own.rank
          ])
          direct = own.state
          r = through.state
          compared++
        } else {
          expect([
            entry.name,
            i,
            through._tag === "RouterError" ? through.reason : through.decision.mode
          ]).toEqual([
            entry.name,
            i,
            own.reason === "AllRanksUnavailable" || own.reason === "NoRanks" ? "fallback" : "PolicyError"
          ])
          break
        }
      }
    }
    expect(compared).toBeGreaterThan(4 * 40)
  })
})

describe("a vLLM page cut mid-line, at every character of the cut-off block (pure core, real payload)", () => {
  it("no engine is ever known with a count the whole block does not hold: a cut line is left out, never read short", () => {
    const whole = new Map(decoded(secondBlock).map((row) => [row.dpRank, row]))
    let checked = 0
    for (let p = 1; p < secondBlock.length; p++) {
      const r = decodeLedger(secondBlock.slice(0, p), "vllm-metrics")
      if (Result.isFailure(r)) continue
      let router = makeRouter(vllmKvPressure, [src("b", 4)], { staleAfterSeconds: 5 })
      router = applyPoll(router, "b", Result.succeed(r.success), 0)
      for (const st of statuses(router, 0)) {
        if (st.condition !== "known") continue
        const full = whole.get(st.dpRank)
        for (const f of ["numRunningReqs", "numWaitingReqs", "kvCacheUsage"] as const)
          if (st.row?.[f] !== undefined)
            expect([p, st.dpRank, f, st.row[f]]).toEqual([p, st.dpRank, f, full?.[f]])
        checked++
      }
    }
    // the cut of `27.0` to `2` (or `27` with no newline) used to make engine 0 known with 2 running
    expect(checked).toBeGreaterThan(500)
  })
})
