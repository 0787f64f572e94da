/**
 * assertSchemaLaws applied to every @loadledger/schema schema with its hand-written arbitrary, and
 * fuzzing of every decoder with arbitrary JSON, text and bytes.
 */
import * as L from "@loadledger/schema"
import { Effect, Result, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as A from "../src/Arbitraries.js"
import { assertDecoderTotal, assertSchemaLaws } from "../src/SchemaLaws.js"

const laws: ReadonlyArray<
  readonly [string, Schema.Codec<unknown, unknown, never, never>, fc.Arbitrary<unknown>]
> = [
  ["MemoryMetrics", L.MemoryMetrics, A.memoryMetrics],
  ["SpeculativeMetricsV1", L.SpeculativeMetricsV1, A.speculativeMetricsV1],
  ["SpeculativeMetricsV3", L.SpeculativeMetricsV3, A.speculativeMetricsV3],
  ["LoraMetrics", L.LoraMetrics, A.loraMetrics],
  ["DisaggregationMetrics", L.DisaggregationMetrics, A.disaggregationMetrics],
  ["QueueMetricsV1", L.QueueMetricsV1, A.queueMetricsV1],
  ["QueueMetricsV3", L.QueueMetricsV3, A.queueMetricsV3],
  ["LoadSnapshotV1", L.LoadSnapshotV1, A.loadSnapshotV1],
  ["LoadSnapshotV2", L.LoadSnapshotV2, A.loadSnapshotV2],
  ["LoadSnapshotV3", L.LoadSnapshotV3, A.loadSnapshotV3],
  ["LoadEntryV1", L.LoadEntryV1, A.loadEntryV1],
  ["LoadEntryV2", L.LoadEntryV2, A.loadEntryV2],
  ["LoadEntryV3", L.LoadEntryV3, A.loadEntryV3],
  ["V1LoadsAggregate", L.V1LoadsAggregate, A.v1LoadsAggregate],
  ["V1LoadsResponsePreShm", L.V1LoadsResponsePreShm, A.v1LoadsResponsePreShm],
  ["V1LoadsResponseShmV1", L.V1LoadsResponseShmV1, A.v1LoadsResponseShmV1],
  ["V1LoadsResponseShmV2", L.V1LoadsResponseShmV2, A.v1LoadsResponseShmV2],
  ["V1LoadsResponseShmV3", L.V1LoadsResponseShmV3, A.v1LoadsResponseShmV3],
  ["GetLoadEntry", L.GetLoadEntry, A.getLoadEntry],
  ["GetLoadResponse", L.GetLoadResponse, A.getLoadResponse],
  ["LoadStat", L.LoadStat, A.loadStat],
  ["LoadStatTagged", L.LoadStatTagged, A.loadStatTagged],
  ["MlpSyncBatchInfo", L.MlpSyncBatchInfo, A.mlpSyncBatchInfo],
  ["MlpSyncRows", L.MlpSyncRows, A.mlpSyncRows],
  ["EngineCounts", L.EngineCounts, A.engineCounts],
  ["CoordinatorUpdate", L.CoordinatorUpdate, A.coordinatorUpdate],
  ["SchedulerStats", L.SchedulerStats, A.schedulerStats],
  ["VllmEngineMetrics", L.VllmEngineMetrics, A.vllmEngineMetrics],
  ["SglangRankMetrics", L.SglangRankMetrics, A.sglangRankMetrics],
  ["VllmLoggerRecord", L.VllmLoggerRecord, A.vllmLoggerRecord]
] as never

describe("assertSchemaLaws on every schema", () => {
  for (const [name, schema, arb] of laws) {
    it(`${name}: generated values pass Schema.is; decode(encode(a)) = a`, () => {
      assertSchemaLaws(schema, arb, { numRuns: 200, seed: 42 })
    })
  }
  it("covers every exported schema of @loadledger/schema", () => {
    const exported = Object.entries(L)
      .filter(([, v]) => Schema.isSchema(v))
      .map(([k]) => k)
      .sort()
    expect(exported).toEqual(laws.map(([n]) => n).sort())
  })
  it("fails on an arbitrary that produces invalid values (the law can fail)", () => {
    expect(
      failure(() => assertSchemaLaws(L.EngineCounts, fc.tuple(fc.nat(), fc.nat(), fc.constant(2)) as never))
    ).toMatch(/rejected by Schema.is/)
  })
  it("fails on a lossy encoding (decode after encode not the identity)", () => {
    const lossy = Schema.Struct({
      n: Schema.Finite.pipe(Schema.withDecodingDefaultKey(Effect0, { encodingStrategy: "omit" }))
    })
    expect(
      failure(() => assertSchemaLaws(lossy as never, fc.record({ n: fc.integer({ min: 1 }) }) as never))
    ).toMatch(/decode\(encode\(a\)\)/)
  })
})

const Effect0 = Effect.succeed(0)

/** The message of what `f` throws, with its cause (fast-check wraps the property's error). */
function failure(f: () => void): string {
  try {
    f()
  } catch (e) {
    return `${String(e)} ${String((e as { cause?: unknown }).cause)}`
  }
  return "did not throw"
}

const json = fc.jsonValue({ maxDepth: 4 })
const jsonLike = fc.oneof(
  json,
  fc.record({
    loads: fc.array(
      fc.dictionary(
        fc.constantFrom("dp_rank", "num_running_reqs", "queues", "memory", "timestamp", "x"),
        json
      ),
      { maxLength: 3 }
    )
  }),
  fc.array(
    fc.dictionary(fc.constantFrom("dp_rank", "num_reqs", "num_waiting_reqs", "num_tokens", "ts_tic"), json),
    { maxLength: 3 }
  )
)
const params = { numRuns: 300, seed: 7 }

describe("fuzz: arbitrary JSON into every JSON decoder never throws and never yields a rejected value", () => {
  for (const era of ["shm-v1", "shm-v2", "shm-v3"] as const) {
    it(`decodeLoadSnapshot(${era})`, () =>
      assertDecoderTotal(L.decodeLoadSnapshot(era), jsonLike, L.loadSnapshotSchema(era), params))
  }
  it("decodeV1Loads (auto era) yields a response its era's schema accepts", () => {
    const schemas = {
      "pre-shm": L.V1LoadsResponsePreShm,
      "shm-v1": L.V1LoadsResponseShmV1,
      "shm-v2": L.V1LoadsResponseShmV2,
      "shm-v3": L.V1LoadsResponseShmV3
    }
    fc.assert(
      fc.property(jsonLike, (u) => {
        const r = L.decodeV1Loads(u)
        if (Result.isSuccess(r))
          expect(Schema.is(schemas[r.success.era] as Schema.Top)(r.success.response)).toBe(true)
      }),
      params
    )
  })
  it("decodeGetLoad", () => assertDecoderTotal(L.decodeGetLoad, jsonLike, L.GetLoadResponse, params))
  it("loadStatFromTagged", () =>
    assertDecoderTotal(
      L.loadStatFromTagged,
      fc.oneof(json, fc.tuple(fc.constant("LoadStat"), json, json, json, json, json)),
      L.LoadStat,
      params
    ))
  it("decodeMlpSyncRows", () =>
    assertDecoderTotal(
      L.decodeMlpSyncRows,
      fc.oneof(json, fc.array(fc.array(fc.integer(), { maxLength: 12 }))),
      undefined,
      params
    ))
  it("decodeEngineCounts", () => assertDecoderTotal(L.decodeEngineCounts, json, L.EngineCounts, params))
  it("decodeCoordinatorUpdate", () =>
    assertDecoderTotal(
      L.decodeCoordinatorUpdate,
      fc.oneof(json, fc.tuple(fc.option(json), json, json)),
      L.CoordinatorUpdate,
      params
    ))
  it("decodeSchedulerStats", () => assertDecoderTotal(L.decodeSchedulerStats, json, L.SchedulerStats, params))
})

/** Exposition-like lines: valid samples mixed with near misses. */
const expoLine = fc.oneof(
  fc
    .tuple(
      fc.constantFrom(
        "vllm:num_requests_running",
        "vllm:kv_cache_usage_perc",
        "sglang:gen_throughput",
        "sglang_num_total_tokens",
        "x"
      ),
      fc.option(
        fc.dictionary(
          fc.constantFrom("engine", "dp_rank", "model_name", "a b"),
          fc.oneof(fc.nat({ max: 9 }).map(String), fc.string())
        ),
        { nil: undefined }
      ),
      fc.oneof(fc.double().map(String), fc.constantFrom("NaN", "+Inf", "0.0", "abc", ""))
    )
    .map(
      ([n, l, v]) =>
        `${n}${
          l === undefined
            ? ""
            : `{${Object.entries(l)
                .map(([k, x]) => `${k}="${x}"`)
                .join(",")}}`
        } ${v}`
    ),
  fc.constantFrom(
    "# HELP vllm:num_requests_waiting w",
    "# TYPE sglang:token_usage gauge",
    "# TYPE x bogus",
    "",
    "#"
  ),
  fc.string()
)
const expo = fc.array(expoLine, { maxLength: 12 }).map((ls) => ls.join("\n"))
const text = fc.oneof(
  expo,
  fc.string(),
  json.map((j) => JSON.stringify(j)),
  jsonLike.map((j) => JSON.stringify(j))
)

const validRow = (r: L.LedgerRow): boolean => {
  if (!Number.isInteger(r.dpRank)) return false
  if (r.unknown !== undefined) return Object.keys(r).every((k) => k === "dpRank" || k === "unknown")
  return Object.entries(r).every(
    ([k, v]) => k === "dpRank" || (typeof v === "number" && !Number.isNaN(v) && v >= 0)
  )
}

describe("fuzz: arbitrary text and bytes into every text decoder", () => {
  it("decodeVllmMetrics / decodeSglangMetrics yield records their schemas accept", () => {
    assertDecoderTotal(
      (t: string) => Result.map(L.decodeVllmMetrics(t), (m) => m.records),
      expo,
      Schema.Array(L.VllmEngineMetrics),
      params
    )
    assertDecoderTotal(
      (t: string) => Result.map(L.decodeSglangMetrics(t), (m) => m.records),
      expo,
      Schema.Array(L.SglangRankMetrics),
      params
    )
  })
  it("decodeVllmLoggerLines", () =>
    assertDecoderTotal(
      L.decodeVllmLoggerLines,
      fc.oneof(
        fc.string(),
        fc
          .array(
            fc.constantFrom(
              "Engine 000: Avg prompt throughput: 1.5 tokens/s",
              "Running: 3 reqs",
              "GPU KV cache usage: 9x%",
              "Waiting: 1 reqs"
            ),
            { maxLength: 5 }
          )
          .map((a) => a.join(", "))
      ),
      Schema.Array(L.VllmLoggerRecord),
      params
    ))
  for (const kind of L.ledgerKinds) {
    it(`decodeLedger(text, ${kind}) never throws; rows are ranks with non-negative numbers or unknown`, () => {
      fc.assert(
        fc.property(text, (t) => {
          const r = L.decodeLedger(t, kind)
          if (Result.isSuccess(r)) expect(r.success.every(validRow)).toBe(true)
          else expect(typeof r.failure.message).toBe("string")
        }),
        params
      )
    })
  }
  it("decodeLoadStatFrame on arbitrary frames never throws; a success passes LoadStat", () => {
    assertDecoderTotal(
      (fs: ReadonlyArray<Uint8Array>) => Result.map(L.decodeLoadStatFrame(fs), (x) => x.stat),
      fc.oneof(
        fc.array(fc.uint8Array({ maxLength: 16 }), { maxLength: 4 }),
        fc
          .tuple(A.loadStat, fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }))
          .map(([s, q]) => [...L.encodeLoadStatFrame(q, s)])
      ),
      L.LoadStat,
      params
    )
  })
  it("reduceMlpSync on decoded rows never throws and keeps one entry per rank", () => {
    fc.assert(
      fc.property(A.mlpSyncRows, (rows) => {
        const decoded = L.decodeMlpSyncRows(rows)
        expect(Result.isSuccess(decoded)).toBe(true)
        const g = L.reduceMlpSync(Result.getOrThrow(decoded))
        if (rows.length === 0) expect(Result.isFailure(g)).toBe(true)
        else expect(Result.getOrThrow(g).globalNumTokens).toHaveLength(rows.length)
      }),
      params
    )
  })
  it("decodeLedger(bytes) and decodeLoadStatPayload never throw", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (b) => {
        const r = L.decodeLedger(b)
        if (Result.isSuccess(r)) expect(r.success.every(validRow)).toBe(true)
        L.decodeLoadStatPayload(b)
      }),
      params
    )
  })
})
