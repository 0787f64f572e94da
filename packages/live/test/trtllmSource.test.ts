/**
 * A TensorRT-LLM `trtllm-serve` worker as a source: its `GET /metrics` iteration-stats list is
 * decoded to the worker's one rank; a bad body names the field's path in the rank's status.
 */
import { readFileSync } from "node:fs"
import { totalRequests } from "@loadledger/policies"
import { afterEach, expect, it } from "vitest"
import { sourcePublishedFields, sourceUrl, startLiveRouter } from "../src/index.js"
import { startFakeEngine } from "../src/testing/index.js"

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

const fixture = readFileSync(
  new URL("../../schema/test/fixtures/trtllm/iteration_stats_pytorch_adp.json", import.meta.url),
  "utf8"
)

const page = readFileSync(
  new URL("../../schema/test/fixtures/trtllm/prometheus_metrics_page.prom", import.meta.url),
  "utf8"
)

const routerOn = async (
  body: string,
  kind: "trtllm-iteration-stats" | "trtllm-metrics" = "trtllm-iteration-stats"
) => {
  const e = await startFakeEngine({
    dpSize: 1,
    loadPaths: ["/metrics", "/prometheus/metrics"],
    loads: { _tag: "body", body, contentType: "application/json" }
  })
  cleanups.push(() => e.close())
  const r = startLiveRouter({
    sources: [{ url: e.url, dpSize: 1, kind, intervalMs: 1000, timeoutMs: 1000 }],
    policy: totalRequests,
    staleAfterSeconds: 5,
    decodeBudgetMs: 20_000
  })
  cleanups.push(() => r.close())
  await r.ready
  return r
}

it("polls /metrics and publishes running and waiting", () => {
  const s = {
    url: "http://h:8000/",
    dpSize: 1,
    kind: "trtllm-iteration-stats",
    intervalMs: 100,
    timeoutMs: 50
  } as const
  expect(sourceUrl(s)).toBe("http://h:8000/metrics")
  expect(sourcePublishedFields("trtllm-iteration-stats")).toEqual(["numRunningReqs", "numWaitingReqs"])
})

it("a trtllm-serve worker's latest iteration is its rank 0", async () => {
  const r = await routerOn(fixture)
  const s = r.ranks()[0]!
  expect(s.condition).toBe("known")
  expect(s.row).toMatchObject({
    dpRank: 0,
    numRunningReqs: 251,
    numWaitingReqs: 34,
    kvCacheUsage: 6360 / 9000
  })
})

it("a bad iteration-stats body is decode-failed with the field's path", async () => {
  const r = await routerOn('[{"iter":1,"numActiveRequests":"two"}]')
  const s = r.ranks()[0]!
  expect(s.reason).toBe("decode-failed")
  expect(s.row.unknown?.message).toMatch(
    /^decode-failed: InvalidField: \$\[0\]\.numActiveRequests: Expected number/
  )
})

it("a trtllm-serve worker's Prometheus page is its rank 0 too", async () => {
  const r = await routerOn(page, "trtllm-metrics")
  const s = r.ranks()[0]!
  expect(s.condition).toBe("known")
  expect(s.row).toMatchObject({
    dpRank: 0,
    numRunningReqs: 251,
    numWaitingReqs: 34,
    maxTotalNumTokens: 288_000
  })
  const u = {
    url: "http://h:8000",
    dpSize: 1,
    kind: "trtllm-metrics",
    intervalMs: 100,
    timeoutMs: 50
  } as const
  expect(sourceUrl(u)).toBe("http://h:8000/prometheus/metrics")
})
