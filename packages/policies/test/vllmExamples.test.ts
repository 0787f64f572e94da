// The @example blocks of the vLLM modules' docstrings, run as tests.
import {
  findPolicy,
  makeVllmLb,
  vllmCoordFirstReq,
  vllmCoordinatorTimeline,
  vllmCoordStartWave,
  vllmCoordWaveComplete,
  vllmDummyShare,
  vllmKvPressure,
  vllmLbCoord,
  vllmLbFinish,
  vllmLbInit,
  vllmLbRoute,
  vllmLbScore,
  vllmWaveInit,
  vllmWaveLaterProfile,
  vllmWaveSnapshotProfile,
  vllmWaveStep
} from "@loadledger/policies"
import { inflightLaw } from "@loadledger/testing"
import fc from "fast-check"
import { describe, expect, it } from "vitest"

describe("vLLM docstring examples", () => {
  it("vllmLbInit", () => {
    const s = vllmLbInit(8, { clientCount: 3, clientIndex: 1 })
    expect("_tag" in s === false && s.engStartIndex).toBe(2)
  })
  it("vllmLbScore", () => expect(vllmLbScore([2, 0, 0.5000001], 0, 1)).toBe(2.0000011999999994))
  it("vllmLbRoute", () => {
    const s0 = vllmLbInit(2)
    if ("_tag" in s0) throw new Error(s0.message)
    const r = vllmLbRoute(s0, "r0")
    expect(!("_tag" in r) && [r.chosen, r.state.engStartIndex]).toEqual([0, 1])
  })
  it("vllmLbCoord", () => {
    const s0 = vllmLbInit(2)
    if ("_tag" in s0) throw new Error(s0.message)
    const s1 = vllmLbCoord(
      s0,
      [
        [1, 2, 0.3],
        [0, 0, 0.0]
      ],
      3,
      true
    )
    expect(!("_tag" in s1) && s1.currentWave).toBe(3)
  })
  it("vllmLbFinish", () => {
    const s0 = vllmLbInit(2)
    if ("_tag" in s0) throw new Error(s0.message)
    const r = vllmLbRoute(s0, "a", 1)
    if ("_tag" in r) throw new Error(r.message)
    expect(vllmLbFinish(r.state, ["a", "unknown-id"]).decremented).toEqual([1])
  })
  it("coordinator handlers", () => {
    expect(vllmCoordFirstReq({ wave: 1, running: false }, 2, 0).startDpWave).toEqual([1, null])
    expect(vllmCoordWaveComplete({ wave: 0, running: true }, 0).publish).toEqual([null, 1, false])
    expect(vllmCoordStartWave({ wave: 1, running: false }, 1, 1).startDpWave).toEqual([1, 1])
  })
  it("vllmCoordinatorTimeline", () => {
    const out = vllmCoordinatorTimeline({ engineCount: 2, waveCoordination: true, untilMs: 6000 }, [])
    expect("_tag" in out ? out : out.map((o) => o.t)).toEqual([50, 5050])
  })
  it("wave profiles, init, step, dummy share", () => {
    expect(vllmWaveSnapshotProfile.syncInterval).toBe(32)
    expect(vllmWaveLaterProfile(16).syncFirstStep).toBe(true)
    expect(vllmWaveInit(4, vllmWaveSnapshotProfile).ranks.length).toBe(4)
    const r = vllmWaveStep(vllmWaveInit(2), {
      localUnfinished: [false, false],
      executed: [true, false],
      events: [{ ev: "client_request", rank: 0 }]
    })
    expect(r._tag === "WaveStep" && r.action.join("")).toBe("RD")
    expect(vllmDummyShare({ steps: 4, realRankSteps: 4, dummyRankSteps: 12, idleRankSteps: 0 })?.ofAll).toBe(
      0.75
    )
  })
  it("makeVllmLb / vllmKvPressure", () => {
    const p = makeVllmLb({ clientCount: 1, clientIndex: 0 })
    let s = p.init(2)
    s = p.observe(
      s,
      [
        {
          dpRank: 0,
          timestamp: 0,
          numWaitingReqs: 3,
          numRunningReqs: 0,
          numTotalTokens: 0,
          kvCacheUsage: 0.1
        },
        {
          dpRank: 1,
          timestamp: 0,
          numWaitingReqs: 0,
          numRunningReqs: 1,
          numTotalTokens: 0,
          kvCacheUsage: 0.1
        }
      ],
      0
    )
    const r = p.route(s, { requestId: "a", inputLength: 10 }, 0)
    expect(r._tag === "Routed" && r.rank).toBe(1)
    const r2 = vllmKvPressure.route(vllmKvPressure.init(4), { requestId: "a", inputLength: 1 }, 0)
    expect(r2._tag === "Routed" && r2.rank).toBe(0)
  })
  it("inflightLaw", () => {
    fc.assert(inflightLaw({ policy: makeVllmLb(), inflightOf: (s) => s.lb.inflight }), { numRuns: 50 })
  })
  it("registry entries: names match the policies, options reach the client", () => {
    const p = findPolicy("vllm-kv-pressure")!.make({ clientCount: 2, clientIndex: 1 })
    expect(p.name).toBe("vllm-kv-pressure")
    // start index floor(4 * 1 / 2) = 2
    const r = p.route(p.init(4), { requestId: "a", inputLength: 1 }, 0)
    expect(r._tag === "Routed" && r.rank).toBe(2)
    expect(findPolicy("vllm-kv-pressure")!.reference).toBe(true)
    const g = findPolicy("vllm-kv-pressure-kv-guard")!
    expect([g.reference, g.make({}).name]).toEqual([false, "vllm-kv-pressure-kv-guard"])
  })
})
