import { readFileSync } from "node:fs"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { decodeLedger, decodeLedgerReport, type LedgerKind, type LedgerReport } from "../src/index.js"

const fixture = (name: string) =>
  readFileSync(new URL(`./fixtures/gateways/${name}`, import.meta.url), "utf8")

const report = (text: string, kind: LedgerKind = "auto"): LedgerReport => {
  const r = decodeLedgerReport(text, kind)
  if (r._tag === "Failure") throw new Error(JSON.stringify(r.failure))
  return r.success
}
const failure = (text: string, kind: LedgerKind) => {
  const r = decodeLedger(text, kind)
  return r._tag === "Failure" ? r.failure : undefined
}

describe("SMG /get_loads", () => {
  const r = report(fixture("smg_get_loads_fleet.json"))
  it("keys rows by (worker, dp_rank): two workers' rank 0 and 1 are four rows, none duplicate", () => {
    expect(r.rows.map((x) => [x.worker, x.dpRank])).toEqual([
      ["http://decode-0:30000", 0],
      ["http://decode-1:30000", 0],
      ["http://vllm-0:8000", 0],
      ["http://decode-0:30000", 1],
      ["http://decode-1:30000", 1]
    ])
    expect(r.rows.some((x) => x.unknown !== undefined)).toBe(false)
  })
  it("reads a full snapshot's fields and PD queue totals, timestamp in epoch seconds", () => {
    expect(r.rows[0]).toEqual({
      dpRank: 0,
      worker: "http://decode-0:30000",
      timestamp: Date.parse("2026-08-21T09:15:02.125Z") / 1000,
      numRunningReqs: 48,
      numWaitingReqs: 3,
      numWaitingUncachedTokens: 2048,
      numUsedTokens: 40960,
      maxTotalNumTokens: 262144,
      tokenUsage: 0.15625,
      kvCacheUsage: 0.15625,
      genThroughput: 1830.5,
      cacheHitRate: 0.62,
      utilization: 0.9,
      maxRunningRequests: 128,
      numPrefillQueueReqs: 0,
      numDecodeQueueReqs: 12
    })
  })
  it("upstream's defaulted zeros stay absent: uncached tokens with requests waiting, a ratio-only snapshot", () => {
    const d01 = r.rows.find((x) => x.worker === "http://decode-0:30000" && x.dpRank === 1)!
    expect(d01).not.toHaveProperty("numWaitingUncachedTokens")
    const idle = r.rows.find((x) => x.worker === "http://decode-1:30000" && x.dpRank === 1)!
    expect(idle.numWaitingUncachedTokens).toBe(0)
    expect(idle.genThroughput).toBe(0)
    const vllm = r.rows.find((x) => x.worker === "http://vllm-0:8000")!
    expect(vllm).toEqual({
      dpRank: 0,
      worker: "http://vllm-0:8000",
      numRunningReqs: 7,
      numWaitingReqs: 1,
      tokenUsage: 0.41,
      kvCacheUsage: 0.41
    })
  })
  it("a worker without details is a rank-less unreachable load; unmodelled keys are named", () => {
    expect(r.rankless).toEqual([
      {
        worker: "http://decode-2:30000",
        unknown: { reason: "unreachable", message: "$.workers[3].load is -1: the gateway got no load" }
      }
    ])
    const fields = r.notices.flatMap((n) => (n._tag === "UnknownField" ? [[n.field, n.entries]] : []))
    expect(fields).toEqual([
      ["num_total_reqs", 5],
      ["kv_transfer_latency_ms", 2],
      ["kv_transfer_speed_gb_s", 2],
      ["disagg_mode", 2]
    ])
  })
  it("an older gateway's {worker, load} is the worker's rank-less used tokens", () => {
    const old = report('{"workers":[{"worker":"http://a:1","load":300}]}', "smg-loads")
    expect(old.rows).toEqual([])
    expect(old.rankless).toEqual([{ worker: "http://a:1", numUsedTokens: 300 }])
  })
  it("typed errors name the path", () => {
    expect(
      failure('{"workers":[{"worker":"a","details":{"loads":[{"dp_rank":-1}]}}]}', "smg-loads")
    ).toMatchObject({
      _tag: "InvalidField",
      path: "$.workers[0].details.loads[0].dp_rank"
    })
    expect(
      failure(
        '{"workers":[{"worker":"a","details":{"loads":[{"dp_rank":0,"num_running_reqs":"3"}]}}]}',
        "smg-loads"
      )
    ).toMatchObject({ _tag: "InvalidField", path: "$.workers[0].details.loads[0].num_running_reqs" })
    expect(failure('{"workers":[{"load":1}]}', "smg-loads")).toMatchObject({ path: "$.workers[0].worker" })
    expect(failure('{"loads":[]}', "smg-loads")).toMatchObject({ path: "$.workers" })
  })
})

describe("SMG Prometheus page", () => {
  const r = report(fixture("smg_metrics_page.prom"))
  it("rows per (worker, dp_rank) from smg_engine_*; the removed worker's -1 series are skipped", () => {
    expect(r.rows).toEqual([
      {
        dpRank: 0,
        worker: "http://decode-0:30000",
        numRunningReqs: 48,
        numWaitingReqs: 3,
        tokenUsage: 0.15625,
        kvCacheUsage: 0.15625,
        genThroughput: 1830.5,
        numDecodeQueueReqs: 12
      },
      {
        dpRank: 0,
        worker: "http://decode-1:30000",
        numRunningReqs: 5,
        numWaitingReqs: 0,
        tokenUsage: 0.03125,
        kvCacheUsage: 0.03125
      },
      {
        dpRank: 1,
        worker: "http://decode-0:30000",
        numRunningReqs: 30,
        numWaitingReqs: 2,
        tokenUsage: 0.078125,
        kvCacheUsage: 0.078125,
        genThroughput: 1211,
        numDecodeQueueReqs: 4
      },
      {
        dpRank: 1,
        worker: "http://decode-1:30000",
        numRunningReqs: 0,
        numWaitingReqs: 0,
        tokenUsage: 0,
        kvCacheUsage: 0
      }
    ])
  })
  it("reports the gateway's other families, the removed-worker samples and a gauge without samples", () => {
    const series = r.notices.flatMap((n) => (n._tag === "UnknownSeries" ? [n.series] : []))
    expect(series).toEqual([
      "SGLang model gateway (SMG) removed-worker series",
      "smg_worker_pool_size",
      "smg_worker_requests_active",
      "smg_router_requests_total",
      "smg_engine_pd_kv_transfer_latency_ms"
    ])
    expect(r.notices).toContainEqual(expect.objectContaining({ _tag: "UnknownSeries", samples: 3 }))
    expect(r.notices).toContainEqual(
      expect.objectContaining({ _tag: "DeclaredWithoutSamples", series: "smg_engine_cache_hit_rate" })
    )
  })
  it("two models' different values for one (worker, rank) are ambiguous; a bad dp_rank is an error on its line", () => {
    const two =
      'smg_engine_running_requests{worker="w",model="a",dp_rank="0"} 1\nsmg_engine_running_requests{worker="w",model="b",dp_rank="0"} 2\n'
    expect(failure(two, "smg-metrics")).toMatchObject({ _tag: "AmbiguousSeries", line: 2 })
    const same = two.replace("} 2", "} 1")
    expect(decodeLedger(same, "smg-metrics")).toMatchObject({
      success: [{ dpRank: 0, worker: "w", numRunningReqs: 1 }]
    })
    expect(failure('smg_engine_running_requests{worker="w",dp_rank="x"} 1\n', "smg-metrics")).toMatchObject({
      _tag: "InvalidField",
      line: 1
    })
    expect(failure("smg_worker_pool_size 3\n", "smg-metrics")).toMatchObject({ _tag: "UnknownSeries" })
  })
})

describe("Dynamo", () => {
  it("kv_metrics events: each field from the latest event carrying it, u64 worker ids exact", () => {
    const r = report(fixture("dynamo_kv_metrics_events.jsonl"))
    expect(r.rows).toEqual([
      {
        dpRank: 0,
        worker: "7587888160958628001",
        activeDecodeBlocks: 420,
        activePrefillTokens: 4096,
        kvUsedBlocks: 455,
        numWaitingReqs: 2
      },
      { dpRank: 0, worker: "7587888160958628002", activeDecodeBlocks: 12, activePrefillTokens: 256 },
      { dpRank: 1, worker: "7587888160958628001", activeDecodeBlocks: 380, activePrefillTokens: 0 }
    ])
    expect(r.notices).toContainEqual(expect.objectContaining({ _tag: "DefaultedIdentity", path: "$[3]" }))
  })
  it("the 2025 ForwardPassMetrics form", () => {
    const r = report(fixture("dynamo_forward_pass_metrics.jsonl"))
    expect(r.rows[1]).toEqual({
      dpRank: 1,
      worker: "7587888160958628010",
      numRunningReqs: 20,
      maxRunningRequests: 256,
      numWaitingReqs: 0,
      kvUsedBlocks: 1500,
      kvTotalBlocks: 9000,
      kvCacheUsage: 0.1666,
      prefixCacheHitRate: 0.3
    })
    expect(r.notices).toContainEqual(
      expect.objectContaining({ _tag: "UnknownField", field: "data.spec_decode_stats", entries: 2 })
    )
  })
  it("a JSON list of events reads the same; errors name the event and key or the line", () => {
    const list = `[${fixture("dynamo_kv_metrics_events.jsonl").trim().split("\n").join(",\n")}]`
    expect(report(list).rows).toEqual(report(fixture("dynamo_kv_metrics_events.jsonl")).rows)
    expect(failure('{"worker_id":1,"dp_rank":0,"kv_used_blocks":"3"}\n', "dynamo-load-events")).toMatchObject(
      {
        _tag: "InvalidField",
        path: "$[0].kv_used_blocks"
      }
    )
    expect(failure('{"worker_id":1}\n{"worker_id":\n', "dynamo-load-events")).toMatchObject({
      _tag: "SyntaxError",
      line: 2
    })
    expect(failure('{"dp_rank":0}\n', "dynamo-load-events")).toMatchObject({ path: "$[0].worker_id" })
  })
  it("frontend page: rows per (worker_id, dp_rank), the last-* gauges reported, the rest ignored", () => {
    const r = report(fixture("dynamo_frontend_metrics.prom"))
    expect(r.rows).toEqual([
      { dpRank: 0, worker: "7890", activeDecodeBlocks: 56, activePrefillTokens: 1234 },
      { dpRank: 0, worker: "7891", activeDecodeBlocks: 0, activePrefillTokens: 512 },
      { dpRank: 1, worker: "7890", activeDecodeBlocks: 31, activePrefillTokens: 0 }
    ])
    expect(r.notices.flatMap((n) => (n._tag === "UnknownSeries" ? [n.series] : []))).toEqual([
      "dynamo_frontend_worker_last_time_to_first_token_seconds"
    ])
  })
})

describe("llm-d endpoint picker page", () => {
  it("<pod>-rank-<n> endpoints are (worker, dpRank) rows; pool averages are reported, not rows", () => {
    const r = report(fixture("llmd_epp_metrics.prom"))
    expect(r.rows).toEqual([
      { dpRank: 0, worker: "pod1", numWaitingReqs: 100 },
      { dpRank: 0, worker: "pod2", numWaitingReqs: 2 },
      { dpRank: 1, worker: "pod1", numWaitingReqs: 3 },
      { dpRank: 1, worker: "pod2", numWaitingReqs: 0 }
    ])
    expect(r.notices.flatMap((n) => (n._tag === "UnknownSeries" ? [n.series] : []))).toEqual([
      "inference_pool_average_kv_cache_utilization",
      "inference_pool_average_queue_size",
      "inference_pool_ready_pods"
    ])
  })
  it("bare pod names: rank 0 with a notice alone, rank-less beside ranked endpoints", () => {
    const alone = report('inference_pool_per_pod_queue_size{model_server_pod="p",name="x"} 5\n')
    expect(alone.rows).toEqual([{ dpRank: 0, worker: "p", numWaitingReqs: 5 }])
    expect(alone.notices.map((n) => n._tag)).toContain("DefaultedIdentity")
    const mixed = report(
      'inference_pool_per_pod_queue_size{model_server_pod="p",name="x"} 5\ninference_pool_per_pod_queue_size{model_server_pod="q-rank-2",name="x"} 1\n'
    )
    expect(mixed.rows).toEqual([{ dpRank: 2, worker: "q", numWaitingReqs: 1 }])
    expect(mixed.rankless).toEqual([{ worker: "p", numWaitingReqs: 5 }])
  })
})

describe("gateway pages: properties", () => {
  it("any fleet of workers x ranks, any sample order, CRLF or not: one row per (worker, rank) with its value", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 4 }),
        fc.boolean(),
        fc.integer(),
        (workers, ranks, crlf, seed) => {
          const lines: Array<string> = []
          for (let w = 0; w < workers; w++)
            for (let d = 0; d < ranks; d++)
              lines.push(
                `smg_engine_running_requests{worker="http://w${w}:1",model="m",dp_rank="${d}"} ${w * 10 + d}`
              )
          // a deterministic shuffle
          const order = lines
            .map((l, i) => [Math.imul(i + 1, seed | 1) >>> 0, l] as const)
            .sort((a, b) => a[0] - b[0])
          const text = `${order.map(([, l]) => l).join(crlf ? "\r\n" : "\n")}${crlf ? "\r\n" : "\n"}`
          const r = decodeLedger(text)
          expect(r._tag).toBe("Success")
          const rows = r._tag === "Success" ? r.success : []
          expect(rows.length).toBe(workers * ranks)
          for (const row of rows)
            expect(row.numRunningReqs).toBe(Number(row.worker!.slice(8, -2)) * 10 + row.dpRank)
        }
      )
    )
  })
})
