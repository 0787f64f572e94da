/**
 * Fault cases of fixtures/cases/SCENARIOS.md whose decoder part belongs to @loadledger/schema.
 */
import { describe, expect, it } from "vitest"
import {
  decodeLedger,
  decodeSglangMetrics,
  decodeVllmLoggerLines,
  decodeVllmMetrics,
  type LedgerRow,
  ledgerTotal,
  summarizeField,
  toEngineCounts
} from "../src/index.js"
import { err, fixture, ok } from "./fixtures.js"

const rank = (rows: ReadonlyArray<LedgerRow>, r: number) => rows.find((x) => x.dpRank === r)

describe("S04 decoder: per-engine stats, second block has waiting for engine 0 only", () => {
  const text = fixture("payloads/vllm_metrics_dp4_engine_imbalance__vllm_issue48808.prom")
  const blocks = text.split(/^# \d{4}-\d{2}-\d{2} .*$/m).slice(1)
  it("S04 block 1 is running 8/8/8/8, waiting 0 on every engine", () => {
    const m = ok(decodeVllmMetrics(blocks[0]!))
    expect(m.records.map((e) => [e.engine, e.numRequestsRunning, e.numRequestsWaiting])).toEqual([
      [0, 8, 0],
      [1, 8, 0],
      [2, 8, 0],
      [3, 8, 0]
    ])
  })
  it("S04 block 2 is running 27/5/0/0; waiting for engines 1-3 is absent, not 0", () => {
    const rows = ok(decodeLedger(blocks[1]!, "vllm-metrics"))
    expect(rows.map((r) => r.numRunningReqs)).toEqual([27, 5, 0, 0])
    expect(rank(rows, 0)!.numWaitingReqs).toBe(0)
    for (const e of [1, 2, 3]) {
      expect(rank(rows, e)).not.toHaveProperty("numWaitingReqs")
      expect(rank(rows, e)!.numWaitingReqs).toBeUndefined()
    }
    // no complete EngineCounts without waiting and KV: none, never zeros
    const m = ok(decodeVllmMetrics(blocks[1]!))
    expect(m.records.map(toEngineCounts)).toEqual([undefined, undefined, undefined, undefined])
    expect(ledgerTotal(rows, "numWaitingReqs")).toBeUndefined()
  })
})

describe("S07 decoder: vLLM logger lines to per-engine records", () => {
  it("S07 r0 (w117, r51, kv 1.000), r1 (w108, r31, kv 0.986), prefix hit 0.70 / 0.66 kept", () => {
    const text = fixture("payloads/vllm_logger_dp8_waiting_stack__vllm_issue36748.log")
    const recs = ok(decodeVllmLoggerLines(text))
    expect(recs).toHaveLength(2)
    expect(recs[0]).toMatchObject({ engine: 0, numWaitingReqs: 117, numRunningReqs: 51, kvCacheUsage: 1 })
    expect(recs[1]).toMatchObject({ engine: 1, numWaitingReqs: 108, numRunningReqs: 31, kvCacheUsage: 0.986 })
    expect(recs[0]!.prefixCacheHitRate).toBe(0.7)
    expect(recs[1]!.prefixCacheHitRate).toBe(0.66)
    const rows = ok(decodeLedger(text))
    expect(rows).toEqual([
      {
        dpRank: 0,
        numRunningReqs: 51,
        numWaitingReqs: 117,
        kvCacheUsage: 1,
        prefixCacheHitRate: 0.7,
        avgPromptThroughputTokensPerSecond: 16.5,
        avgGenerationThroughputTokensPerSecond: 1157.2
      },
      {
        dpRank: 1,
        numRunningReqs: 31,
        numWaitingReqs: 108,
        kvCacheUsage: 0.986,
        prefixCacheHitRate: 0.66,
        avgPromptThroughputTokensPerSecond: 0,
        avgGenerationThroughputTokensPerSecond: 809.3
      }
    ])
  })
  it("S07 a logger line with an unreadable item fails naming its line", () => {
    const e = err(
      decodeVllmLoggerLines("noise\nEngine 000: Avg prompt throughput: 1.0 tokens/s, Running: many reqs\n")
    )
    expect(e.line).toBe(2)
  })
})

describe("S08 /v1/loads schema change must never decode as -1", () => {
  const U =
    '{"loads":[{"dp_rank":0,"num_total_tokens":12000},{"dp_rank":1,"num_total_tokens":0},{"dp_rank":2,"num_total_tokens":0},{"dp_rank":3,"num_total_tokens":3000}]}'
  it("S08 per-rank loads U@0=12000, U@1=0, U@2=0, U@3=3000 from one fetch, total 15000", () => {
    const rows = ok(decodeLedger(U))
    expect(rows.map((r) => [r.dpRank, r.numTotalTokens])).toEqual([
      [0, 12000],
      [1, 0],
      [2, 0],
      [3, 3000]
    ])
    expect(ledgerTotal(rows, "numTotalTokens")).toBe(15000)
    expect(rows.every((r) => (r.numTotalTokens ?? 0) >= 0)).toBe(true)
  })
  it("S08 legacy aggregate payload: rank 0 = 100000, total 100000", () => {
    const rows = ok(decodeLedger(fixture("payloads/sglang_v1_loads_docs_example.json")))
    expect(rank(rows, 0)!.numTotalTokens).toBe(100000)
    expect(ledgerTotal(rows, "numTotalTokens")).toBe(100000)
  })
  it("S08 empty loads: no rows, total unknown (not 0, not -1)", () => {
    const rows = ok(decodeLedger('{"loads":[]}'))
    expect(rows).toEqual([])
    expect(ledgerTotal(rows, "numTotalTokens")).toBeUndefined()
  })
  it("S08 duplicate rank: rank 0 rejected (unknown), total unknown", () => {
    const rows = ok(
      decodeLedger('{"loads":[{"dp_rank":0,"num_total_tokens":100},{"dp_rank":0,"num_total_tokens":200}]}')
    )
    expect(rows).toHaveLength(1)
    expect(rows[0]!.unknown?.reason).toBe("duplicate-rank")
    expect(rows[0]!.numTotalTokens).toBeUndefined()
    expect(ledgerTotal(rows, "numTotalTokens")).toBeUndefined()
  })
  it("S08 negative count: rank 0 unknown, rank 1 = 7, total unknown", () => {
    const rows = ok(
      decodeLedger('{"loads":[{"dp_rank":0,"num_total_tokens":-5},{"dp_rank":1,"num_total_tokens":7}]}')
    )
    expect(rank(rows, 0)!.unknown?.reason).toBe("negative-count")
    expect(rank(rows, 0)!.numTotalTokens).toBeUndefined()
    expect(rank(rows, 1)).toEqual({ dpRank: 1, numTotalTokens: 7 })
    expect(ledgerTotal(rows, "numTotalTokens")).toBeUndefined()
  })
  it("S08 a payload of the wrong shape is an error naming the field, never a -1 load", () => {
    const e = err(decodeLedger('{"loads":[{"dp_rank":0,"num_total_tokens":"12000"}]}'))
    expect(e.path).toBe("$.loads[0].num_total_tokens")
    expect(err(decodeLedger('{"loads":{"dp_rank":0}}')).path).toBe("$.loads")
  })
})

describe("S09 engines without /v1/loads: /metrics fallback, missing gauges are none", () => {
  it("S09 (1) vLLM V0-era metrics: running 0, waiting 0, kv 0.0 (gpu_cache_usage_perc), process_* ignored", () => {
    const text = fixture("payloads/vllm_metrics_qwen25coder32b__production_stack_issue318.prom")
    const m = ok(decodeVllmMetrics(text))
    expect(m.records).toEqual([
      { engine: 0, numRequestsRunning: 0, numRequestsWaiting: 0, gpuCacheUsagePerc: 0 }
    ])
    expect(toEngineCounts(m.records[0]!)).toEqual([0, 0, 0])
    // kv_cache_usage_perc is accepted too, and wins over the deprecated name
    const both = ok(
      decodeVllmMetrics(
        'vllm:kv_cache_usage_perc{engine="0"} 0.25\nvllm:gpu_cache_usage_perc{engine="0"} 0.5\n'
      )
    )
    expect(ok(decodeLedger('vllm:kv_cache_usage_perc{engine="0"} 0.25\n'))).toEqual([
      { dpRank: 0, kvCacheUsage: 0.25 }
    ])
    expect(both.records[0]!.kvCacheUsagePerc).toBe(0.25)
  })
  it("S09 (2) declared with no samples: none / declared-no-samples, never zeros", () => {
    const text = [
      "# HELP vllm:num_requests_running Number of requests in model execution batches.",
      "# TYPE vllm:num_requests_running gauge",
      "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.",
      "# TYPE vllm:num_requests_waiting gauge",
      "# HELP vllm:gpu_cache_usage_perc GPU KV-cache usage. 1 means 100 percent usage.",
      "# TYPE vllm:gpu_cache_usage_perc gauge",
      ""
    ].join("\n")
    const m = ok(decodeVllmMetrics(text))
    expect(m.records).toEqual([])
    expect(m.declaredWithoutSamples).toEqual([
      "vllm:gpu_cache_usage_perc",
      "vllm:num_requests_running",
      "vllm:num_requests_waiting"
    ])
    expect(ok(decodeLedger(text))).toEqual([])
  })
  it("S09 (3) SGLang DP8: gen_throughput on 0,2..7, num_queue_reqs 0 on 1 and 3, token_usage absent everywhere", () => {
    const m = ok(
      decodeSglangMetrics(fixture("payloads/sglang_metrics_dp8_deepseek_r1__aibrix_issue1614_part1.prom"))
    )
    expect(m.records.filter((r) => r.genThroughput !== undefined).map((r) => r.dpRank)).toEqual([
      0, 2, 3, 4, 5, 6, 7
    ])
    expect(
      m.records.filter((r) => r.numQueueReqs !== undefined).map((r) => [r.dpRank, r.numQueueReqs])
    ).toEqual([
      [1, 0],
      [3, 0]
    ])
    expect(m.records.every((r) => r.tokenUsage === undefined)).toBe(true)
    const rows = ok(
      decodeLedger(fixture("payloads/sglang_metrics_dp8_deepseek_r1__aibrix_issue1614_part1.prom"))
    )
    expect(rows.every((r) => r.kvCacheUsage === undefined)).toBe(true)
    expect(summarizeField(rows, "kvCacheUsage")).toBeUndefined()
  })
})

describe("S10 unlabelled per-rank gauges: ambiguity, not last-writer-wins", () => {
  it("S10 (a) 8 samples with one label set -> ambiguous series, none of the values returned", () => {
    const text = Array.from(
      { length: 8 },
      (_, i) => `sglang:gen_throughput{engine_type="unified",model_name="m"} ${(100 + i).toFixed(1)}`
    ).join("\n")
    const r = decodeSglangMetrics(text)
    const e = err(r)
    expect(e._tag).toBe("AmbiguousSeries")
    expect(e.message).toContain("sglang:gen_throughput")
    expect(e.line).toBe(2)
    const l = decodeLedger(text)
    expect(l._tag).toBe("Failure")
  })
  it("S10 (a') same metric, different label sets but no dp_rank -> still ambiguous for the rank", () => {
    const e = err(
      decodeSglangMetrics(
        'sglang:gen_throughput{tp_rank="0"} 100.0\nsglang:gen_throughput{tp_rank="1"} 101.0\n'
      )
    )
    expect(e._tag).toBe("AmbiguousSeries")
  })
  it("S10 (b) per-rank labels: rank 0 = 386.2083, rank 1 = 386.2656, node total ~ 772.47", () => {
    const rows = ok(decodeLedger(fixture("payloads/sglang_metrics_dp2_qwen3_0.6b__sglang_pr7597.prom")))
    expect(rank(rows, 0)!.genThroughput).toBeCloseTo(386.2083, 4)
    expect(rank(rows, 1)!.genThroughput).toBeCloseTo(386.2656, 4)
    expect(ledgerTotal(rows, "genThroughput")).toBeCloseTo(772.47, 2)
  })
})

describe("S11 pod-level utilisation must not hide a 4x rank imbalance", () => {
  it("S11 7 per-rank gen_throughput values, rank 1 missing, max/min 4.00, mean over the 7 present", () => {
    const rows = ok(
      decodeLedger(fixture("payloads/sglang_metrics_dp8_deepseek_r1__aibrix_issue1614_part1.prom"))
    )
    const want: Record<number, number> = {
      0: 35.4238,
      2: 35.4188,
      3: 141.7547,
      4: 141.7441,
      5: 140.7647,
      6: 35.4425,
      7: 35.437
    }
    for (const [r, v] of Object.entries(want)) expect(rank(rows, Number(r))!.genThroughput).toBeCloseTo(v, 4)
    expect(rank(rows, 1)!.genThroughput).toBeUndefined()
    const s = summarizeField(rows, "genThroughput")!
    expect(s.ranksReporting).toEqual([0, 2, 3, 4, 5, 6, 7])
    expect(s.ranksMissing).toEqual([1])
    expect(s.maxOverMin.toFixed(2)).toBe("4.00")
    expect(s.max).toBeCloseTo(141.75, 2)
    expect(s.min).toBeCloseTo(35.42, 2)
    expect(s.mean).toBeCloseTo(80.86, 2)
    expect(s.description).toContain("over 7 of 8 ranks (missing: 1)")
    // the total is unknown: rank 1 did not report (a partial sum is not a pod total)
    expect(ledgerTotal(rows, "genThroughput")).toBeUndefined()
  })
})
