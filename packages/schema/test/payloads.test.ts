/**
 * Every file of fixtures/payloads/ is a test: the per-rank numbers a person reads in it.
 */
import { readdirSync } from "node:fs"
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import {
  decodeLedger,
  decodeLedgerReport,
  decodeSglangMetrics,
  decodeVllmLoggerLines,
  decodeVllmMetrics,
  formatDecodeError,
  type LedgerRow,
  LoadSnapshotV3,
  toDict,
  toEngineCounts
} from "../src/index.js"
import { err, fixture, ok } from "./fixtures.js"

const P = "payloads/"
const byRank = (rows: ReadonlyArray<LedgerRow>) => new Map(rows.map((r) => [r.dpRank, r]))

describe("payload files", () => {
  const tested = new Set<string>()
  const file = (name: string) => {
    tested.add(name)
    return fixture(P + name)
  }

  it("sglang_v1_loads_docs_example.json: first-era /v1/loads, rank 0 as printed in the docs", () => {
    const rows = ok(decodeLedger(file("sglang_v1_loads_docs_example.json")))
    expect(rows).toEqual([
      {
        dpRank: 0,
        // no per-rank timestamp: falls back to the envelope's 2024-01-15T10:30:00+00:00
        timestamp: Date.UTC(2024, 0, 15, 10, 30, 0) / 1000,
        numRunningReqs: 5,
        numWaitingReqs: 2,
        numTotalTokens: 100000,
        numUsedTokens: 5000,
        tokenUsage: 0.05,
        kvCacheUsage: 0.05,
        genThroughput: 120.5,
        utilization: 0.75
      }
    ])
    // fields the example does not carry stay absent (never 0)
    expect(rows[0]).not.toHaveProperty("maxTotalNumTokens")
    expect(rows[0]).not.toHaveProperty("cacheHitRate")
  })

  it("sglang_get_load_legacy_single_rank.json: dp_rank null -> rank 0, all zeros present, ts_tic not a timestamp", () => {
    const rows = ok(decodeLedger(file("sglang_get_load_legacy_single_rank.json")))
    expect(rows).toEqual([{ dpRank: 0, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0 }])
    expect(ok(decodeLedger(fixture(P + "sglang_get_load_legacy_single_rank.json"), "get-load"))).toEqual(rows)
  })

  it("sglang_v1_loads_pr16976_schema_excerpt.txt: truncated, not JSON -> error that says where", () => {
    const text = file("sglang_v1_loads_pr16976_schema_excerpt.txt")
    const e = err(decodeLedger(text, "v1-loads"))
    expect(e._tag).toBe("SyntaxError")
    expect(e.line).toBe(1)
    // the fenced JSON block itself breaks at the truncation marker, on its 12th line
    const block = text.slice(text.indexOf("```json") + 8, text.lastIndexOf("```"))
    const lines = block.split("\n")
    const marker = lines.findIndex((l) => l.startsWith("[... truncated")) + 1
    expect(marker).toBe(12)
    const e2 = err(decodeLedger(block, "v1-loads"))
    expect(e2.line).toBe(marker)
    expect(formatDecodeError(e2)).toMatch(/^line 12: /)
    // auto detection also fails and names line 1
    expect(err(decodeLedger(text)).line).toBe(1)
  })

  it("sglang_load_snapshot_test_values__...py.txt: upstream unit-test values decode and to_dict as asserted", () => {
    const text = file("sglang_load_snapshot_test_values__sglang_test_v1_loads_aggregate.py.txt")
    // the file is Python constructor calls, not a payload: decodeLedger names the first bad line
    const e = err(decodeLedger(text))
    expect(e.line).toBe(5)
    // turn the third constructor call into the wire object it serialises to
    const calls = [...text.matchAll(/LoadSnapshot\(([\s\S]*?)\n\)/g)].map((m) => m[1]!)
    expect(calls).toHaveLength(3)
    const kwargs = (src: string): Record<string, unknown> => {
      const out: Record<string, unknown> = {}
      for (const m of src.matchAll(/(\w+)=(?:(\w+)Metrics\(([^)]*)\)|("[^"]*"|[\d.]+))/g)) {
        out[m[1]!] = m[3] !== undefined ? kwargs(m[3]) : JSON.parse(m[4]!)
      }
      return out
    }
    const third = kwargs(calls[2]!)
    const s = Schema.decodeUnknownSync(LoadSnapshotV3)(
      // upstream's DisaggregationMetrics/QueueMetrics constructors fill defaults; the wire has all keys
      third
    )
    expect(s).toMatchObject({
      dpRank: 0,
      timestamp: 1.25,
      numRunningReqs: 3,
      numWaitingReqs: 2,
      numUsedTokens: 128,
      numTotalTokens: 256,
      maxTotalNumTokens: 4096,
      tokenUsage: 0.125,
      genThroughput: 99.5,
      cacheHitRate: 0.75,
      utilization: 0.5,
      maxRunningRequests: 128
    })
    expect(s.disaggregation?.mode).toBe("decode")
    expect(s.disaggregation?.decodeTransferQueueReqs).toBe(4)
    expect(s.disaggregation?.prefillBootstrapQueueReqs).toBe(0)
    expect(s.queues).toEqual({ waiting: 2, grammar: 1, paused: 0, retracted: 3, preallocReady: 1 })
    // to_dict({"core"}) -> no "disaggregation", no "queues"; to_dict() (all) -> has both
    const core = ok(toDict(s, ["core"], "shm-v3"))
    expect(core).not.toHaveProperty("disaggregation")
    expect(core).not.toHaveProperty("queues")
    const all = ok(toDict(s, null, "shm-v3"))
    expect(all).toHaveProperty("disaggregation")
    expect(all).toHaveProperty("queues")
    // first call: running 3, waiting 2 (the response has no num_total_reqs)
    const first = Schema.decodeUnknownSync(LoadSnapshotV3)(kwargs(calls[0]!))
    expect([first.dpRank, first.numRunningReqs, first.numWaitingReqs, first.numTotalTokens]).toEqual([
      0, 3, 2, 256
    ])
    expect(ok(toDict(first, null, "shm-v3"))).not.toHaveProperty("num_total_reqs")
  })

  it("sglang_metrics_dp2_qwen3_0.6b__sglang_pr7597.prom: rank 0 = 386.2083, rank 1 = 386.2656", () => {
    const m = ok(decodeSglangMetrics(file("sglang_metrics_dp2_qwen3_0.6b__sglang_pr7597.prom")))
    expect(m.records.map((r) => r.dpRank)).toEqual([0, 1])
    expect(m.records[0]!.genThroughput).toBeCloseTo(386.2083, 4)
    expect(m.records[1]!.genThroughput).toBeCloseTo(386.2656, 4)
  })

  it("sglang_metrics_dp8_deepseek_r1__aibrix_issue1614_part1.prom: gen_throughput on 7 ranks, num_queue_reqs 0 on ranks 1 and 3", () => {
    const rows = byRank(ok(decodeLedger(file("sglang_metrics_dp8_deepseek_r1__aibrix_issue1614_part1.prom"))))
    expect([...rows.keys()]).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
    expect(rows.get(3)!.genThroughput).toBeCloseTo(141.7547, 4)
    expect(rows.get(0)!.genThroughput).toBeCloseTo(35.4238, 4)
    expect(rows.get(1)!.genThroughput).toBeUndefined()
    expect(rows.get(1)!.numWaitingReqs).toBe(0)
    expect(rows.get(3)!.numWaitingReqs).toBe(0)
    expect(rows.get(0)!.numWaitingReqs).toBeUndefined()
  })

  it("sglang_metrics_single_llama32_3b__sglang_pr1853.prom: oldest name= scheme, one rank", () => {
    const rows = ok(decodeLedger(file("sglang_metrics_single_llama32_3b__sglang_pr1853.prom")))
    expect(rows).toEqual([
      {
        dpRank: 0,
        maxTotalNumTokens: 570979,
        maxRunningRequests: 2231,
        maxPrefillTokens: 16384,
        contextLen: 131072
      }
    ])
  })

  it("sglang_dp4_rank_snapshot__radixark_miles_pr2012.txt: rank 2 running 1 / queue 11, the others idle", () => {
    const rows = ok(decodeLedger(file("sglang_dp4_rank_snapshot__radixark_miles_pr2012.txt")))
    expect(rows).toEqual([
      { dpRank: 0, numRunningReqs: 0, numWaitingReqs: 0 },
      { dpRank: 1, numRunningReqs: 0, numWaitingReqs: 0 },
      { dpRank: 2, numRunningReqs: 1, numWaitingReqs: 11 },
      { dpRank: 3, numRunningReqs: 0, numWaitingReqs: 0 }
    ])
  })

  it("vllm_metrics_qwen25coder32b__production_stack_issue318.prom: one engine, running 0, waiting 0, kv 0.0", () => {
    const text = file("vllm_metrics_qwen25coder32b__production_stack_issue318.prom")
    expect(ok(decodeLedger(text))).toEqual([
      { dpRank: 0, numRunningReqs: 0, numWaitingReqs: 0, kvCacheUsage: 0 }
    ])
    const m = ok(decodeVllmMetrics(text))
    expect(toEngineCounts(m.records[0]!)).toEqual([0, 0, 0])
  })

  it("vllm_metrics_dp4_engine_imbalance__vllm_issue48808.prom: two scrapes, 8/8/8/8 then 27/5/0/0", () => {
    const text = file("vllm_metrics_dp4_engine_imbalance__vllm_issue48808.prom")
    // two scrapes pasted one after the other: the last one is decoded, with a notice; waiting for
    // engines 1-3 is absent in it (never taken from the older time point)
    const r = ok(decodeLedgerReport(text))
    expect(r.rows).toEqual([
      { dpRank: 0, numRunningReqs: 27, numWaitingReqs: 0 },
      { dpRank: 1, numRunningReqs: 5 },
      { dpRank: 2, numRunningReqs: 0 },
      { dpRank: 3, numRunningReqs: 0 }
    ])
    expect(r.notices).toEqual([expect.objectContaining({ _tag: "MultipleScrapes", scrapes: 2, line: 10 })])
    const blocks = text.split(/^# \d{4}-\d{2}-\d{2} .*$/m).slice(1)
    expect(blocks).toHaveLength(2)
    const b1 = ok(decodeLedger(blocks[0]!, "vllm-metrics"))
    expect(b1.map((r) => r.numRunningReqs)).toEqual([8, 8, 8, 8])
    expect(b1.map((r) => r.numWaitingReqs)).toEqual([0, 0, 0, 0])
  })

  it("three scrapes keep the last; a series repeated inside one scrape stays ambiguous", () => {
    const scrape = (run: number) =>
      `# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine="0"} ${run}\nvllm:num_requests_running{engine="1"} 1\n`
    const r = ok(decodeLedgerReport(scrape(3) + scrape(4) + scrape(5), "vllm-metrics"))
    expect(r.rows.map((x) => x.numRunningReqs)).toEqual([5, 1])
    expect(r.notices).toEqual([expect.objectContaining({ _tag: "MultipleScrapes", scrapes: 3, line: 7 })])
    // the repeat is not the text's first series coming again: no scrape boundary, an error
    const inside =
      'vllm:num_requests_running{engine="0"} 1\nvllm:num_requests_waiting{engine="0"} 2\nvllm:num_requests_waiting{engine="0"} 3\n'
    const e = err(decodeLedger(inside, "vllm-metrics"))
    expect(e).toMatchObject({ _tag: "AmbiguousSeries", line: 3 })
    // blocks with no comment between them are per-rank writers into one series (S10), not scrapes
    const bare = scrape(3).replace(/^#.*\n/, "")
    expect(err(decodeLedger(bare + bare, "vllm-metrics"))).toMatchObject({ _tag: "AmbiguousSeries", line: 3 })
  })

  it("vllm_logger_dp8_waiting_stack__vllm_issue36748.log: engine 0 51/117/100%, engine 1 31/108/98.6%", () => {
    const text = file("vllm_logger_dp8_waiting_stack__vllm_issue36748.log")
    const recs = ok(decodeVllmLoggerLines(text))
    expect(recs.map((r) => [r.engine, r.numRunningReqs, r.numWaitingReqs, r.kvCacheUsage])).toEqual([
      [0, 51, 117, 1],
      [1, 31, 108, 0.986]
    ])
    expect(recs[0]!.avgGenerationThroughputTokensPerSecond).toBe(1157.2)
    expect(recs[1]!.avgPromptThroughputTokensPerSecond).toBe(0)
  })

  it("every payload either yields rows or fails with a typed error; notices name what was not understood", () => {
    const all = readdirSync(new URL("../../../fixtures/payloads/", import.meta.url)).filter(
      (f) => f !== "README.md"
    )
    const outcome = Object.fromEntries(
      all.map((f) => {
        const text = fixture(P + f)
        const r = decodeLedgerReport(text)
        if (r._tag === "Failure") return [f, r.failure._tag]
        expect(r.success.rows.length).toBeGreaterThan(0)
        for (const n of r.success.notices) if (n._tag === "UnknownSeries") expect(text).toContain(n.series)
        return [f, r.success.notices.map((n) => ("series" in n ? `${n._tag} ${n.series}` : n._tag))]
      })
    )
    expect(outcome).toEqual({
      "sglang_dp4_rank_snapshot__radixark_miles_pr2012.txt": [],
      "sglang_get_load_legacy_single_rank.json": ["DefaultedIdentity"],
      // not payloads (a Python test file, a truncated PR excerpt): auto-detection says so
      "sglang_load_snapshot_test_values__sglang_test_v1_loads_aggregate.py.txt": "UnknownFormat",
      "sglang_metrics_dp2_qwen3_0.6b__sglang_pr7597.prom": [],
      "sglang_metrics_dp8_deepseek_r1__aibrix_issue1614_part1.prom": [],
      "sglang_metrics_single_llama32_3b__sglang_pr1853.prom": [
        "UnknownSeries sglang:prompt_tokens_total",
        "DefaultedIdentity"
      ],
      "sglang_v1_loads_docs_example.json": [],
      "sglang_v1_loads_pr16976_schema_excerpt.txt": "UnknownFormat",
      "vllm_logger_dp8_waiting_stack__vllm_issue36748.log": [],
      "vllm_metrics_dp4_engine_imbalance__vllm_issue48808.prom": ["MultipleScrapes"],
      "vllm_metrics_qwen25coder32b__production_stack_issue318.prom": [
        "UnknownSeries process_start_time_seconds",
        "UnknownSeries process_cpu_seconds_total",
        "UnknownSeries process_open_fds",
        "UnknownSeries process_max_fds",
        "DefaultedIdentity"
      ]
    })
  })

  it("covers every payload file", () => {
    const all = readdirSync(new URL("../../../fixtures/payloads/", import.meta.url)).filter(
      (f) => f !== "README.md"
    )
    expect(all.filter((f) => !tested.has(f))).toEqual([])
  })
})
