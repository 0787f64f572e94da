/**
 * Issue 11, item 3: every public decoder answers hostile input with a typed error (or an
 * `unknown` row in the ledger), never a throw, a prototype lookup, a negative load or unbounded work.
 */
import { encode } from "@msgpack/msgpack"
import { describe, expect, it } from "vitest"
import {
  decodeCoordinatorUpdate,
  decodeEngineCounts,
  decodeGetLoad,
  decodeLedger,
  decodeLoadSnapshot,
  decodeLoadStatPayload,
  decodeMlpSyncRows,
  decodeSchedulerStats,
  decodeSglangMetrics,
  decodeV1Loads,
  decodeVllmLoggerLines,
  decodeVllmMetrics,
  isoToEpochSeconds,
  loadStatFromTagged
} from "../src/index.js"
import { err, ok } from "./fixtures.js"

const BIG = 2 ** 53 + 2

describe("negatives, NaN, ±Inf and integers above 2^53 in every public decoder", () => {
  const cases: ReadonlyArray<readonly [string, (v: number) => { _tag: string }]> = [
    ["decodeV1Loads", (v) => decodeV1Loads({ loads: [{ dp_rank: 0, num_running_reqs: v }] })],
    [
      "decodeV1Loads (float field)",
      (v) => decodeV1Loads({ loads: [{ dp_rank: 0, token_usage: v === BIG ? 1e300 : v }] })
    ],
    [
      "decodeV1Loads (section)",
      (v) => decodeV1Loads({ loads: [{ queues: { waiting: v, grammar: 0, paused: 0, retracted: 0 } }] })
    ],
    ["decodeGetLoad", (v) => decodeGetLoad([{ num_reqs: 1, num_waiting_reqs: v, num_tokens: 0 }])],
    ["loadStatFromTagged", (v) => loadStatFromTagged(["LoadStat", v, 0, 0, 0, 0])],
    ["decodeLoadStatPayload", (v) => decodeLoadStatPayload(encode(["LoadStat", 0, 0, v, 0, 0]))],
    ["decodeEngineCounts", (v) => decodeEngineCounts([v, 0, 0.5])],
    ["decodeCoordinatorUpdate", (v) => decodeCoordinatorUpdate([[[0, v, 0.5]], 0, true])],
    ["decodeCoordinatorUpdate (wave)", (v) => decodeCoordinatorUpdate([null, v, true])],
    ["decodeMlpSyncRows", (v) => decodeMlpSyncRows([[v, 0, 1, 0, 1, 2, 1, 0]])],
    ["decodeLoadSnapshot", (v) => decodeLoadSnapshot("shm-v3")({ num_total_tokens: v })],
    [
      "decodeSchedulerStats",
      (v) =>
        decodeSchedulerStats({
          num_running_reqs: 1,
          num_waiting_reqs: 0,
          kv_cache_usage: v === BIG ? 1e300 : v,
          step_counter: 0,
          current_wave: 0
        })
    ],
    ["decodeVllmMetrics", (v) => decodeVllmMetrics(`vllm:num_requests_running{engine="0"} ${v}\n`)],
    ["decodeSglangMetrics", (v) => decodeSglangMetrics(`sglang:num_running_reqs{dp_rank="0"} ${v}\n`)]
  ]
  for (const [name, f] of cases)
    it(`${name}: -1, NaN, Infinity and 2^53+2 are typed errors`, () => {
      for (const v of [-1, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, BIG]) {
        const r = f(v)
        expect(r._tag, `${name}(${v})`).toBe("Failure")
      }
      expect(f(3)._tag).toBe("Success")
    })
  it("decodeVllmLoggerLines: a count above 2^53 is an error with its line", () => {
    const e = err(
      decodeVllmLoggerLines("Avg prompt throughput: 1.0 tokens/s, Running: 99999999999999999 reqs")
    )
    expect(e.line).toBe(1)
  })
  it("decodeLedger: a bad number makes its rank unknown in every format, never a load", () => {
    expect(
      ok(decodeLedger('[{"dp_rank":0,"num_reqs":1,"num_waiting_reqs":-1,"num_tokens":0}]'))[0]!.unknown
        ?.reason
    ).toBe("negative-count")
    expect(ok(decodeLedger('[["LoadStat",1,-1,3,4,2]]'))).toEqual([
      {
        dpRank: 2,
        unknown: {
          reason: "negative-count",
          message: "$[0][2]: -1 is negative (a count, token number, ratio or time is never below 0)"
        }
      }
    ])
    expect(ok(decodeLedger('sglang:num_running_reqs{dp_rank="3"} -1\n'))[0]).toMatchObject({
      dpRank: 3,
      unknown: { reason: "negative-count" }
    })
    expect(ok(decodeLedger("dp_rank=1 num_running_reqs=-1\n"))[0]!.unknown?.reason).toBe("negative-count")
    expect(ok(decodeLedger("dp_rank=1 num_running_reqs=99999999999999999999\n"))[0]!.unknown?.reason).toBe(
      "invalid-number"
    )
    expect(
      ok(decodeLedger('{"loads":[{"dp_rank":0,"num_total_tokens":9007199254740993}]}'))[0]!.unknown?.reason
    ).toBe("invalid-number")
    expect(err(decodeLedger('vllm:num_requests_running{engine="0"} NaN\n'))._tag).toBe("InvalidField")
  })
})

describe("names are data", () => {
  const names = ["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf"]
  it("metric and label names that are Object.prototype members neither leak into rows nor count as repeated", () => {
    for (const n of names) {
      const text = `${n}{dp_rank="0"} 7\nsglang:num_running_reqs{dp_rank="0",${n}="a"} 2\n`
      const rows = ok(decodeLedger(text))
      expect(rows).toEqual([{ dpRank: 0, numRunningReqs: 2 }])
      expect(ok(decodeSglangMetrics(`sglang:num_running_reqs{${n}="a",dp_rank="1"} 2\n`)).records).toEqual([
        { dpRank: 1, numRunningReqs: 2 }
      ])
    }
    // a label really repeated is still an error
    expect(
      err(decodeSglangMetrics('sglang:num_running_reqs{constructor="a",constructor="b"} 2\n')).message
    ).toContain("repeated")
  })
  it("JSON keys and summary keys named like prototype members are ignored, never read", () => {
    for (const n of names) {
      const rows = ok(
        decodeLedger(`{"${n}":1,"loads":[{"dp_rank":0,"${n}":{"num_running_reqs":5},"num_running_reqs":1}]}`)
      )
      expect(rows).toEqual([{ dpRank: 0, numRunningReqs: 1 }])
      expect(ok(decodeLedger(`dp_rank=0 num_running_reqs=1 ${n.toLowerCase()}=5\n`))).toEqual([
        { dpRank: 0, numRunningReqs: 1 }
      ])
    }
  })
})

describe("bounded work", () => {
  it("hostile nesting is a LimitExceeded error, never a stack overflow", () => {
    expect(err(decodeLedger("[".repeat(11200)))._tag).toBe("LimitExceeded")
    expect(err(decodeLedger(`{"loads":${"[".repeat(100_000)}`))._tag).toBe("LimitExceeded")
    const deep: Array<unknown> = []
    let cur = deep
    for (let i = 0; i < 100_000; i++) {
      const next: Array<unknown> = []
      cur.push(next)
      cur = next
    }
    // an object graph handed in directly: the opaque windows are checked iteratively
    expect(decodeV1Loads({ loads: [{ dp_rank: 0, decode_metrics_windows: deep }] })._tag).toBe("Failure")
    const cyclic: Record<string, unknown> = {}
    cyclic["self"] = cyclic
    expect(decodeV1Loads({ loads: [{ dp_rank: 0, decode_metrics_windows: cyclic }] })._tag).toBe("Failure")
  })
  it("a valid 200 KB+ /v1/loads with deeply nested decode_metrics_windows decodes in time linear in its size", () => {
    const nest = (n: number): unknown => {
      let v: unknown = 0.5
      for (let i = 0; i < n; i++) v = { w: v, q: [1, 2, 3] }
      return v
    }
    const nested = JSON.stringify({
      loads: Array.from({ length: 8 }, (_, i) => ({
        dp_rank: i,
        num_running_reqs: 1,
        decode_metrics_windows: Array.from({ length: 12 }, () => nest(200))
      }))
    })
    expect(nested.length).toBeGreaterThan(200_000)
    const best = (f: () => unknown) => {
      let m = Number.POSITIVE_INFINITY
      for (let k = 0; k < 7; k++) {
        const t0 = performance.now()
        f()
        m = Math.min(m, performance.now() - t0)
      }
      return m
    }
    expect(decodeLedger(nested)._tag).toBe("Success")
    // the irreducible cost is JSON.parse of the same text; decoding adds a linear walk. Generous
    // (best of 7 on a shared machine): the fault took 300-1300 ms, this takes ~7 ms unloaded
    const parse = best(() => JSON.parse(nested))
    expect(best(() => decodeLedger(nested))).toBeLessThan(8 * parse + 50)
  })
})

describe("calendar dates", () => {
  it("isoToEpochSeconds rejects dates and times that do not exist, and applies offsets", () => {
    expect(isoToEpochSeconds("2024-02-30T00:00:00Z")).toBeUndefined()
    expect(isoToEpochSeconds("2023-02-29T00:00:00Z")).toBeUndefined()
    expect(isoToEpochSeconds("2024-02-29T00:00:00Z")).toBe(Date.UTC(2024, 1, 29) / 1000)
    expect(isoToEpochSeconds("2024-04-31T00:00:00Z")).toBeUndefined()
    expect(isoToEpochSeconds("2024-01-15T24:00:00Z")).toBeUndefined()
    expect(isoToEpochSeconds("2024-01-15T10:60:00Z")).toBeUndefined()
    expect(isoToEpochSeconds("2024-13-01T00:00:00Z")).toBeUndefined()
    expect(isoToEpochSeconds("2024-01-15T10:30:00.123456-05:30")).toBeCloseTo(
      1705314600 + 5.5 * 3600 + 0.123456,
      6
    )
    // a /v1/loads envelope with an impossible date gives no fallback timestamp (absent, not wrong)
    expect(ok(decodeLedger('{"timestamp":"2024-02-30T00:00:00+00:00","loads":[{"dp_rank":0}]}'))).toEqual([
      { dpRank: 0 }
    ])
  })
})
