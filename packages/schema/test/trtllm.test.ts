import { readFileSync } from "node:fs"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { decodeLedger, decodeLedgerReport, type LedgerReport } from "../src/index.js"

const fixture = (name: string) => readFileSync(new URL(`./fixtures/trtllm/${name}`, import.meta.url), "utf8")

const report = (text: string, kind: "auto" | "trtllm-iteration-stats" = "auto"): LedgerReport => {
  const r = decodeLedgerReport(text, kind)
  if (r._tag === "Failure") throw new Error(JSON.stringify(r.failure))
  return r.success
}

describe("TensorRT-LLM iteration stats (trtllm-serve GET /metrics)", () => {
  it("decodes the docs' example output: one rank-0 row, KV blocks as tokens, absent stays absent", () => {
    const r = report(fixture("iteration_stats_docs_example.json"))
    expect(r.rows).toEqual([
      {
        dpRank: 0,
        numRunningReqs: 1,
        prefixCacheHitRate: 0.00128,
        numUsedTokens: 96,
        maxTotalNumTokens: 3_240_192,
        kvAvailableTokens: 3_240_096,
        kvCacheUsage: 3 / 101_256
      }
    ])
    expect(r.rows[0]).not.toHaveProperty("numWaitingReqs")
    expect(r.notices.map((n) => n._tag)).toEqual(["DefaultedIdentity"])
  })
  it("reads the latest iteration of a PyTorch-executor list and names the unknown key", () => {
    const r = report(fixture("iteration_stats_pytorch_adp.json"), "trtllm-iteration-stats")
    expect(r.rows).toEqual([
      {
        dpRank: 0,
        numRunningReqs: 251,
        numWaitingReqs: 34,
        maxRunningRequests: 512,
        numPausedReqs: 0,
        prefixCacheHitRate: 0.3066,
        numUsedTokens: 6360 * 32,
        maxTotalNumTokens: 9000 * 32,
        kvAvailableTokens: 2640 * 32,
        kvCacheUsage: 6360 / 9000
      }
    ])
    expect(r.notices).toContainEqual(
      expect.objectContaining({ _tag: "UnknownField", field: "attentionDpBalance", entries: 1 })
    )
    expect(r.notices).toContainEqual(expect.objectContaining({ _tag: "DefaultedIdentity", path: "$[1]" }))
  })
  it("the latest is the greatest iter, not the last entry", () => {
    const rows = report('[{"iter":9,"numActiveRequests":5},{"iter":3,"numActiveRequests":1}]').rows
    expect(rows).toEqual([{ dpRank: 0, numRunningReqs: 5 }])
  })
  it("an empty list (no iteration since the last poll) gives no rows", () => {
    expect(report(fixture("iteration_stats_empty_queue.json"), "trtllm-iteration-stats").rows).toEqual([])
  })
  it("typed errors name the path", () => {
    const bad = (text: string) => {
      const r = decodeLedger(text, "trtllm-iteration-stats")
      return r._tag === "Failure" ? r.failure : undefined
    }
    expect(bad('[{"iter":1},{"iter":2,"kvCacheStats":{"usedNumBlocks":"3"}}]')).toMatchObject({
      _tag: "InvalidField",
      path: "$[1].kvCacheStats.usedNumBlocks"
    })
    expect(bad('[{"iter":1,"kvCacheStats":[1]}]')).toMatchObject({
      _tag: "InvalidField",
      path: "$[0].kvCacheStats"
    })
    expect(bad("[1]")).toMatchObject({ _tag: "InvalidField", path: "$[0]" })
    expect(bad('[{"iter":1.5}]')).toMatchObject({ _tag: "InvalidField", path: "$[0].iter" })
    expect(bad('"x"')).toMatchObject({ _tag: "InvalidField", path: "$" })
  })
  it("bad counts make the rank unknown with the path; a repeated latest iter is duplicate-rank", () => {
    const r = report('[{"iter":1,"numActiveRequests":-1,"numQueuedRequests":2}]')
    expect(r.rows).toEqual([
      { dpRank: 0, unknown: { reason: "negative-count", message: "$[0].numActiveRequests is -1" } }
    ])
    expect(report('[{"iter":1,"numQueuedRequests":2.5}]').rows[0]?.unknown?.reason).toBe("invalid-number")
    expect(report('[{"iter":4,"numActiveRequests":1},{"iter":4,"numActiveRequests":2}]').rows).toEqual([
      { dpRank: 0, unknown: { reason: "duplicate-rank", message: "$[0], $[1] all report iter 4" } }
    ])
  })
  it("null sections and a zero-block pool leave their fields absent, never 0", () => {
    const r = report(
      '[{"iter":1,"numActiveRequests":0,"kvCacheStats":{"maxNumBlocks":0,"usedNumBlocks":0},"inflightBatchingStats":null}]'
    )
    expect(r.rows).toEqual([{ dpRank: 0, numRunningReqs: 0 }])
  })
  it("SGLang /get_load lists are still /get_load under auto", () => {
    expect(report('[{"dp_rank":0,"num_reqs":3,"num_waiting_reqs":1}]').rows).toEqual([
      { dpRank: 0, numRunningReqs: 2, numWaitingReqs: 1 }
    ])
  })

  // property: any key order, any subset of the optional parts, extra unknown keys
  const count = fc.nat({ max: 1_000_000 })
  const entry = fc.record(
    {
      iter: fc.nat({ max: 1000 }),
      numActiveRequests: count,
      numQueuedRequests: count,
      iterLatencyMS: fc.double({ min: 0, max: 1e4, noNaN: true }),
      gpuMemUsage: count,
      kvCacheStats: fc.oneof(
        fc.constant(null),
        fc.record(
          {
            maxNumBlocks: fc.integer({ min: 1000, max: 100_000 }),
            usedNumBlocks: fc.nat({ max: 1000 }),
            tokensPerBlock: fc.constantFrom(16, 32, 64)
          },
          { requiredKeys: [] }
        )
      ),
      inflightBatchingStats: fc.oneof(
        fc.constant(null),
        fc.record({ numPausedRequests: count }, { requiredKeys: [] })
      )
    },
    { requiredKeys: ["numActiveRequests"] }
  )
  const extras = fc.dictionary(fc.constantFrom("zFuture", "rankHint", "x_extra"), fc.nat(), { maxKeys: 2 })
  it("property: field order, optional parts and unknown extras do not change the row", () => {
    fc.assert(
      fc.property(entry, extras, fc.boolean(), (e, x, reverse) => {
        const keys = Object.keys(e)
        const ordered = Object.fromEntries(
          (reverse ? keys.reverse() : keys).map((k) => [k, (e as Record<string, unknown>)[k]])
        )
        const plain = report(JSON.stringify([e]), "trtllm-iteration-stats")
        const shuffled = report(JSON.stringify([{ ...x, ...ordered }]))
        expect(shuffled.rows).toEqual(plain.rows)
        const row = plain.rows[0]!
        expect(row.numRunningReqs).toBe(e.numActiveRequests)
        expect(row.numWaitingReqs).toBe(e.numQueuedRequests)
        const kv = e.kvCacheStats
        const tpb = kv?.tokensPerBlock
        expect(row.numUsedTokens).toBe(
          tpb === undefined || kv?.usedNumBlocks === undefined ? undefined : kv.usedNumBlocks * tpb
        )
        expect("kvCacheUsage" in row).toBe(kv?.usedNumBlocks !== undefined && kv.maxNumBlocks !== undefined)
        const unknown = shuffled.notices.flatMap((n) => (n._tag === "UnknownField" ? [n.field] : []))
        expect(unknown.sort()).toEqual(Object.keys(x).sort())
      })
    )
  })
})

describe("TensorRT-LLM Prometheus page (trtllm-serve GET /prometheus/metrics)", () => {
  it("decodes the page to the same row as the iteration stats it was set from", () => {
    const page = report(fixture("prometheus_metrics_page.prom"))
    const stats = report(fixture("iteration_stats_pytorch_adp.json"))
    const { numPausedReqs: _paused, kvCacheUsage, ...rest } = stats.rows[0]!
    expect(page.rows).toHaveLength(1)
    expect(page.rows[0]).toEqual({ ...rest, kvCacheUsage: 0.7066666666666667 })
    expect(page.rows[0]!.kvCacheUsage).toBeCloseTo(kvCacheUsage!, 12)
    expect(page.rows[0]).not.toHaveProperty("numPausedReqs")
    expect(page.notices.map((n) => n._tag).sort()).toEqual([
      "DeclaredWithoutSamples",
      "DefaultedIdentity",
      "UnknownSeries",
      "UnknownSeries"
    ])
    expect(page.notices).toContainEqual(
      expect.objectContaining({ _tag: "UnknownSeries", series: "trtllm_time_to_first_token_seconds" })
    )
  })
  it("errors name the line: two models on one page, no modelled gauge, bad syntax", () => {
    const bad = (text: string, kind: "auto" | "trtllm-metrics" = "trtllm-metrics") => {
      const r = decodeLedger(text, kind)
      return r._tag === "Failure" ? r.failure : undefined
    }
    expect(
      bad(
        'trtllm_num_requests_running{model_name="a"} 1\ntrtllm_num_requests_running{model_name="b"} 2\n',
        "auto"
      )
    ).toMatchObject({ _tag: "AmbiguousSeries", line: 2 })
    expect(bad("trtllm_request_success_total 3\n")).toMatchObject({ _tag: "UnknownSeries" })
    expect(bad("trtllm_num_requests_running{ 1\n")).toMatchObject({ _tag: "SyntaxError", line: 1 })
    expect(bad("trtllm_num_requests_running 1")).toMatchObject({ _tag: "SyntaxError", line: 1 })
  })
  it("a negative gauge makes the rank unknown; vLLM pages are still vLLM under auto", () => {
    expect(report("trtllm_num_requests_waiting -1\n").rows[0]?.unknown?.reason).toBe("negative-count")
    expect(report('vllm:num_requests_running{engine="0"} 2\n').rows).toEqual([
      { dpRank: 0, numRunningReqs: 2 }
    ])
  })
})
