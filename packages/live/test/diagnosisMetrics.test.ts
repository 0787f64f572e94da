/**
 * The live router's diagnosis on its `/metrics` page: an SGLang /v1/loads fake engine whose rank 2
 * is busier (utilization 1.0) at the same load as the others (0.7), polled by `startLiveRouter`,
 * is exported as `loadledger_rank_diagnosis{kind="hardware"}` for rank 2 and `ok` for the rest.
 */
import { findPolicy } from "@loadledger/policies"
import { afterEach, describe, expect, it } from "vitest"
import { addDiagnosisReport, diagnoseWindow, makeRouterMetrics, startLiveRouter } from "../src/index.js"
import { startFakeEngine } from "../src/testing/index.js"

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

const body = (n: number, utilization: ReadonlyArray<number>) =>
  JSON.stringify({
    timestamp: "2026-12-07T10:30:00+00:00",
    dp_rank_count: utilization.length,
    loads: utilization.map((u, r) => ({
      dp_rank: r,
      num_running_reqs: n + [0, 1, 0, -1][r]!,
      num_waiting_reqs: 1,
      num_used_tokens: 1000 * (n + [0, 1, 0, -1][r]!),
      num_total_tokens: 200_000,
      token_usage: 0.08,
      gen_throughput: 900,
      utilization: u
    }))
  })

const kinds = (page: string, worker: string) =>
  page
    .split("\n")
    .filter((l) => l.startsWith("loadledger_rank_diagnosis{") && l.includes(`worker="${worker}"`))
    .map((l) => {
      const m = /dp_rank="(\d+)",kind="(\w+)"\} 1$/.exec(l)
      if (m === null) throw new Error(`unexpected line: ${l}`)
      return [Number(m[1]), m[2]] as const
    })
    .sort((a, b) => a[0] - b[0])

describe("the live router exports the diagnosis as metrics", () => {
  it("a rank busier at equal load is exported as hardware, the others ok, with its evidence", async () => {
    const w = await startFakeEngine({ loads: { _tag: "body", body: body(8, [0.7, 0.71, 1.0, 0.69]) } })
    cleanups.push(() => w.close())
    const r = startLiveRouter({
      sources: [{ url: w.url, dpSize: 4, kind: "sglang-v1-loads", intervalMs: 40, timeoutMs: 500 }],
      policy: findPolicy("total-requests")!.make({}),
      staleAfterSeconds: 5
    })
    cleanups.push(() => r.close())
    await r.ready
    // the load moves from poll to poll; rank 2 needs 1/0.7 of the others' forward time at the same load (the example of `diagnose`)
    for (const n of [8, 10, 12, 9, 14, 11]) {
      w.set({
        loads: { _tag: "body", body: body(n, [0.7, 0.72, 1.0, 0.68]) }
      })
      await new Promise((done) => setTimeout(done, 90))
    }
    const page = await r.metrics()
    expect(kinds(page, w.url)).toEqual([
      [0, "ok"],
      [1, "ok"],
      [2, "hardware"],
      [3, "ok"]
    ])
    const ratio = new RegExp(
      `loadledger_rank_diagnosis_utilization_ratio\\{worker="${w.url}",dp_rank="2"\\} ([0-9.]+)`
    )
    expect(Number(ratio.exec(page)?.[1])).toBeGreaterThan(1.2)
    expect(page).toMatch(
      new RegExp(`loadledger_group_diagnosis_reports\\{worker="${w.url}"\\} ([2-9]|\\d\\d)`)
    )
  })

  it("the window forgets old reports, and a rank without utilization (a vLLM page) adds nothing", async () => {
    const row = (dpRank: number, u: number) => ({
      dpRank,
      numRunningReqs: 8,
      numUsedTokens: 8000,
      utilization: u
    })
    let win = addDiagnosisReport(new Map(), "http://a", [row(0, 0.5), row(1, 0.95)], 0, 60)
    win = addDiagnosisReport(win, "http://a", [row(0, 0.5), row(1, 0.5)], 100, 60)
    win = addDiagnosisReport(win, "http://a", [row(0, 0.5), row(1, 0.51)], 101, 60)
    expect(diagnoseWindow(win)[0]!.diagnosis.ranks.map((x) => x.kind)).toEqual(["ok", "ok"])
    const noUtil = addDiagnosisReport(
      new Map(),
      "http://b",
      [
        { dpRank: 0, numRunningReqs: 3 },
        { dpRank: 1, numRunningReqs: 3 }
      ],
      1,
      60
    )
    expect(diagnoseWindow(noUtil)).toEqual([])
    const m = makeRouterMetrics(
      () => ({ ranks: [], inflightPerRank: [] }),
      false,
      () => diagnoseWindow(noUtil)
    )
    expect(await m.registry.metrics()).not.toMatch(/^loadledger_rank_diagnosis\{/m)
  })
})
