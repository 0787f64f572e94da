/**
 * Every vector of fixtures/reference/sglang/v1_loads_snapshots.json, plus the include rules.
 */
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import {
  budgetInputs,
  decodeLoadSnapshot,
  decodeV1Loads,
  detectV1LoadsEra,
  isoToEpochSeconds,
  type LoadSnapshotEra,
  loadSnapshotSchema,
  parseInclude,
  selectRank,
  toDict,
  type V1LoadsEra,
  v1LoadsSnapshots,
  validateInclude
} from "../src/index.js"
import { err, fixture, ok } from "./fixtures.js"

interface Vector {
  id: string
  schema: V1LoadsEra
  query: { include: string | null; dp_rank: number | null } | null
  include_set: Array<string> | null
  server_side_snapshots: Array<unknown> | null
  response: { loads: Array<unknown> } | null
  to_dict_error: string | null
  decoded: Array<unknown> | null
  decode_error?: string | null
  budget_inputs?: Array<unknown>
}
const doc = JSON.parse(fixture("reference/sglang/v1_loads_snapshots.json")) as { vectors: Array<Vector> }

describe("v1_loads_snapshots.json", () => {
  it("has 18 vectors", () => expect(doc.vectors).toHaveLength(18))
  for (const v of doc.vectors) {
    it(`${v.id}: include_set, to_dict, decoded, budget_inputs`, () => {
      const snapEra: LoadSnapshotEra = v.schema === "pre-shm" ? "shm-v1" : v.schema
      const include = parseInclude(v.query?.include ?? null)
      expect(include).toEqual(v.include_set)
      const valid = validateInclude(include)
      if (v.to_dict_error !== null) expect(err(valid).message).toBe(v.to_dict_error)
      else ok(valid)
      if (v.server_side_snapshots !== null && v.response !== null) {
        const dicts = v.server_side_snapshots.map((s) =>
          ok(toDict(ok(decodeLoadSnapshot(snapEra)(s)), include, snapEra))
        )
        expect(dicts).toEqual(v.response.loads)
      }
      if (v.response === null) return
      const d = decodeV1Loads(v.response, v.schema)
      if (typeof v.decode_error === "string") {
        const e = err(d)
        expect(e.path).toBe("$.loads[0].queues.grammar")
        expect(v.decode_error).toContain("`grammar`")
        return
      }
      const decoded = ok(d)
      const encode = Schema.encodeUnknownSync(loadSnapshotSchema(snapEra))
      expect(v1LoadsSnapshots(decoded).map((s) => encode(s))).toEqual(v.decoded)
      expect(
        budgetInputs(decoded).map((b) => ({
          dp_rank: b.dpRank,
          timestamp_present: b.timestampPresent,
          total_requests: b.totalRequests,
          total_tokens: b.totalTokens
        }))
      ).toEqual(v.budget_inputs)
    })
  }
})

describe("/v1/loads eras and include semantics", () => {
  it("detects the era of each vector whose envelope says it", () => {
    const eraOf = (id: string) => detectV1LoadsEra(doc.vectors.find((v) => v.id === id)!.response)
    expect(eraOf("pre-shm-envelope")).toBe("pre-shm")
    expect(eraOf("v1-all-4ranks")).toBe("shm-v1")
    expect(eraOf("v2-all-8ranks-decode")).toBe("shm-v2")
    expect(eraOf("v3-prealloc-ready-spec")).toBe("shm-v3")
  })
  it("include: all skips validation, core-only, unknown token and empty token rejected", () => {
    expect(parseInclude("all,bogus")).toEqual(["all", "bogus"])
    ok(validateInclude(["all", "bogus"]))
    expect(err(validateInclude(["bogus"])).message).toBe(
      "Invalid include sections: {'bogus'}. Valid options: ['all', 'core', 'disagg', 'lora', 'memory', 'queues', 'spec']"
    )
    expect(parseInclude("")).toBeNull()
    expect(parseInclude(" memory , spec ")).toEqual(["memory", "spec"])
  })
  it("include=memory still emits the core keys", () => {
    const s = ok(
      decodeLoadSnapshot("shm-v2")({
        dp_rank: 1,
        num_total_tokens: 5,
        memory: { weight_gb: 1, kv_cache_gb: 2, graph_gb: 0.5, token_capacity: 10 },
        queues: { waiting: 0, grammar: 0, paused: 0, retracted: 0 }
      })
    )
    const d = ok(toDict(s, ["memory"], "shm-v2"))
    expect(d["num_total_tokens"]).toBe(5)
    expect(d["timestamp"]).toBe(0)
    expect(d["memory"]).toEqual({ weight_gb: 1, kv_cache_gb: 2, graph_gb: 0.5, token_capacity: 10 })
    expect(d).not.toHaveProperty("queues")
  })
  it("dp_rank filter: out of range gives no loads", () => {
    const snaps = [{ dpRank: 0 }, { dpRank: 1 }, { dpRank: 2 }]
    expect(selectRank(snaps, 2)).toEqual([{ dpRank: 2 }])
    expect(selectRank(snaps, 9)).toEqual([])
    expect(selectRank(snaps, -1)).toEqual([])
    expect(selectRank(snaps, null)).toHaveLength(3)
  })
  it("per-rank timestamp falls back to the envelope's ISO timestamp (microseconds kept)", () => {
    expect(isoToEpochSeconds("2026-06-01T08:30:00.000001+00:00")).toBeCloseTo(1780302600.000001, 6)
    expect(isoToEpochSeconds("2024-01-15T10:30:00+00:00")).toBe(1705314600)
    expect(isoToEpochSeconds("yesterday")).toBeUndefined()
    const d = ok(
      decodeV1Loads({
        timestamp: "2024-01-15T10:30:00+00:00",
        loads: [{ dp_rank: 0 }, { dp_rank: 1, timestamp: 5.5 }]
      })
    )
    expect(budgetInputs(d).map((b) => [b.timestampPresent, b.timestamp])).toEqual([
      [false, 1705314600],
      [true, 5.5]
    ])
  })
  it("a present section missing a required field is an error at its path; unknown keys are ignored", () => {
    expect(err(decodeV1Loads({ loads: [{ dp_rank: 0, memory: { weight_gb: 1 } }] }, "shm-v2")).path).toBe(
      "$.loads[0].memory.kv_cache_gb"
    )
    expect(
      err(decodeV1Loads({ loads: [{ speculative: { accept_length: 1, accept_rate: 1 } }] }, "shm-v3")).path
    ).toBe("$.loads[0].speculative.draft_occupancy_rate")
    ok(decodeV1Loads({ loads: [{ dp_rank: 0, brand_new: { x: 1 } }], brand_new_envelope_key: 1 }))
  })
})
