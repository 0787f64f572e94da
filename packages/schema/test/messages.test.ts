/**
 * LoadStat frames, MLP-sync rows and vLLM messages.
 */
import { encode } from "@msgpack/msgpack"
import { describe, expect, it } from "vitest"
import {
  decodeCoordinatorUpdate,
  decodeEngineCounts,
  decodeLedger,
  decodeLoadStatFrame,
  decodeLoadStatPayload,
  decodeMlpSyncRows,
  decodeSchedulerStats,
  encodeLoadStatFrame,
  type MlpSyncBatchInfo,
  reduceMlpSync
} from "../src/index.js"
import { err, ok } from "./fixtures.js"

describe("LoadStat frame", () => {
  const stat = {
    numRunningReqs: 3,
    numWaitingReqs: 2,
    numTokens: 256,
    maxTotalNumTokens: 4096,
    attnDpRank: 1
  }
  it('encodes ["load", 8-byte big-endian seq, msgpack(["LoadStat", ...])]', () => {
    const [topic, seq, payload] = encodeLoadStatFrame(258n, stat)
    expect(new TextDecoder().decode(topic)).toBe("load")
    expect([...seq]).toEqual([0, 0, 0, 0, 0, 0, 1, 2])
    // msgpack fixarray of 6, fixstr "LoadStat", then the ints
    expect([...payload]).toEqual([...encode(["LoadStat", 3, 2, 256, 4096, 1])])
    expect(payload[0]).toBe(0x96)
  })
  it("decodes its own frames and 2^64-1 sequence numbers", () => {
    const r = ok(decodeLoadStatFrame(encodeLoadStatFrame(2n ** 64n - 1n, stat)))
    expect(r.seq).toBe(2n ** 64n - 1n)
    expect(r.stat).toEqual(stat)
  })
  it("rejects a bad topic, a short sequence number, a wrong tag and bad msgpack, naming where", () => {
    const [t, s, p] = encodeLoadStatFrame(1n, stat)
    expect(err(decodeLoadStatFrame([new TextEncoder().encode("lead"), s, p])).path).toBe("$[0]")
    expect(err(decodeLoadStatFrame([t, s.slice(0, 4), p])).path).toBe("$[1]")
    expect(err(decodeLoadStatPayload(encode(["LoadStats", 1, 2, 3, 4, 5]))).path).toBe("$[0]")
    expect(err(decodeLoadStatPayload(encode(["LoadStat", 1, 2, "x", 4, 5]))).path).toBe("$[3]")
    expect(err(decodeLoadStatPayload(new Uint8Array([0xc1])))._tag).toBe("SyntaxError")
  })
  it("decodeLedger reads concatenated msgpack payloads as one row per rank", () => {
    const bytes = new Uint8Array([
      ...encode(["LoadStat", 3, 2, 256, 4096, 0]),
      ...encode(["LoadStat", 0, 0, 0, 4096, 1])
    ])
    expect(ok(decodeLedger(bytes))).toEqual([
      { dpRank: 0, numRunningReqs: 3, numWaitingReqs: 2, numTokens: 256, maxTotalNumTokens: 4096 },
      { dpRank: 1, numRunningReqs: 0, numWaitingReqs: 0, numTokens: 0, maxTotalNumTokens: 4096 }
    ])
    // bytes that are not a msgpack array are read as text
    expect(
      ok(decodeLedger(new TextEncoder().encode('{"loads":[{"dp_rank":4,"num_running_reqs":1}]}')))
    ).toEqual([{ dpRank: 4, numRunningReqs: 1 }])
    expect(ok(decodeLedger('["LoadStat", 1, 1, 8, 64, 2]', "load-stat"))).toEqual([
      { dpRank: 2, numRunningReqs: 1, numWaitingReqs: 1, numTokens: 8, maxTotalNumTokens: 64 }
    ])
  })
})

describe("MLP sync rows", () => {
  const rows11 = [
    [512, 512, 1, 1, 1, 1, 1, 128, 1, 0, 4],
    [0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0],
    [64, 64, 0, 0, 0, 2, 1, 512, 1, 0, 2]
  ]
  it("decodes 11-column and 8-column rows", () => {
    const r = ok(decodeMlpSyncRows(rows11))
    expect(r[0]).toEqual({
      numTokens: 512,
      numTokensForLogprob: 512,
      canRunDecodeCudaGraph: 1,
      isExtendInBatch: 1,
      localCanRunTbo: 1,
      localForwardMode: 1,
      canRunPrefillCudaGraph: 1,
      prefillCudaGraphMaxPrefixLen: 128,
      canRunDraftCudaGraph: 1,
      isHealthCheck: 0,
      attentionPairs: 4
    })
    const old = ok(decodeMlpSyncRows([[5, 5, 1, 0, 1, 2, 1, 0]]))
    expect(old[0]).not.toHaveProperty("attentionPairs")
    expect(err(decodeMlpSyncRows([[1, 2, 3]])).path).toMatch(/^\$\[0\]/)
  })
  it("reduceMlpSync: lists, min/max rules, idle batch, no decode->extend with an idle rank", () => {
    const g = ok(reduceMlpSync(ok(decodeMlpSyncRows(rows11))))
    expect(g.globalNumTokens).toEqual([512, 0, 64])
    expect(g.globalAttentionPairs).toEqual([4, 0, 2])
    expect(g.canRunDecodeCudaGraph).toBe(false) // min(1, 1, 0)
    expect(g.isExtendInBatch).toBe(true) // max(1, 0, 0)
    expect(g.canRunPrefillCudaGraph).toBe(true) // min(1, 1, 1)
    expect(g.prefillCudaGraphMaxPrefixLen).toBe(512) // max
    expect(g.needIdleBatch).toBe(true)
    expect(g.idleRanks).toEqual([1])
    expect(g.decodeMayConvertToExtend).toBe(false)
    const busy: MlpSyncBatchInfo = { ...ok(decodeMlpSyncRows([rows11[0]]))[0]! }
    const g2 = ok(reduceMlpSync([busy, busy]))
    expect(g2.decodeMayConvertToExtend).toBe(true)
    expect(g2.canRunDecodeCudaGraph).toBe(true)
    const idle = ok(reduceMlpSync([{ ...busy, numTokens: 0 }]))
    expect(idle.needIdleBatch).toBe(false)
    expect(reduceMlpSync([])._tag).toBe("Failure")
  })
})

describe("vLLM messages", () => {
  it("EngineCounts is [waiting, running, kv 0..1]", () => {
    expect(ok(decodeEngineCounts([117, 51, 1.0]))).toEqual([117, 51, 1])
    expect(err(decodeEngineCounts([117, 51, 100])).path).toBe("$[2]")
    expect(err(decodeEngineCounts([1.5, 0, 0])).path).toBe("$[0]")
  })
  it("coordinator update (counts | null, currentWave, enginesRunning)", () => {
    expect(ok(decodeCoordinatorUpdate([[[0, 8, 0.25]], 2, true]))).toEqual([[[0, 8, 0.25]], 2, true])
    expect(ok(decodeCoordinatorUpdate([null, 3, false]))[0]).toBeNull()
    expect(err(decodeCoordinatorUpdate([[[0, 8, 0.25]], 2, "yes"])).path).toBe("$[2]")
  })
  it("SchedulerStats from wire names", () => {
    expect(
      ok(
        decodeSchedulerStats({
          num_running_reqs: 8,
          num_waiting_reqs: 0,
          kv_cache_usage: 0.4,
          step_counter: 31,
          current_wave: 2
        })
      )
    ).toEqual({ numRunningReqs: 8, numWaitingReqs: 0, kvCacheUsage: 0.4, stepCounter: 31, currentWave: 2 })
    expect(err(decodeSchedulerStats({ num_running_reqs: 8 })).path).toBe("$.num_waiting_reqs")
  })
})
