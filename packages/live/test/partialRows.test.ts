/**
 * Partial rows end to end, through the public API on the vendored payloads: a row that reports some
 * load counts and lacks others stays known with what it reported (missing fields absent, never 0),
 * a row with no count at all is unknown and never attractive. The fault: on vLLM #48808's cut-off
 * second block (running 27/5/0/0, `waiting` for engine 0 only) the router marked engines 1-3
 * unknown and sent every request to engine 0, the busiest.
 */
import { readFileSync } from "node:fs"
import { findPolicy, vllmKvPressure } from "@loadledger/policies"
import { afterEach, describe, expect, it } from "vitest"
import {
  type LiveRouter,
  type LiveRouterConfig,
  type SourceKind,
  type SourceSpec,
  startLiveRouter
} from "../src/index.js"
import { startFakeEngine } from "../src/testing/index.js"

const fixture = (name: string) => new URL(`../../../fixtures/payloads/${name}`, import.meta.url).pathname
const dp4Path = fixture("vllm_metrics_dp4_engine_imbalance__vllm_issue48808.prom")
const dp4 = readFileSync(dp4Path, "utf8")
// the paste holds two time points, each under a `# <timestamp>` line: 8/8/8/8 complete, then the cut-off one
const secondAt = dp4.indexOf("# 2026-05-28 13:00:26")
const firstBlock = dp4.slice(0, secondAt)
const secondBlock = dp4.slice(secondAt)

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})
const serving = async (body: { path: string } | { body: string }) => {
  const w = await startFakeEngine({
    loads: "path" in body ? { _tag: "file", path: body.path } : { _tag: "body", body: body.body }
  })
  cleanups.push(() => w.close())
  return w
}
const live = <S>(c: LiveRouterConfig<S>): LiveRouter => {
  const r = startLiveRouter(c)
  cleanups.push(() => r.close())
  return r
}
const src = (url: string, dpSize: number, kind: SourceKind = "vllm-metrics"): SourceSpec => ({
  url,
  dpSize,
  kind,
  intervalMs: 10_000,
  timeoutMs: 500
})
const routeMany = (r: LiveRouter, n: number) =>
  Array.from({ length: n }, (_, i) => {
    const d = r.route({ requestId: `q${i}`, inputLength: 512 })
    if (d._tag !== "Decision") throw new Error(`${d.reason}: ${d.message}`)
    return [d.mode, d.dpRank] as const
  })

describe("vLLM #48808 served by a fake engine, polled by startLiveRouter", () => {
  it("the cut-off block as pasted: engines 1-3 partial, requests go to engines 2 and 3, not to the busiest", async () => {
    const w = await serving({ path: dp4Path })
    const r = live({ sources: [src(w.url, 4)], policy: vllmKvPressure, staleAfterSeconds: 5 })
    await r.ready
    expect(
      r.ranks().map((s) => [s.condition, s.missing, s.row.numRunningReqs, s.row.numWaitingReqs])
    ).toEqual([
      ["known", undefined, 27, 0],
      ["known", ["numWaitingReqs"], 5, undefined],
      ["known", ["numWaitingReqs"], 0, undefined],
      ["known", ["numWaitingReqs"], 0, undefined]
    ])
    expect(routeMany(r, 6)).toEqual([
      ["policy", 2],
      ["policy", 3],
      ["policy", 2],
      ["policy", 3],
      ["policy", 2],
      ["policy", 3]
    ])
    const text = await r.metrics()
    for (const [rank, known, partial] of [
      [0, 1, 0],
      [1, 1, 1],
      [3, 1, 1]
    ]) {
      expect(text).toContain(`loadledger_router_rank_known{rank="${w.url}@${rank}"} ${known}`)
      expect(text).toContain(`loadledger_router_rank_partial{rank="${w.url}@${rank}"} ${partial}`)
    }
  })

  it("the complete block: every engine known and complete, the policy decides", async () => {
    const w = await serving({ body: firstBlock })
    const r = live({ sources: [src(w.url, 4)], policy: vllmKvPressure, staleAfterSeconds: 5 })
    await r.ready
    expect(
      r.ranks().map((s) => [s.condition, s.missing, s.row.numRunningReqs, s.row.numWaitingReqs])
    ).toEqual([0, 1, 2, 3].map(() => ["known", undefined, 8, 0]))
    // vLLM's balancer charges each placement: four requests spread over the four even engines
    expect(new Set(routeMany(r, 4).map(([mode, rank]) => `${mode}@${rank}`))).toEqual(
      new Set(["policy@0", "policy@1", "policy@2", "policy@3"])
    )
    expect(await r.metrics()).toContain(`loadledger_router_rank_partial{rank="${w.url}@1"} 0`)
  })

  it("an engine with no count (only its KV gauge, at 0) stays unknown and is never chosen, however idle it looks", async () => {
    const kvOnly = 'vllm:kv_cache_usage_perc{engine="4",model_name="qwen3_4b_pcy"} 0.0\n'
    const w = await serving({ body: secondBlock + kvOnly })
    const r = live({ sources: [src(w.url, 5)], policy: vllmKvPressure, staleAfterSeconds: 5 })
    await r.ready
    const ranks = r.ranks()
    expect(ranks[4]).toMatchObject({
      condition: "unknown",
      reason: "missing-field",
      missing: ["numRunningReqs", "numWaitingReqs"]
    })
    expect(ranks[4]?.row.kvCacheUsage).toBeUndefined()
    const picks = routeMany(r, 12)
    expect(picks.every(([mode, rank]) => mode === "policy" && (rank === 2 || rank === 3))).toBe(true)
  })

  it("a partial SGLang /v1/loads (a rank without its waiting count or tokens) is known with what it sent", async () => {
    const body = JSON.stringify({
      loads: [
        { dp_rank: 0, num_running_reqs: 30, num_waiting_reqs: 4, num_total_tokens: 90000 },
        { dp_rank: 1, num_running_reqs: 2 },
        { dp_rank: 2, num_waiting_reqs: 0, num_total_tokens: 100 },
        { dp_rank: 3, token_usage: 0.0 }
      ]
    })
    const w = await serving({ body })
    const r = live({
      sources: [src(w.url, 4, "sglang-v1-loads")],
      policy: findPolicy("ledger-balanced")!.make({}),
      staleAfterSeconds: 5
    })
    await r.ready
    expect(r.ranks().map((s) => [s.condition, s.reason, s.missing])).toEqual([
      ["known", undefined, undefined],
      ["known", undefined, ["numWaitingReqs", "numTotalTokens"]],
      ["known", undefined, ["numRunningReqs"]],
      ["unknown", "missing-field", ["numRunningReqs", "numWaitingReqs", "numTotalTokens"]]
    ])
    const picks = routeMany(r, 4)
    expect(picks.every(([mode, rank]) => mode === "policy" && rank !== 3 && rank !== 0)).toBe(true)
  })

  it("SGLang /get_load with a key missing: that entry is a partial row (the rank known, the field absent), the other rank as reported", async () => {
    // before, the schema decoder refused the whole body and both ranks were unknown (decode-failed)
    const body = JSON.stringify([
      { dp_rank: 0, num_reqs: 9, num_waiting_reqs: 1, num_tokens: 4000 },
      { dp_rank: 1, num_reqs: 0, num_waiting_reqs: 0 }
    ])
    const w = await startFakeEngine({ loadPaths: ["/get_load"], loads: { _tag: "body", body } })
    cleanups.push(() => w.close())
    const r = live({
      sources: [src(w.url, 2, "sglang-get-load")],
      policy: vllmKvPressure,
      staleAfterSeconds: 5
    })
    await r.ready
    expect(
      r.ranks().map((s) => [s.condition, s.missing, s.row.numRunningReqs, s.row.numTotalTokens])
    ).toEqual([
      ["known", undefined, 8, 4000],
      ["known", ["numTotalTokens"], 0, undefined]
    ])
    const d = r.route({ requestId: "g", inputLength: 1 })
    expect(d._tag === "Decision" && [d.mode, d.rank]).toEqual(["policy", 1])
  })

  it("SGLang DP-8 /metrics (aibrix #1614): the two ranks reporting their queue are known; the six with no count are not", async () => {
    const w = await serving({ path: fixture("sglang_metrics_dp8_deepseek_r1__aibrix_issue1614_part1.prom") })
    const r = live({
      sources: [src(w.url, 8, "sglang-metrics")],
      policy: vllmKvPressure,
      staleAfterSeconds: 5
    })
    await r.ready
    const ranks = r.ranks()
    expect(ranks.map((s) => s.condition)).toEqual([
      "unknown",
      "known",
      "unknown",
      "known",
      "unknown",
      "unknown",
      "unknown",
      "unknown"
    ])
    expect(ranks.every((s) => s.row.numRunningReqs === undefined)).toBe(true)
    expect([ranks[1]?.row.numWaitingReqs, ranks[1]?.missing]).toEqual([0, ["numRunningReqs"]])
    expect(routeMany(r, 4).every(([mode, rank]) => mode === "policy" && (rank === 1 || rank === 3))).toBe(
      true
    )
  })
})
