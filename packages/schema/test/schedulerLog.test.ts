/**
 * SGLang scheduler log lines through `decodeSglangSchedulerLog` and `decodeLedgerReport`: one
 * fixture per form, each written from the upstream format strings (sgl-project/sglang
 * `python/sglang/srt/managers/scheduler_metrics_mixin.py` at 01bb3c807f7e62c19a31de7548837505488c2b64,
 * `log_decode_stats` / `log_prefill_stats`; the v0.4 `scheduler.py` `Decode batch.` form), and a
 * property test generating lines from those formats.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { decodeLedger, decodeLedgerReport, decodeSglangSchedulerLog, type RankLoad } from "../src/index.js"

const rows = (text: string): ReadonlyArray<RankLoad> => {
  const r = decodeLedger(text)
  if (r._tag === "Failure") throw new Error(r.failure.message)
  return r.success
}

// each form: the line, the row it gives (`auto` and `sglang-log` alike)
const forms: ReadonlyArray<readonly [string, string, RankLoad]> = [
  [
    "v0.4 decode (`Decode batch.`, no trailing comma)",
    "[2024-11-30 05:10:04 TP0] Decode batch. #running-req: 1, #token: 234, token usage: 0.00, gen throughput (token/s): 147.64, #queue-req: 0",
    {
      dpRank: 0,
      numRunningReqs: 1,
      numUsedTokens: 234,
      tokenUsage: 0,
      kvCacheUsage: 0,
      genThroughput: 147.64,
      numWaitingReqs: 0
    }
  ],
  [
    "2025 prefill (`Prefill batch.`, trailing comma)",
    "[2025-09-03 05:49:04] Prefill batch. #new-seq: 1, #new-token: 115, #cached-token: 351, token usage: 0.02, #running-req: 0, #queue-req: 0,",
    { dpRank: 0, tokenUsage: 0.02, kvCacheUsage: 0.02, numRunningReqs: 0, numWaitingReqs: 0 }
  ],
  [
    "current decode with cuda graph",
    "[2026-05-27 20:14:38] Decode batch, #running-req: 18, #token: 16384, token usage: 0.71, cuda graph: True, gen throughput (token/s): 2520.18, #queue-req: 3, ",
    {
      dpRank: 0,
      numRunningReqs: 18,
      numUsedTokens: 16384,
      tokenUsage: 0.71,
      kvCacheUsage: 0.71,
      genThroughput: 2520.18,
      numWaitingReqs: 3
    }
  ],
  [
    "current decode, DP prefix with TP and EP, speculative, PD decode queues",
    "[2026-05-27 20:14:38 DP3 TP3 EP3] Decode batch, #running-req: 18, #token: 16384, token usage: 0.71, accept len: 2.40, accept rate: 0.84, pre-allocated usage: 0.28, #prealloc-req: 5, #transfer-req: 3, #retracted-req: 1, cuda graph: True, gen throughput (token/s): 2520.18, #queue-req: 3, ",
    {
      dpRank: 3,
      numRunningReqs: 18,
      numUsedTokens: 16384,
      tokenUsage: 0.71,
      kvCacheUsage: 0.71,
      preAllocatedUsage: 0.28,
      numDecodePreallocQueueReqs: 5,
      numDecodeTransferQueueReqs: 3,
      numDecodeRetractedQueueReqs: 1,
      genThroughput: 2520.18,
      numWaitingReqs: 3
    }
  ],
  [
    "current decode, forward iteration, cpu graph, bare `[DP2]` prefix",
    "[DP2] Decode batch [124], #running-req: 4, #token: 900, token usage: 0.05, cpu graph: False, gen throughput (token/s): 80.00, #queue-req: 0, ",
    {
      dpRank: 2,
      numRunningReqs: 4,
      numUsedTokens: 900,
      tokenUsage: 0.05,
      kvCacheUsage: 0.05,
      genThroughput: 80,
      numWaitingReqs: 0
    }
  ],
  [
    "current prefill, PD prefill queues, PP part",
    "[2026-05-27 20:14:39 DP1 TP2 PP0] Prefill batch, #new-seq: 2, #new-token: 8192, #cached-token: 1024, token usage: 0.40, #running-req: 6, #queue-req: 9, #prealloc-req: 4, #inflight-req: 2, input throughput (token/s): 15000.00, ",
    {
      dpRank: 1,
      tokenUsage: 0.4,
      kvCacheUsage: 0.4,
      numRunningReqs: 6,
      numWaitingReqs: 9,
      numPrefillBootstrapQueueReqs: 4,
      numPrefillInflightQueueReqs: 2
    }
  ],
  [
    "hybrid SWA decode: usage is the larger pool's",
    "[2026-05-27 20:14:40 DP0] Decode batch, #running-req: 2, #full token: 100, full token usage: 0.10, #swa token: 300, swa token usage: 0.30, cuda graph: True, gen throughput (token/s): 50.00, #queue-req: 0, ",
    {
      dpRank: 0,
      numRunningReqs: 2,
      genThroughput: 50,
      numWaitingReqs: 0,
      tokenUsage: 0.3,
      kvCacheUsage: 0.3,
      numUsedTokens: 300
    }
  ],
  [
    "per-DP list items (`#running-req per DP: [2, 2]`) stay one item each, reported",
    "[2026-05-27 20:14:42] Decode batch. #running-req: 4, #running-req per DP: [2, 2], #queue-req: 1,",
    { dpRank: 0, numRunningReqs: 4, numWaitingReqs: 1 }
  ],
  [
    "container-prefixed line (compose's `name | `)",
    "sglang-decode-1  | [2026-05-27 20:14:41 DP5 TP5] Decode batch, #running-req: 7, #token: 70, token usage: 0.01, cuda graph: True, gen throughput (token/s): 1.50, #queue-req: 2, ",
    {
      dpRank: 5,
      numRunningReqs: 7,
      numUsedTokens: 70,
      tokenUsage: 0.01,
      kvCacheUsage: 0.01,
      genThroughput: 1.5,
      numWaitingReqs: 2
    }
  ]
]

describe("SGLang scheduler log forms", () => {
  for (const [name, line, row] of forms)
    it(name, () => {
      expect(rows(`${line}\n`)).toEqual([row])
      const named = decodeLedger(`${line}\r\n`, "sglang-log")
      expect(named._tag === "Success" && named.success).toEqual([row])
    })

  it("is never read as JSON: a `[`-prefixed log line is a log", () => {
    const r = decodeLedgerReport("[2026-05-27 20:14:38 DP3] Decode batch, #running-req: x, \n")
    expect(r._tag === "Failure" && r.failure.message).toBe(
      "SGLang scheduler log, line 1: #running-req: 'x' is not a number (a decode batch line)"
    )
  })

  it("names the source form when the kind says log and the text is not", () => {
    const r = decodeLedger('{"loads":[]}\n', "sglang-log")
    expect(r._tag === "Failure" && r.failure.message).toBe(
      "not an SGLang scheduler log: no 'Decode batch' or 'Prefill batch' line in the text"
    )
  })

  it("keeps one row per DP rank, fields from the latest line carrying them; reports what it passed over", () => {
    const text = [
      "[t DP0 TP0] Decode batch, #running-req: 1, #token: 10, token usage: 0.01, cuda graph: True, gen throughput (token/s): 5.00, #queue-req: 0, ",
      "[t DP1 TP1] Decode batch, #running-req: 2, #token: 20, token usage: 0.02, cuda graph: True, gen throughput (token/s): 6.00, #queue-req: 1, ",
      "[t DP0 TP0] Prefill batch, #new-seq: 1, #new-token: 5, #cached-token: 0, token usage: 0.03, #running-req: 3, #queue-req: 4, ",
      "[t DP0 TP4] Decode batch, #running-req: 99, #token: 10, token usage: 0.01, cuda graph: True, gen throughput (token/s): 5.00, #queue-req: 0, ",
      "[t] Decode batch, #running-req: 77, #token: 10, token usage: 0.01, cuda graph: True, gen throughput (token/s): 5.00, #queue-req: 0, ",
      "[t DP0 TP0] INFO: 127.0.0.1 POST /generate 200"
    ].join("\n")
    const r = decodeLedgerReport(`${text}\n`)
    if (r._tag === "Failure") throw new Error(r.failure.message)
    expect(r.success.rows).toEqual([
      {
        dpRank: 0,
        numRunningReqs: 3,
        numUsedTokens: 10,
        tokenUsage: 0.03,
        kvCacheUsage: 0.03,
        genThroughput: 5,
        numWaitingReqs: 4
      },
      {
        dpRank: 1,
        numRunningReqs: 2,
        numUsedTokens: 20,
        tokenUsage: 0.02,
        kvCacheUsage: 0.02,
        genThroughput: 6,
        numWaitingReqs: 1
      }
    ])
    expect(
      r.success.notices.map((n) => `${n._tag}:${"field" in n ? n.field : "series" in n ? n.series : ""}`)
    ).toEqual([
      "UnknownField:cuda graph",
      "UnknownField:#new-seq",
      "UnknownField:#new-token",
      "UnknownField:#cached-token",
      "UnknownSeries:batch line without a DP rank",
      "UnknownSeries:batch line of a TP/PP peer",
      "UnknownSeries:other log line"
    ])
  })
})

// the format, item by item: [wire key, row field(s), value arbitrary, printed with 2 decimals?]
type Item = readonly [string, ReadonlyArray<keyof RankLoad>, "int" | "frac" | "rate"]
const decodeItems: ReadonlyArray<Item> = [
  ["#running-req", ["numRunningReqs"], "int"],
  ["#token", ["numUsedTokens"], "int"],
  ["token usage", ["tokenUsage", "kvCacheUsage"], "frac"]
]
const pdDecode: ReadonlyArray<Item> = [
  ["pre-allocated usage", ["preAllocatedUsage"], "frac"],
  ["#prealloc-req", ["numDecodePreallocQueueReqs"], "int"],
  ["#transfer-req", ["numDecodeTransferQueueReqs"], "int"],
  ["#retracted-req", ["numDecodeRetractedQueueReqs"], "int"]
]
const tail: ReadonlyArray<Item> = [
  ["gen throughput (token/s)", ["genThroughput"], "rate"],
  ["#queue-req", ["numWaitingReqs"], "int"]
]

const value = (k: Item[2]) =>
  k === "int"
    ? fc.nat({ max: 1_000_000 }).map((n) => [String(n), n] as const)
    : k === "frac"
      ? fc.nat({ max: 100 }).map((n) => [(n / 100).toFixed(2), Number((n / 100).toFixed(2))] as const)
      : fc.nat({ max: 10_000_000 }).map((n) => [(n / 100).toFixed(2), Number((n / 100).toFixed(2))] as const)

const line = fc.record({
  dp: fc.nat({ max: 63 }),
  tp: fc.option(fc.nat({ max: 7 }), { nil: undefined }),
  pp: fc.option(fc.nat({ max: 3 }), { nil: undefined }),
  ep: fc.option(fc.nat({ max: 63 }), { nil: undefined }),
  time: fc.boolean(),
  sep: fc.constantFrom(".", ","),
  iter: fc.option(fc.nat({ max: 99999 }), { nil: undefined }),
  pd: fc.boolean(),
  spec: fc.boolean(),
  shuffle: fc.boolean(),
  extra: fc.array(
    fc.tuple(
      fc.constantFrom("queue time (ms)", "#bootstrap-req", "est. tflops", "fwd occupancy"),
      fc.nat({ max: 999 })
    ),
    { maxLength: 2 }
  ),
  crlf: fc.boolean(),
  trailing: fc.boolean()
})

describe("SGLang scheduler log lines generated from the format", () => {
  it("decode every field whatever the prefix parts, optional parts, order, line ending or extras", () => {
    fc.assert(
      fc.property(
        line.chain((l) => {
          const items = [...decodeItems, ...(l.pd ? pdDecode : []), ...tail]
          return fc.tuple(fc.constant(l), fc.tuple(...items.map((it) => value(it[2]))), fc.constant(items))
        }),
        ([l, values, items]) => {
          const prefix = [l.time ? "2026-05-27 20:14:38" : "", `DP${l.dp}`]
          if (l.tp !== undefined) prefix.push(`TP${l.tp}`)
          if (l.pp !== undefined) prefix.push(`PP${l.pp}`)
          if (l.ep !== undefined) prefix.push(`EP${l.ep}`)
          const printed: Array<string> = items.map((it, i) => `${it[0]}: ${values[i]![0]}`)
          if (l.spec) printed.splice(3, 0, "accept len: 2.40", "accept rate: 0.84")
          printed.splice(printed.length - 2, 0, "cuda graph: True")
          for (const [k, v] of l.extra) printed.push(`${k}: ${v}`)
          if (l.shuffle) printed.reverse()
          const text = `[${prefix.join(" ").trim()}] Decode batch${l.iter === undefined ? "" : ` [${l.iter}]`}${l.sep} ${printed.join(", ")}${l.trailing ? ", " : ""}${l.crlf ? "\r\n" : "\n"}`
          const r = decodeLedgerReport(text)
          if (r._tag === "Failure") throw new Error(`${r.failure.message}: ${JSON.stringify(text)}`)
          const expected: Record<string, number> = { dpRank: l.dp }
          items.forEach((it, i) => {
            for (const f of it[1]) expected[f] = values[i]![1]
          })
          expect(r.success.rows).toEqual([expected])
          const reported = r.success.notices.flatMap((n) => (n._tag === "UnknownField" ? [n.field] : []))
          for (const [k] of l.extra) expect(reported).toContain(k)
          expect(reported).toContain("cuda graph")
          const parsed = decodeSglangSchedulerLog(text)
          expect(parsed._tag === "Success" && parsed.success.lines[0]!.tpRank).toBe(l.tp)
        }
      ),
      { numRuns: 300 }
    )
  })
})
