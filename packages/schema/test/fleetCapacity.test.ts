/**
 * Issue 11, item 5: capacity and utilisation per engine instance and over a fleet.
 */
import { describe, expect, it } from "vitest"
import { decodeLedger, fleetCapacity, instanceCapacity, type RankLoad } from "../src/index.js"
import { fixture, ok } from "./fixtures.js"

describe("fleetCapacity", () => {
  it("a pod running DP 8 is eight instances; another worker adds its own", () => {
    const dp8 = ok(
      decodeLedger(fixture("payloads/sglang_metrics_dp8_deepseek_r1__aibrix_issue1614_part1.prom"))
    )
    const v = ok(
      decodeLedger(fixture("payloads/vllm_metrics_qwen25coder32b__production_stack_issue318.prom"))
    )
    const f = fleetCapacity(
      new Map([
        ["sglang-dp8", dp8],
        ["vllm-1", v]
      ])
    )
    expect(f.instances.map((i) => `${i.worker}/${i.dpRank}`)).toEqual([
      ...Array.from({ length: 8 }, (_, r) => `sglang-dp8/${r}`),
      "vllm-1/0"
    ])
    // gen_throughput reported by 7 of the 8 SGLang ranks (rank 1 has none), none by vLLM
    expect(f.fields.genThroughput?.instancesReporting).toBe(7)
    expect(f.fields.genThroughput?.max).toBeCloseTo(141.7547, 4)
    // waiting: ranks 1 and 3 (num_queue_reqs) + the vLLM engine
    expect(f.fields.numWaitingReqs).toEqual({ instancesReporting: 3, sum: 0, mean: 0, min: 0, max: 0 })
    // vLLM's kv 0.0 is the only KV utilisation; no instance reported a token capacity
    expect(f.fields.kvUtilization?.instancesReporting).toBe(1)
    expect(f.fields.tokenCapacity).toBeUndefined()
    expect(f.kvUtilization).toBeUndefined()
    expect(f.unknownInstances).toBe(0)
  })
  it("utilisation per instance, free tokens, and the fleet ratio over instances reporting both", () => {
    const rows: ReadonlyArray<RankLoad> = [
      { dpRank: 0, maxTotalNumTokens: 1000, numUsedTokens: 250, numRunningReqs: 4, maxRunningRequests: 8 },
      { dpRank: 1, maxTotalNumTokens: 1000, numUsedTokens: 750, kvAvailableTokens: 100 },
      { dpRank: 2, kvCacheUsage: 0.9 },
      { dpRank: 3, unknown: { reason: "stale", message: "last report 9 s ago" } }
    ]
    const f = fleetCapacity([["w", rows]])
    expect(f.instances[0]).toMatchObject({ kvUtilization: 0.25, requestUtilization: 0.5, freeTokens: 750 })
    expect(f.instances[1]).toMatchObject({ kvUtilization: 0.75, freeTokens: 100 })
    expect(f.instances[2]).toEqual({ worker: "w", dpRank: 2, kvUtilization: 0.9 })
    expect(f.instances[3]).toEqual({
      worker: "w",
      dpRank: 3,
      unknown: { reason: "stale", message: "last report 9 s ago" }
    })
    expect(f.unknownInstances).toBe(1)
    expect(f.kvUtilization).toEqual({ value: 0.5, instancesReporting: 2 })
    expect(f.fields.kvUtilization?.instancesReporting).toBe(3)
    expect(f.fields.kvUtilization?.mean).toBeCloseTo((0.25 + 0.75 + 0.9) / 3, 12)
    expect(f.fields.requestUtilization?.instancesReporting).toBe(1)
  })
  it("re-indexed rows keep their worker rank; an empty fleet has no aggregates", () => {
    expect(instanceCapacity("p", { dpRank: 9, workerDpRank: 1, tokenCapacity: 64 })).toEqual({
      worker: "p",
      dpRank: 1,
      tokenCapacity: 64
    })
    expect(fleetCapacity(new Map())).toEqual({ instances: [], unknownInstances: 0, fields: {} })
  })
})
