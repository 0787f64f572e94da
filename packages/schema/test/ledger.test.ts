/**
 * Issue 11: every decoder produces RankLoad rows with one identity rule, decodes everything the
 * engines emit (2026 /v1/loads keys, queue and PD gauges, vLLM V0 logger lines), and reports
 * what it does not model in typed notices instead of a silent empty success.
 */
import { describe, expect, it } from "vitest"
import {
  decodeGetLoad,
  decodeLedger,
  decodeLedgerReport,
  formatLedgerNotice,
  type RankLoad
} from "../src/index.js"
import { err, fixture, ok } from "./fixtures.js"

const tags = (r: { notices: ReadonlyArray<{ _tag: string }> }) => r.notices.map((n) => n._tag)

describe("identity: one rule for every format", () => {
  it("a /v1/loads entry without dp_rank is its list index, with a notice (not rank 0)", () => {
    const r = ok(
      decodeLedgerReport(
        '{"loads":[{"dp_rank":0,"num_running_reqs":1},{"num_running_reqs":2},{"num_running_reqs":3}]}'
      )
    )
    expect(r.rows.map((x) => [x.dpRank, x.numRunningReqs])).toEqual([
      [0, 1],
      [1, 2],
      [2, 3]
    ])
    expect(
      r.notices.filter((n) => n._tag === "DefaultedIdentity").map((n) => ("path" in n ? n.path : ""))
    ).toEqual(["$.loads[1].dp_rank", "$.loads[2].dp_rank"])
  })
  it("/get_load uses the same rule: null dp_rank is the list index, with a notice", () => {
    const r = ok(
      decodeLedgerReport(
        '[{"dp_rank":null,"num_reqs":3,"num_waiting_reqs":1,"num_tokens":9},{"dp_rank":null,"num_reqs":0,"num_waiting_reqs":0,"num_tokens":0}]'
      )
    )
    expect(r.rows.map((x) => x.dpRank)).toEqual([0, 1])
    expect(tags(r)).toEqual(["DefaultedIdentity", "DefaultedIdentity"])
  })
  it("an entry without dp_rank that lands on a reported rank makes it a duplicate (unknown), never a silent merge", () => {
    const rows = ok(decodeLedger('{"loads":[{"dp_rank":1,"num_running_reqs":1},{"num_running_reqs":2}]}'))
    expect(rows).toEqual([
      { dpRank: 1, unknown: { reason: "duplicate-rank", message: "dp_rank 1 reported 2 times" } }
    ])
  })
  it("a bad rank is an error naming it (the row could not be attributed)", () => {
    expect(err(decodeLedger('{"loads":[{"dp_rank":-1,"num_running_reqs":1}]}')).path).toBe(
      "$.loads[0].dp_rank"
    )
    expect(err(decodeLedger('[["LoadStat",1,2,3,4,-2]]')).path).toBe("$[0][5]")
  })
  it("unlabelled samples and bare logger lines are rank 0, with a notice", () => {
    const m = ok(decodeLedgerReport("vllm:num_requests_running 4\n", "vllm-metrics"))
    expect(m.rows).toEqual([{ dpRank: 0, numRunningReqs: 4 }])
    expect(tags(m)).toEqual(["DefaultedIdentity"])
  })
})

describe("decode everything the engines emit", () => {
  it("a scrape of only sglang:num_retracted_reqs and sglang:num_paused_reqs on 8 ranks gives 8 rows", () => {
    const text = Array.from(
      { length: 8 },
      (_, i) =>
        `sglang:num_retracted_reqs{dp_rank="${i}",model_name="m"} ${i % 3}\nsglang:num_paused_reqs{dp_rank="${i}",model_name="m"} ${i === 5 ? 2 : 0}`
    ).join("\n")
    const rows = ok(decodeLedger(text))
    expect(rows).toHaveLength(8)
    expect(rows[4]).toEqual({ dpRank: 4, numRetractedReqs: 1, numPausedReqs: 0 })
    expect(rows[5]!.numPausedReqs).toBe(2)
  })
  it("2026 /v1/loads: queues (paused, retracted, prealloc_ready), num_prealloc_ready_tokens, kv_capacity, PD queues, memory", () => {
    const body = {
      timestamp: "2026-10-07T10:00:00+00:00",
      server_monotonic_s: 99.5,
      loads: [
        {
          timestamp: 1791417180.1,
          snapshot_monotonic_s: 99.4,
          dp_rank: 0,
          num_running_reqs: 1,
          num_waiting_reqs: 2,
          num_waiting_uncached_tokens: 700,
          num_total_tokens: 30000,
          num_prealloc_ready_tokens: 512,
          queues: { waiting: 2, grammar: 1, paused: 3, retracted: 4, prealloc_ready: 5 },
          disaggregation: { mode: "decode", decode_prealloc_queue_reqs: 6 },
          memory: { weight_gb: 15.2, kv_cache_gb: 52.1, graph_gb: 1.2, token_capacity: 409600 },
          kv_capacity: { full_available_tokens: 120000, full_evictable_tokens: 3000 },
          future_key: 1
        }
      ]
    }
    const r = ok(decodeLedgerReport(JSON.stringify(body)))
    expect(r.rows).toEqual([
      {
        dpRank: 0,
        timestamp: 1791417180.1,
        numRunningReqs: 1,
        numWaitingReqs: 2,
        numWaitingUncachedTokens: 700,
        numTotalTokens: 30000,
        numPreallocReadyTokens: 512,
        numGrammarQueueReqs: 1,
        numPausedReqs: 3,
        numRetractedReqs: 4,
        numPreallocReadyReqs: 5,
        numDecodePreallocQueueReqs: 6,
        tokenCapacity: 409600,
        kvAvailableTokens: 120000,
        kvEvictableTokens: 3000
      } satisfies RankLoad
    ])
    // the PD queues the wire did not carry stay absent (the Schema's defaults are not read)
    expect(r.rows[0]).not.toHaveProperty("numDecodeTransferQueueReqs")
    expect(r.notices).toEqual([
      {
        _tag: "UnknownField",
        field: "future_key",
        entries: 1,
        message: "/v1/loads entry key future_key (in 1 entries) is not read"
      }
    ])
  })
  it("a 2026 key alone makes the entry v3 (never dropped by an older era's schema)", () => {
    for (const entry of [
      '{"dp_rank":0,"kv_capacity":{"full_available_tokens":9}}',
      '{"dp_rank":0,"num_prealloc_ready_tokens":9}',
      '{"dp_rank":0,"snapshot_monotonic_s":1.5,"num_prealloc_ready_tokens":9}'
    ]) {
      const row = ok(decodeLedger(`{"loads":[${entry}]}`))[0]!
      expect(row.kvAvailableTokens ?? row.numPreallocReadyTokens).toBe(9)
    }
  })
  it("num_waiting_reqs and queues.waiting that disagree: the flat field wins, with an AmbiguousSeries notice", () => {
    const r = ok(
      decodeLedgerReport(
        '{"loads":[{"dp_rank":0,"num_waiting_reqs":2,"queues":{"waiting":7,"grammar":0,"paused":0,"retracted":0}}]}'
      )
    )
    expect(r.rows[0]!.numWaitingReqs).toBe(2)
    expect(r.notices[0]).toMatchObject({
      _tag: "AmbiguousSeries",
      field: "numWaitingReqs",
      used: "num_waiting_reqs",
      ignored: "queues.waiting"
    })
  })
  it("vLLM V0 logger line with GPU and CPU KV usage; Pending is waiting, Swapped is read", () => {
    const line =
      "INFO 06-12 10:00:00 metrics.py:345] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 12.1 tokens/s, Running: 2 reqs, Swapped: 1 reqs, Pending: 7 reqs, GPU KV cache usage: 45.3%, CPU KV cache usage: 0.5%.\n"
    expect(ok(decodeLedger(line))).toEqual([
      {
        dpRank: 0,
        numRunningReqs: 2,
        numWaitingReqs: 7,
        numSwappedReqs: 1,
        kvCacheUsage: 0.453,
        cpuKvCacheUsage: 0.005,
        avgPromptThroughputTokensPerSecond: 0,
        avgGenerationThroughputTokensPerSecond: 12.1
      }
    ])
  })
  it("vLLM per-engine histograms keep both engines; the histogram is named in a notice", () => {
    const text = [
      "# TYPE vllm:num_requests_running gauge",
      'vllm:num_requests_running{engine="0",model_name="m"} 3',
      "# TYPE vllm:iteration_tokens_total histogram",
      'vllm:iteration_tokens_total_bucket{engine="0",le="1.0",model_name="m"} 2',
      'vllm:iteration_tokens_total_bucket{engine="1",le="1.0",model_name="m"} 5',
      'vllm:iteration_tokens_total_count{engine="1",model_name="m"} 5',
      'vllm:num_preemptions_total{engine="1",model_name="m"} 0',
      ""
    ].join("\n")
    const r = ok(decodeLedgerReport(text))
    expect(r.rows).toEqual([{ dpRank: 0, numRunningReqs: 3 }, { dpRank: 1 }])
    expect(r.notices.map((n) => ("series" in n ? n.series : n._tag))).toEqual([
      "vllm:iteration_tokens_total",
      "vllm:num_preemptions_total"
    ])
  })
  it("both vLLM KV gauges disagreeing: kv_cache_usage_perc wins, with a notice", () => {
    const r = ok(
      decodeLedgerReport(
        'vllm:kv_cache_usage_perc{engine="0"} 0.5\nvllm:gpu_cache_usage_perc{engine="0"} 0.4\n'
      )
    )
    expect(r.rows).toEqual([{ dpRank: 0, kvCacheUsage: 0.5 }])
    expect(tags(r)).toEqual(["AmbiguousSeries"])
  })
})

describe("a KV usage above 1 is no fraction: the rank is unknown (invalid-number), never 42.7 full", () => {
  it("a vLLM gauge scaled as a percentage, and an SGLang token_usage above 1", () => {
    const r = ok(
      decodeLedgerReport(
        'vllm:gpu_cache_usage_perc{engine="0"} 42.7\nvllm:gpu_cache_usage_perc{engine="1"} 0.427\nvllm:num_requests_running{engine="0"} 3\nvllm:num_requests_running{engine="1"} 3\n'
      )
    )
    expect(r.rows).toEqual([
      {
        dpRank: 0,
        unknown: {
          reason: "invalid-number",
          message: "kvCacheUsage is 42.7, above 1 (a fraction of the KV pool, 0..1)"
        }
      },
      { dpRank: 1, numRunningReqs: 3, kvCacheUsage: 0.427 }
    ])
    expect(tags(r)).toEqual(["UnknownRank"])
    const v1 = ok(decodeLedger('{"loads":[{"dp_rank":0,"token_usage":1.0},{"dp_rank":1,"token_usage":1.5}]}'))
    expect(v1.map((x) => x.unknown?.reason ?? x.kvCacheUsage)).toEqual([1, "invalid-number"])
  })
})

describe("/get_load entries lacking a count: partial rows, as /v1/loads entries", () => {
  it("one entry without num_tokens keeps every rank, with that field absent (was: the whole body refused)", () => {
    const body = JSON.stringify([
      { dp_rank: 0, num_reqs: 3, num_waiting_reqs: 1, num_tokens: 50 },
      { dp_rank: 1, num_reqs: 4, num_waiting_reqs: 0 },
      { dp_rank: 2, num_reqs: 2, num_tokens: 70 }
    ])
    expect(ok(decodeLedger(body, "get-load"))).toEqual([
      { dpRank: 0, numRunningReqs: 2, numWaitingReqs: 1, numTotalTokens: 50 },
      { dpRank: 1, numRunningReqs: 4, numWaitingReqs: 0 },
      // running is num_reqs - num_waiting_reqs: without waiting it is not known either
      { dpRank: 2, numTotalTokens: 70 }
    ])
    // the same entries as /v1/loads entries lacking the same counts read alike
    const v1 = JSON.stringify({
      loads: [
        { dp_rank: 1, num_running_reqs: 4, num_waiting_reqs: 0 },
        { dp_rank: 2, num_total_tokens: 70 }
      ]
    })
    expect(ok(decodeLedger(v1, "v1-loads"))).toEqual([
      { dpRank: 1, numRunningReqs: 4, numWaitingReqs: 0 },
      { dpRank: 2, numTotalTokens: 70 }
    ])
  })
  it("a null count is absent too; a key this version does not read is named in an UnknownField notice", () => {
    const r = ok(
      decodeLedgerReport(
        JSON.stringify([
          {
            rid: null,
            http_worker_ipc: null,
            dp_rank: 0,
            num_reqs: 3,
            num_waiting_reqs: null,
            num_tokens: 9,
            ts_tic: 1.5
          },
          { dp_rank: 1, num_reqs: 1, num_waiting_reqs: 0, num_tokens: 4, direct_sum_num_tokens: 4 }
        ]),
        "get-load"
      )
    )
    expect(r.rows).toEqual([
      { dpRank: 0, numTotalTokens: 9 },
      { dpRank: 1, numRunningReqs: 1, numWaitingReqs: 0, numTotalTokens: 4 }
    ])
    expect(r.notices).toEqual([
      {
        _tag: "UnknownField",
        field: "direct_sum_num_tokens",
        entries: 1,
        message: "/get_load entry key direct_sum_num_tokens (in 1 entries) is not read"
      }
    ])
  })
  it("a count of the wrong type is still an error naming it; the public decodeGetLoad stays strict", () => {
    expect(err(decodeLedger('[{"dp_rank":0,"num_reqs":"3"}]', "get-load")).path).toBe("$[0].num_reqs")
    expect(err(decodeGetLoad([{ dp_rank: 0, num_reqs: 3, num_waiting_reqs: 1 }])).path).toBe(
      "$[0].num_tokens"
    )
  })
})

describe("never a silent empty success", () => {
  it("text that is no payload at all: UnknownFormat 'not a load payload', not the exposition parser's complaint", () => {
    for (const text of [
      "hello world\n",
      "def test():\n    assert 1\n",
      "<html><body>x</body></html>",
      "key: value\n"
    ]) {
      const e = err(decodeLedger(text))
      expect(e._tag).toBe("UnknownFormat")
      expect(e.message).toMatch(/^not a load payload: neither JSON, msgpack, vLLM logger lines/)
      expect(e.line).toBe(1)
    }
    // an exposition that breaks after valid lines is still an exposition: its syntax error stays
    const bad = err(
      decodeLedger(
        '# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{engine="0"} 1\noops here\n'
      )
    )
    expect(bad._tag).toBe("SyntaxError")
    expect(bad.line).toBe(3)
  })
  it("samples all of unmodelled series: a typed UnknownSeries error naming them", () => {
    const e = err(decodeLedger('sglang:foo_total{dp_rank="0"} 1\nsglang:bar{dp_rank="1"} 2\n'))
    expect(e._tag).toBe("UnknownSeries")
    expect(e.message).toContain("sglang:foo_total, sglang:bar")
  })
  it("declared without samples: no rows, and a notice per metric that says so", () => {
    const r = ok(
      decodeLedgerReport("# HELP vllm:num_requests_waiting w\n# TYPE vllm:num_requests_waiting gauge\n")
    )
    expect(r.rows).toEqual([])
    expect(r.notices.map(formatLedgerNotice)).toEqual([
      "notice: DeclaredWithoutSamples: vllm:num_requests_waiting is declared without samples: its field is absent on every rank (not 0)"
    ])
  })
  it("unknown ranks are notices too", () => {
    const r = ok(decodeLedgerReport('{"loads":[{"dp_rank":0,"num_total_tokens":-1}]}'))
    expect(r.rows).toEqual([
      {
        dpRank: 0,
        unknown: {
          reason: "negative-count",
          message:
            "$.loads[0].num_total_tokens: -1 is negative (a count, token number, ratio or time is never below 0)"
        }
      }
    ])
    expect(tags(r)).toEqual(["UnknownRank"])
  })
})

describe("a body cut off mid-line: the cut line is never read", () => {
  const promFiles = [
    "sglang_metrics_dp2_qwen3_0.6b__sglang_pr7597.prom",
    "sglang_metrics_dp8_deepseek_r1__aibrix_issue1614_part1.prom",
    "sglang_metrics_single_llama32_3b__sglang_pr1853.prom",
    "vllm_metrics_dp4_engine_imbalance__vllm_issue48808.prom",
    "vllm_metrics_qwen25coder32b__production_stack_issue318.prom"
  ]
  const rowsOrError = (r: ReturnType<typeof decodeLedgerReport>) =>
    r._tag === "Success" ? r.success.rows : r.failure._tag

  it("vLLM #48808's scrape cut inside engine 0's last value: that value is absent, not 1, with a CutLine notice", () => {
    const text = [
      "# TYPE vllm:num_requests_running gauge",
      'vllm:num_requests_running{engine="1",model_name="m"} 5.0',
      'vllm:num_requests_running{engine="0",model_name="m"} 1'
    ].join("\n")
    const r = ok(decodeLedgerReport(text, "vllm-metrics"))
    expect(r.rows).toEqual([{ dpRank: 1, numRunningReqs: 5 }])
    expect(r.notices).toEqual([
      {
        _tag: "CutLine",
        line: 3,
        message: "line 3 does not end with a newline, so it may be cut off: it was not read"
      }
    ])
    // auto-detected and through the record decoder alike
    expect(ok(decodeLedger(text))).toEqual([{ dpRank: 1, numRunningReqs: 5 }])
    // the same line with its newline is complete: read
    expect(ok(decodeLedger(`${text}\n`))).toEqual([
      { dpRank: 0, numRunningReqs: 1 },
      { dpRank: 1, numRunningReqs: 5 }
    ])
  })

  it("cut inside a label: the earlier lines are read, no SyntaxError for the whole body", () => {
    const text = 'sglang:num_running_reqs{dp_rank="0"} 4\nsglang:num_running_reqs{dp_ra'
    const r = ok(decodeLedgerReport(text))
    expect(r.rows).toEqual([{ dpRank: 0, numRunningReqs: 4 }])
    expect(tags(r)).toEqual(["CutLine"])
  })

  it("a text of one line with no newline is not read either: a SyntaxError on line 1, never a short value", () => {
    // a paste that starts with a sample, cut inside its value (fresh-user trial: aibrix #1614 cut at
    // byte 109 read genThroughput 141 where the page says 141.7546862896204)
    const text = fixture("payloads/sglang_metrics_dp2_qwen3_0.6b__sglang_pr7597.prom")
    const first = text.slice(0, text.indexOf("\n"))
    expect(first.endsWith("386.2656119271815")).toBe(true)
    const cut = first.slice(0, first.length - "6.2656119271815".length)
    for (const kind of ["auto", "sglang-metrics"] as const)
      expect(err(decodeLedger(cut, kind))).toEqual({
        _tag: "SyntaxError",
        line: 1,
        message:
          "line 1 does not end with a newline, so it may be cut off, and it is the only line: nothing complete to read (a load text ends with a newline)"
      })
    expect(ok(decodeLedger(`${first}\n`))).toContainEqual(
      expect.objectContaining({ genThroughput: 386.2656119271815 })
    )
    // the same for a logger line and a rank summary line; text that is no load line at all says so
    expect(err(decodeLedger("dp_rank=0  num_running_reqs=1")).line).toBe(1)
    expect(err(decodeLedger("<html><body>x</body></html>")).message).toMatch(/^not a load payload/)
    // a cut comment is no SyntaxError for the lines before it
    const r = ok(decodeLedgerReport('sglang:num_running_reqs{dp_rank="0"} 4\n# TYPE s'))
    expect(r.rows).toEqual([{ dpRank: 0, numRunningReqs: 4 }])
    expect(tags(r)).toEqual(["CutLine"])
  })

  it("one line because the lines end in CR alone, or because JSON was asked for as metrics text: the error says so", () => {
    const cr = 'sglang:num_running_reqs{dp_rank="0"} 4\rsglang:num_running_reqs{dp_rank="1"} 5\r'
    for (const kind of ["auto", "sglang-metrics"] as const) {
      const e = err(decodeLedger(cr, kind))
      expect(e.line).toBe(1)
      expect(e.message).toContain("carriage return alone (old Mac line endings)")
    }
    // the same lines with a line feed after each are read
    expect(ok(decodeLedger(cr.replaceAll("\r", "\r\n")))).toEqual([
      { dpRank: 0, numRunningReqs: 4 },
      { dpRank: 1, numRunningReqs: 5 }
    ])
    const json = '{"loads":[{"dp_rank":0,"num_running_reqs":2}]}'
    expect(err(decodeLedger(json, "vllm-metrics")).message).toContain(
      'the text is JSON, not vllm-metrics text (Prometheus exposition): decode it as "auto" or its JSON kind'
    )
    expect(ok(decodeLedger(json))).toEqual([{ dpRank: 0, numRunningReqs: 2 }])
  })

  it("real scrapes with old-Mac line endings (the last line feed kept or not), pretty JSON as metrics, an empty body: errors that say so", () => {
    // fresh-user trial: CR-only text ending in a line feed decoded to [] with an explicit kind and
    // 'not a load payload' with auto; multi-line JSON as metrics said 'expected a metric name'
    for (const f of promFiles) {
      const text = fixture(`payloads/${f}`)
      const crFinal = `${text.trimEnd().replaceAll("\r\n", "\n").replaceAll("\n", "\r")}\n`
      for (const kind of ["auto", f.startsWith("vllm") ? "vllm-metrics" : "sglang-metrics"] as const) {
        const e = err(decodeLedger(crFinal, kind))
        expect([f, kind, e._tag, e.message.includes("old Mac line endings")]).toEqual([
          f,
          kind,
          "SyntaxError",
          true
        ])
      }
    }
    const pretty = fixture("payloads/sglang_v1_loads_docs_example.json")
    expect(err(decodeLedger(pretty, "vllm-metrics")).message).toMatch(
      /^the text is JSON, not vllm-metrics text/
    )
    for (const kind of ["vllm-metrics", "sglang-metrics"] as const)
      expect(err(decodeLedger("", kind)).message).toMatch(/^the text is empty/)
    // a vLLM log may hold a progress bar's carriage returns: still read
    const log = fixture("payloads/vllm_logger_dp8_waiting_stack__vllm_issue36748.log")
    expect(ok(decodeLedger(`\rLoading 50%\rLoading 100%\n${log}`))).toEqual(ok(decodeLedger(log)))
  })

  it("comments and blank lines only, given as metrics text: no page (was an empty success)", () => {
    for (const kind of ["vllm-metrics", "sglang-metrics"] as const) {
      const e = err(decodeLedger("# just a comment\n\n# 2026-05-28 13:00:26\n", kind))
      expect([e._tag, e.message]).toEqual([
        "SyntaxError",
        `no sample and no # HELP / # TYPE line: the text is no ${kind} page`
      ])
    }
    // a page that declares its metrics without samples is one: absent values, no error
    expect(
      ok(
        decodeLedger(
          "# HELP vllm:num_requests_running x\n# TYPE vllm:num_requests_running gauge\n",
          "vllm-metrics"
        )
      )
    ).toEqual([])
  })

  it("load-stat bytes in their JSON form are read with kind load-stat too (were read as msgpack: 'Expected array')", () => {
    const bytes = new TextEncoder().encode('["LoadStat", 3, 2, 256, 4096, 0]')
    expect(ok(decodeLedger(bytes, "load-stat"))).toEqual(ok(decodeLedger(bytes)))
    expect(ok(decodeLedger(bytes)).length).toBe(1)
  })

  it("a UTF-8 byte order mark before any format is skipped", () => {
    const bom = "\uFEFF"
    expect(
      ok(decodeLedger(`${bom}[{"dp_rank":0,"num_reqs":3,"num_waiting_reqs":1,"num_tokens":9}]`))
    ).toEqual([{ dpRank: 0, numRunningReqs: 2, numWaitingReqs: 1, numTotalTokens: 9 }])
    expect(ok(decodeLedger(`${bom}sglang:num_running_reqs{dp_rank="0"} 4\n`))).toEqual([
      { dpRank: 0, numRunningReqs: 4 }
    ])
    const bytes = new TextEncoder().encode(`${bom}{"loads":[{"dp_rank":0,"num_running_reqs":2}]}`)
    expect(ok(decodeLedger(bytes))).toEqual([{ dpRank: 0, numRunningReqs: 2 }])
  })

  it("vLLM logger lines and rank summary lines cut mid-line: the cut line is left out, the rest read", () => {
    const log = fixture("payloads/vllm_logger_dp8_waiting_stack__vllm_issue36748.log")
    const lines = log.split("\n")
    // cut inside the second line's value of `Running:`
    const second = lines[1]!
    const at = second.indexOf("Running: ") + "Running: ".length + 1
    const r = ok(decodeLedgerReport(`${lines[0]}\n${second.slice(0, at)}`))
    expect(r.rows).toEqual(ok(decodeLedger(`${lines[0]}\n`)))
    expect(tags(r)).toEqual(["CutLine"])
  })

  it("every real scrape, log and rank summary cut at every position decodes as its complete lines do, with a CutLine notice when a sample line was cut", () => {
    let cuts = 0
    for (const f of [
      ...promFiles,
      "vllm_logger_dp8_waiting_stack__vllm_issue36748.log",
      "sglang_dp4_rank_snapshot__radixark_miles_pr2012.txt"
    ]) {
      const text = fixture(`payloads/${f}`)
      for (let p = 1; p < text.length; p++) {
        const cut = text.slice(0, p)
        const complete = cut.slice(0, cut.lastIndexOf("\n") + 1)
        const lastLine = cut.slice(complete.length).trim()
        const got = decodeLedgerReport(cut, "auto")
        cuts++
        // a cut first line leaves nothing complete: an error on line 1, never rows
        if (complete.trim() === "") {
          expect([p, got._tag]).toEqual([p, "Failure"])
          continue
        }
        expect(rowsOrError(got), `${f} cut at ${p}`).toEqual(
          rowsOrError(decodeLedgerReport(complete, "auto"))
        )
        const cutNotice = got._tag === "Success" && got.success.notices.some((n) => n._tag === "CutLine")
        if (got._tag === "Success") expect(cutNotice).toBe(lastLine !== "")
      }
    }
    expect(cuts).toBeGreaterThan(4000)
  })

  it("a single scrape cut anywhere never carries a value its whole text does not (absent, never wrong)", () => {
    for (const f of promFiles.filter((f) => !f.includes("48808"))) {
      const text = fixture(`payloads/${f}`)
      const whole = ok(decodeLedger(text)) as unknown as ReadonlyArray<Record<string, unknown>>
      for (let p = 1; p < text.length; p++) {
        const got = decodeLedger(text.slice(0, p))
        if (got._tag === "Failure") continue
        for (const row of got.success as unknown as ReadonlyArray<Record<string, unknown>>) {
          const full = whole.find((w) => w["dpRank"] === row["dpRank"])
          for (const [k, v] of Object.entries(row)) expect(full?.[k], `${f} cut at ${p}: ${k}`).toEqual(v)
        }
      }
    }
  })
})
