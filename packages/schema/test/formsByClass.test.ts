/**
 * Issue 32 item 1, the forms with no fixture file or no generated property before: a scheduler log
 * of a PD / DP-attention deployment (`[DP3 TP0 EP1]` prefixes, the PD fields), prefill batch lines
 * generated from the format, and vLLM pages where some engines carry only counters and histograms.
 */
import { readFileSync } from "node:fs"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { decodeLedgerReport, type RankLoad } from "../src/index.js"

const fixture = (p: string) => readFileSync(new URL(`./fixtures/${p}`, import.meta.url), "utf8")
const ok = (text: string, kind?: Parameters<typeof decodeLedgerReport>[1]) => {
  const r = decodeLedgerReport(text, kind)
  if (r._tag === "Failure") throw new Error(`${r.failure._tag}: ${r.failure.message}`)
  return r.success
}

describe("SGLang scheduler log of a PD deployment with DP attention (fixture)", () => {
  it("one row per DP rank from the latest line carrying each field; prefixes with TP / EP / PP parts", () => {
    const r = ok(fixture("sglang/scheduler_pd_dp_attention.log"))
    const byRank = new Map(r.rows.map((x) => [x.dpRank, x]))
    expect(r.rows.map((x) => x.dpRank)).toEqual([0, 1, 2, 3])
    expect(byRank.get(3)).toMatchObject({
      numRunningReqs: 26,
      numWaitingReqs: 5,
      numDecodePreallocQueueReqs: 7,
      numDecodeTransferQueueReqs: 4,
      numDecodeRetractedQueueReqs: 2,
      preAllocatedUsage: 0.31,
      genThroughput: 3101.5,
      tokenUsage: 0.84
    })
    // the later decode line of DP1 wins
    expect(byRank.get(1)).toMatchObject({
      numRunningReqs: 12,
      numDecodeTransferQueueReqs: 1,
      genThroughput: 1702.4
    })
    // DP0's prefill line: the bootstrap and in-flight queues of PD prefill
    expect(byRank.get(0)).toMatchObject({ numPrefillBootstrapQueueReqs: 4, numPrefillInflightQueueReqs: 2 })
    expect(byRank.get(2)).toMatchObject({ numRunningReqs: 0, genThroughput: 0 })
    const unknown = r.notices.flatMap((n) => (n._tag === "UnknownField" ? [n.field] : []))
    expect(unknown).toEqual(expect.arrayContaining(["cuda graph", "accept len", "accept rate"]))
  })
})

// prefill items as `log_prefill_stats` prints them: [wire key, row field(s), integer?]
type Item = readonly [string, ReadonlyArray<keyof RankLoad>, "int" | "frac"]
const prefill: ReadonlyArray<Item> = [
  ["#new-seq", [], "int"],
  ["#new-token", [], "int"],
  ["#cached-token", [], "int"],
  ["token usage", ["tokenUsage", "kvCacheUsage"], "frac"],
  ["#running-req", ["numRunningReqs"], "int"],
  ["#queue-req", ["numWaitingReqs"], "int"]
]
const pdPrefill: ReadonlyArray<Item> = [
  ["#prealloc-req", ["numPrefillBootstrapQueueReqs"], "int"],
  ["#inflight-req", ["numPrefillInflightQueueReqs"], "int"]
]
const value = (k: Item[2]) =>
  k === "int"
    ? fc.nat({ max: 1_000_000 }).map((n) => [String(n), n] as const)
    : fc.nat({ max: 100 }).map((n) => [(n / 100).toFixed(2), Number((n / 100).toFixed(2))] as const)

describe("SGLang prefill batch lines generated from the format", () => {
  it("every field whatever the prefix parts, PD queues, throughput and extras, item order, line ending", () => {
    fc.assert(
      fc.property(
        fc
          .record({
            dp: fc.nat({ max: 63 }),
            tp: fc.option(fc.nat({ max: 7 }), { nil: undefined }),
            pp: fc.option(fc.nat({ max: 3 }), { nil: undefined }),
            ep: fc.option(fc.nat({ max: 63 }), { nil: undefined }),
            time: fc.boolean(),
            pd: fc.boolean(),
            throughput: fc.boolean(),
            extra: fc.array(
              fc.tuple(
                fc.constantFrom("queue time (ms)", "#bootstrap-req", "cuda graph", "est. tflops"),
                fc.nat({ max: 999 })
              ),
              { maxLength: 2 }
            ),
            shuffle: fc.boolean(),
            crlf: fc.boolean(),
            trailing: fc.boolean()
          })
          .chain((l) => {
            const items = [...prefill, ...(l.pd ? pdPrefill : [])]
            return fc.tuple(fc.constant(l), fc.constant(items), fc.tuple(...items.map((it) => value(it[2]))))
          }),
        ([l, items, values]) => {
          const prefix = [l.time ? "2026-05-27 20:14:39" : "", `DP${l.dp}`]
          if (l.tp !== undefined) prefix.push(`TP${l.tp}`)
          if (l.pp !== undefined) prefix.push(`PP${l.pp}`)
          if (l.ep !== undefined) prefix.push(`EP${l.ep}`)
          const printed = items.map((it, i) => `${it[0]}: ${values[i]![0]}`)
          if (l.throughput) printed.push("input throughput (token/s): 15000.00")
          for (const [k, v] of l.extra) printed.push(`${k}: ${v}`)
          if (l.shuffle) printed.reverse()
          const text = `[${prefix.join(" ").trim()}] Prefill batch, ${printed.join(", ")}${l.trailing ? ", " : ""}${l.crlf ? "\r\n" : "\n"}`
          const r = ok(text)
          const expected: Record<string, number> = { dpRank: l.dp }
          items.forEach((it, i) => {
            for (const f of it[1]) expected[f] = values[i]![1]
          })
          expect(r.rows).toEqual([expected])
          const reported = r.notices.flatMap((n) => (n._tag === "UnknownField" ? [n.field] : []))
          for (const [k] of l.extra) expect(reported).toContain(k)
        }
      ),
      { numRuns: 200 }
    )
  })
})

describe("vLLM pages where some engines carry only counters and histograms", () => {
  it("a page with no load gauge at all still names its engines (rows without fields, the series reported)", () => {
    const r = ok(
      '# TYPE vllm:prompt_tokens counter\nvllm:prompt_tokens_total{engine="0",model_name="m"} 5\nvllm:prompt_tokens_total{engine="1",model_name="m"} 7\n',
      "vllm-metrics"
    )
    expect(r.rows).toEqual([{ dpRank: 0 }, { dpRank: 1 }])
    expect(r.notices.map((n) => n._tag)).toEqual(["UnknownSeries"])
    // with no engine named there is nothing to show: still the error naming the source form
    const none = decodeLedgerReport("vllm:prompt_tokens_total 5\n", "vllm-metrics")
    expect(none._tag === "Failure" && none.failure.message).toBe(
      "no vLLM load series in the text; series not modelled: vllm:prompt_tokens_total"
    )
  })

  it("fixture: every engine named is a row, gauges where sent, the rest absent", () => {
    const r = ok(fixture("vllm/metrics_dp3_histograms_only_engine.prom"), "vllm-metrics")
    expect(r.rows).toEqual([
      { dpRank: 0, numRunningReqs: 12, numWaitingReqs: 1, kvCacheUsage: 0.42 },
      { dpRank: 1 },
      { dpRank: 2 }
    ])
  })

  it("generated: any engines with gauges, any with only counters / histograms (all of them too), any order: each engine once", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("gauges", "counter", "histogram", "both"), { minLength: 1, maxLength: 6 }),
        fc.boolean(),
        fc.boolean(),
        (engines, crlf, reverse) => {
          const families: Array<Array<string>> = [[], [], []]
          engines.forEach((form, e) => {
            const l = `engine="${e}",model_name="m"`
            if (form === "gauges") families[0]!.push(`vllm:num_requests_running{${l}} ${e + 1}`)
            if (form === "counter" || form === "both")
              families[1]!.push(`vllm:prompt_tokens_total{${l}} ${e * 100}`)
            if (form === "histogram" || form === "both")
              families[2]!.push(
                `vllm:time_to_first_token_seconds_bucket{${l},le="+Inf"} ${e}`,
                `vllm:time_to_first_token_seconds_count{${l}} ${e}`,
                `vllm:time_to_first_token_seconds_sum{${l}} ${e / 2}`
              )
          })
          const heads = [
            "# TYPE vllm:num_requests_running gauge",
            "# TYPE vllm:prompt_tokens counter",
            "# TYPE vllm:time_to_first_token_seconds histogram"
          ]
          const blocks = heads.map((h, i) => [h, ...(reverse ? [...families[i]!].reverse() : families[i]!)])
          const text = `${blocks.flat().join(crlf ? "\r\n" : "\n")}${crlf ? "\r\n" : "\n"}`
          const r = ok(text, "vllm-metrics")
          expect(r.rows).toEqual(
            engines.map((form, e) =>
              form === "gauges" ? { dpRank: e, numRunningReqs: e + 1 } : { dpRank: e }
            )
          )
        }
      ),
      { numRuns: 200 }
    )
  })
})

describe("vLLM logger lines generated from the V1 format", () => {
  it("every engine's latest line, whatever the prefix, optional items, extra items and line ending", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            engine: fc.nat({ max: 15 }),
            running: fc.nat({ max: 999 }),
            waiting: fc.nat({ max: 999 }),
            kv: fc.nat({ max: 1000 }),
            prefix: fc.boolean(),
            hit: fc.boolean(),
            extra: fc.boolean()
          }),
          { minLength: 1, maxLength: 8 }
        ),
        fc.boolean(),
        (lines, crlf) => {
          const text = lines
            .map((l) => {
              const items = [
                "Avg prompt throughput: 16.5 tokens/s",
                "Avg generation throughput: 1157.2 tokens/s",
                `Running: ${l.running} reqs`,
                `Waiting: ${l.waiting} reqs`,
                `GPU KV cache usage: ${(l.kv / 10).toFixed(1)}%`
              ]
              if (l.hit) items.push("Prefix cache hit rate: 70.0%")
              if (l.extra) items.push("MM cache hit rate: 0.0%")
              const head = l.prefix ? "(APIServer pid=387731) INFO 03-11 06:16:52 [loggers.py:257] " : ""
              return `${head}Engine ${String(l.engine).padStart(3, "0")}: ${items.join(", ")}`
            })
            .join(crlf ? "\r\n" : "\n")
          const r = ok(`${text}${crlf ? "\r\n" : "\n"}`)
          const latest = new Map(lines.map((l) => [l.engine, l]))
          expect(r.rows.map((x) => [x.dpRank, x.numRunningReqs, x.numWaitingReqs, x.kvCacheUsage])).toEqual(
            [...latest.values()]
              .sort((a, b) => a.engine - b.engine)
              .map((l) => [l.engine, l.running, l.waiting, Number((l.kv / 1000).toFixed(3))])
          )
        }
      ),
      { numRuns: 200 }
    )
  })
})

describe("SMG /get_loads generated from WorkerLoadsResult's form", () => {
  it("several workers with ranks 0..n each, keys in any order, unknown keys named: one row per (worker, rank)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        fc.constantFrom("kv_transfer_latency_ms", "disagg_mode", "num_total_reqs", "future_field"),
        (fleet, reverse, extra) => {
          const order = <T>(xs: Array<T>) => (reverse ? xs.reverse() : xs)
          const workers = fleet.map((ranks, w) => ({
            worker: `http://w${w}:30000`,
            load: 10 * w,
            details: {
              timestamp: "2026-08-21T09:15:02.125Z",
              dp_rank_count: ranks,
              loads: order(
                Array.from({ length: ranks }, (_, d) =>
                  Object.fromEntries(
                    order([
                      ["dp_rank", d],
                      ["num_running_reqs", w * 10 + d],
                      ["num_waiting_reqs", d],
                      ["num_used_tokens", 100 * d],
                      ["max_total_num_tokens", 1000],
                      ["token_usage", d / 10],
                      [extra, extra === "disagg_mode" ? "decode" : 1]
                    ] as Array<[string, unknown]>)
                  )
                )
              )
            }
          }))
          const r = ok(JSON.stringify({ workers: order(workers) }), "smg-loads")
          expect(r.rows.length).toBe(fleet.reduce((a, b) => a + b, 0))
          for (const row of r.rows) {
            const w = Number(row.worker!.slice(8, -6))
            expect(row).toMatchObject({ numRunningReqs: w * 10 + row.dpRank, numWaitingReqs: row.dpRank })
            expect(row.unknown).toBeUndefined()
          }
          expect(r.notices.some((n) => n._tag === "UnknownField" && n.field === extra)).toBe(true)
        }
      ),
      { numRuns: 150 }
    )
  })
})
