import { readFileSync } from "node:fs"
import {
  type VllmWaveEvent,
  type VllmWaveState,
  vllmCoordinatorTimeline,
  vllmDummyShare,
  vllmWaveInit,
  vllmWaveLaterProfile,
  vllmWaveSnapshotProfile,
  vllmWaveStep
} from "@loadledger/sim"
import { describe, expect, it } from "vitest"

interface WaveCase {
  readonly id: string
  readonly profile: { readonly sync_interval: number; readonly sync_first_step: boolean }
  readonly dp_size: number
  readonly steps: ReadonlyArray<{
    local_unfinished: string
    executed?: string
    events?: Array<VllmWaveEvent>
  }>
  readonly expected: ReadonlyArray<{ action: string }>
}
const waveCases = JSON.parse(
  readFileSync(new URL("../../../fixtures/reference/vllm/wave_cases.json", import.meta.url), "utf8")
) as ReadonlyArray<WaveCase>
const bits = (s: string) => [...s].map((c) => c === "1")

const replay = (c: WaveCase): VllmWaveState => {
  let s = vllmWaveInit(
    c.dp_size,
    { name: "x", syncInterval: c.profile.sync_interval, syncFirstStep: c.profile.sync_first_step },
    { countDummySteps: true }
  )
  for (const st of c.steps) {
    const r = vllmWaveStep(s, {
      localUnfinished: bits(st.local_unfinished),
      executed: st.executed === undefined ? undefined : bits(st.executed),
      events: st.events
    })
    if (r._tag === "VllmWaveError") throw new Error(r.message)
    s = r.state
  }
  return s
}

describe("vLLM wave model (README section 2)", () => {
  it("profiles: snapshot syncs every 32 steps only; later profile also on step 1 with interval 16", () => {
    expect(vllmWaveSnapshotProfile).toMatchObject({ syncInterval: 32, syncFirstStep: false })
    expect(vllmWaveLaterProfile()).toMatchObject({ syncInterval: 16, syncFirstStep: true })
  })

  it("wave-001: one 1-step request on rank 0 costs 63 dummy rank-steps before the 32-step sync", () => {
    const c = waveCases.find((x) => x.id === "wave-001-single_request-s32")!
    const s = replay(c)
    // The fixture's actions: "RD" then "DD" until the sync at step 32.
    expect(s.dummyStats).toMatchObject({ realRankSteps: 1, dummyRankSteps: 63 })
    expect(vllmDummyShare(s.dummyStats)?.ofBusy).toBe(63 / 64)
    const f16 = replay(waveCases.find((x) => x.id === "wave-002-single_request-f16")!)
    expect(f16.dummyStats).toMatchObject({ realRankSteps: 1, dummyRankSteps: 1 })
  })

  it("dummy-step counts equal the D characters of the expected actions in every vector", () => {
    for (const c of waveCases) {
      const want = c.expected.reduce((a, e) => a + [...e.action].filter((x) => x === "D").length, 0)
      const real = c.expected.reduce((a, e) => a + [...e.action].filter((x) => x === "R").length, 0)
      const s = replay(c)
      expect(s.dummyStats?.dummyRankSteps, c.id).toBe(want)
      expect(s.dummyStats?.realRankSteps, c.id).toBe(real)
      expect(s.dummyStats?.steps, c.id).toBe(c.steps.length)
    }
  })

  it("counting is off by default, and the share is undefined (not 0) when nothing was counted", () => {
    expect(vllmWaveInit(2).dummyStats).toBeUndefined()
    expect(vllmDummyShare(undefined)).toBeUndefined()
    expect(
      vllmDummyShare({ steps: 0, realRankSteps: 0, dummyRankSteps: 0, idleRankSteps: 0 })
    ).toBeUndefined()
    expect(vllmDummyShare({ steps: 4, realRankSteps: 4, dummyRankSteps: 12, idleRankSteps: 0 })?.ofAll).toBe(
      0.75
    )
  })

  it("a rank stepping while another idles is a typed NotLockstep error, not a throw", () => {
    const r = vllmWaveStep(vllmWaveInit(2), { localUnfinished: [true, false] })
    expect(r._tag === "VllmWaveError" && r.reason).toBe("NotLockstep")
    const bad = vllmWaveStep(vllmWaveInit(2), { localUnfinished: [true] })
    expect(bad._tag === "VllmWaveError" && bad.field).toBe("localUnfinished")
  })

  it("client_request on idle ranks: FIRST_REQ, START_DP_WAVE excluding the rank, dummy batches elsewhere", () => {
    const r = vllmWaveStep(vllmWaveInit(2), {
      localUnfinished: [false, false],
      executed: [true, false],
      events: [{ ev: "client_request", rank: 0 }]
    })
    if (r._tag !== "WaveStep") throw new Error(r.message)
    // wave-001 step 0 of the fixture
    expect(r.action).toEqual(["R", "D"])
    expect(r.eventLog).toEqual([{ rank: 0, kind: "first_req", wave: 0 }])
    expect(r.startDpWave).toEqual([
      [0, 0],
      [0, 0]
    ])
    expect(r.coordPublishes).toEqual([[null, 0, true]])
  })
})

describe("vLLM coordinator cadence (README section 3)", () => {
  it("coord-001: no input -> first publish after the 50 ms minimum, then every 5000 ms", () => {
    const out = vllmCoordinatorTimeline({ engineCount: 2, waveCoordination: true, untilMs: 16000 }, [])
    expect("_tag" in out ? out : out.map((o) => o.t)).toEqual([50, 5050, 10050, 15050])
  })

  it("coord-004: non-lockstep publishes at once (t=0) and right after a change after a quiet period", () => {
    const out = vllmCoordinatorTimeline({ engineCount: 2, waveCoordination: false, untilMs: 7000 }, [
      { t: 1000, type: "stats", engine: 1, waiting: 3, running: 1, kv: 0.25, step: 0, wave: 0 }
    ])
    expect("_tag" in out ? out : out.map((o) => [o.t, o.kind])).toEqual([
      [0, "current"],
      [1000, "current"],
      [6000, "current"]
    ])
  })

  it("wave messages are ignored without wave coordination and act at once with it", () => {
    const msgs = [{ t: 200, type: "first_req" as const, rank: 2, wave: 0 }]
    const off = vllmCoordinatorTimeline({ engineCount: 3, waveCoordination: false, untilMs: 300 }, msgs)
    expect("_tag" in off ? off : off.map((o) => o.kind)).toEqual(["current"])
    const on = vllmCoordinatorTimeline({ engineCount: 3, waveCoordination: true, untilMs: 300 }, msgs)
    expect("_tag" in on ? on : on[1]).toEqual({ t: 200, kind: "start_dp_wave", msg: [0, 2] })
  })

  it("decreasing times and unknown engines are typed errors naming the field", () => {
    const e = vllmCoordinatorTimeline({ engineCount: 2, waveCoordination: true, untilMs: 100 }, [
      { t: 10, type: "wave_complete", engine: 0, wave: 0 },
      { t: 5, type: "wave_complete", engine: 0, wave: 0 }
    ])
    expect("_tag" in e && e.field).toBe("messages[1].t")
    const e2 = vllmCoordinatorTimeline({ engineCount: 2, waveCoordination: true, untilMs: 100 }, [
      { t: 10, type: "start_wave", engine: 5, wave: 0 }
    ])
    expect("_tag" in e2 && e2.reason).toBe("InvalidInput")
  })
})
