// The incremental vLLM coordinator (vllmCoordInit / vllmCoordHandle / vllmCoordAdvance): the golden
// vectors of fixtures/reference/vllm/coord_cases.json driven step by step, and the docstring examples.
import { readFileSync } from "node:fs"
import { fc, test } from "@fast-check/vitest"
import type { PolicyError } from "@loadledger/policies"
import {
  type VllmCoordMessage,
  type VllmCoordOptions,
  type VllmCoordOutput,
  type VllmCoordState,
  vllmCoordAdvance,
  vllmCoordHandle,
  vllmCoordHandleAll,
  vllmCoordInit,
  vllmCoordinatorTimeline,
  vllmCoordNextPublishMs
} from "@loadledger/sim"
import { describe, expect, it } from "vitest"

interface CoordCase {
  readonly id: string
  readonly engine_count: number
  readonly wave_coordination: boolean
  readonly stats_update_interval_ms: number
  readonly heartbeat_ms: number
  readonly min_timeout_ms: number
  readonly until_ms: number
  readonly messages: ReadonlyArray<VllmCoordMessage>
  readonly expected_outputs: ReadonlyArray<VllmCoordOutput>
}
const cases = JSON.parse(
  readFileSync(new URL("../../../fixtures/reference/vllm/coord_cases.json", import.meta.url), "utf8")
) as ReadonlyArray<CoordCase>

const ok = <T extends object>(x: T | PolicyError): T => {
  if ("_tag" in x && x._tag === "PolicyError") throw new Error(x.message)
  return x as T
}

/** A case's coordinator settings, from the fixture's snake_case keys. */
const options = (c: CoordCase): VllmCoordOptions => ({
  engineCount: c.engine_count,
  waveCoordination: c.wave_coordination,
  statsUpdateIntervalMs: c.stats_update_interval_ms,
  heartbeatMs: c.heartbeat_ms,
  minTimeoutMs: c.min_timeout_ms
})
const init = (c: CoordCase): VllmCoordState => ok(vllmCoordInit(options(c)))

/**
 * Drive a case step by step, as a simulation would: before each message, advance to `cut(k)` where
 * the cut never reaches the message's time (a simulation only advances to times it has reached).
 */
const drive = (c: CoordCase, cuts: ReadonlyArray<number>): Array<VllmCoordOutput> => {
  const out: Array<VllmCoordOutput> = []
  let s = init(c)
  let prev = 0
  c.messages.forEach((m, k) => {
    if (m.t > c.until_ms) return
    // advance to a point strictly between the previous message and this one (fraction cuts[k])
    const f = cuts[k % cuts.length] ?? 0
    const until = prev + (m.t - prev) * f
    if (until < m.t && until >= s.horizonMs) {
      const a = ok(vllmCoordAdvance(s, until))
      out.push(...a.outputs)
      s = a.state
    }
    const h = ok(vllmCoordHandle(s, m))
    out.push(...h.outputs)
    s = h.state
    prev = m.t
  })
  out.push(...ok(vllmCoordAdvance(s, c.until_ms)).outputs)
  return out
}

/** Drive a case with `vllmCoordHandleAll`, batching consecutive messages (`sizes` cycles). */
const driveBatched = (c: CoordCase, sizes: ReadonlyArray<number>): Array<VllmCoordOutput> => {
  const out: Array<VllmCoordOutput> = []
  let s = init(c)
  const ms = c.messages.filter((m) => m.t <= c.until_ms)
  for (let i = 0, k = 0; i < ms.length; k++) {
    const n = Math.max(1, sizes[k % sizes.length] ?? 1)
    const h = ok(vllmCoordHandleAll(s, ms.slice(i, i + n)))
    out.push(...h.outputs)
    s = h.state
    i += n
  }
  out.push(...ok(vllmCoordAdvance(s, c.until_ms)).outputs)
  return out
}

describe("incremental coordinator on the golden vectors (README section 3)", () => {
  for (const c of cases)
    it(`${c.id}: handle/advance step by step gives the expected outputs`, () => {
      expect(drive(c, [0])).toEqual(c.expected_outputs)
      expect(drive(c, [0.5, 0.99, 0, 0.25])).toEqual(c.expected_outputs)
    })

  test.prop([fc.array(fc.double({ min: 0, max: 0.999, noNaN: true }), { minLength: 1, maxLength: 8 })], {
    numRuns: 40
  })("advancing in arbitrary pieces never changes what is published, or when", (cuts) => {
    for (const c of cases) expect(drive(c, cuts)).toEqual(c.expected_outputs)
  })

  test.prop([fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 6 })], { numRuns: 40 })(
    "vllmCoordHandleAll over any batching of the messages is vllmCoordHandle one by one",
    (sizes) => {
      for (const c of cases) expect(driveBatched(c, sizes)).toEqual(c.expected_outputs)
    }
  )

  it("vllmCoordHandleAll: an error names the message and changes nothing", () => {
    const s = ok(vllmCoordInit({ engineCount: 2, waveCoordination: true }))
    const e = vllmCoordHandleAll(s, [
      { t: 10, type: "stats", engine: 0, waiting: 1, running: 0, kv: 0, step: 1, wave: 0 },
      { t: 10, type: "stats", engine: 2, waiting: 1, running: 0, kv: 0, step: 1, wave: 0 }
    ])
    expect("_tag" in e && [e.reason, e.field]).toEqual(["InvalidInput", "messages[1].engine"])
    expect(s.counts).toEqual([
      [0, 0, 0],
      [0, 0, 0]
    ])
  })

  it("vllmCoordinatorTimeline is the same machine folded", () => {
    for (const c of cases) {
      const out = vllmCoordinatorTimeline({ ...options(c), untilMs: c.until_ms }, c.messages)
      expect(out).toEqual(c.expected_outputs)
    }
  })
})

describe("incremental coordinator cadence", () => {
  const stats = (t: number, engine: number, waiting: number, step: number, wave = 0): VllmCoordMessage => ({
    t,
    type: "stats",
    engine,
    waiting,
    running: 1,
    kv: 0.5,
    step,
    wave
  })
  /** `vllmCoordHandle` one message at a time, from a fresh two-engine wave-mode coordinator. */
  const handleEach = (ms: ReadonlyArray<VllmCoordMessage>) => {
    let state = ok(vllmCoordInit({ engineCount: 2, waveCoordination: true }))
    const outputs: Array<VllmCoordOutput> = []
    for (const m of ms) {
      const h = ok(vllmCoordHandle(state, m))
      outputs.push(...h.outputs)
      state = h.state
    }
    return { state, outputs }
  }
  /** Stats on step 1 every `every` ms from t = 10 up to `before`, alternating engines, `waiting` = t. */
  const stepOneStats = (every: number, before: number) =>
    Array.from({ length: Math.ceil((before - 10) / every) }, (_, i) => 10 + i * every).map((t) =>
      stats(t, t % 2, t, 1)
    )

  it("wave mode: stats on one step publish the live table >= 100 ms apart; every message restarts the 50 ms minimum", () => {
    // one stats message every 60 ms, all on step 1: no step boundary after the first
    const { state, outputs } = handleEach(stepOneStats(60, 500))
    const out = [...outputs, ...ok(vllmCoordAdvance(state, 600)).outputs]
    expect(out.every((o) => o.kind === "current")).toBe(true)
    // 60: 50 ms after the first message (never published); 180 = max(130 + 50, 60 + 100) ...
    expect(out.map((o) => o.t)).toEqual([60, 180, 300, 420, 540])
  })

  it("wave mode: stats faster than the 50 ms minimum starve the poll until a step boundary", () => {
    const { state, outputs } = handleEach(stepOneStats(30, 400))
    expect(outputs).toEqual([])
    // a stats message of step 2 captures a snapshot and lifts the minimum: it goes out at once
    const h = ok(vllmCoordHandle(state, stats(400, 0, 1, 2)))
    const a = ok(vllmCoordAdvance(h.state, 400))
    expect(a.outputs.map((o) => [o.t, o.kind])).toEqual([[400, "step_snapshot"]])
  })

  it("wave mode: a stats message of a later step captures the table before it as a step snapshot", () => {
    const s = handleEach([stats(0, 0, 1, 1), stats(0, 1, 2, 1), stats(30, 0, 5, 2)]).state
    expect(s.stepCounts).toEqual([
      [1, 1, 0.5],
      [2, 1, 0.5]
    ])
    // a pending snapshot lifts the 50 ms minimum: the deadline is the poll start (first publish)
    expect(vllmCoordNextPublishMs(s)).toBe(30)
    const a = ok(vllmCoordAdvance(s, 30))
    expect(a.outputs).toEqual([
      {
        t: 30,
        kind: "step_snapshot",
        msg: [
          [
            [1, 1, 0.5],
            [2, 1, 0.5]
          ],
          0,
          false
        ]
      }
    ])
    // the live table (with engine 0's step-2 row) follows 100 ms later
    const b = ok(vllmCoordAdvance(a.state, 130))
    expect(b.outputs.map((o) => [o.t, o.kind, o.kind === "current" ? o.msg[0][0] : undefined])).toEqual([
      [130, "current", [5, 1, 0.5]]
    ])
  })

  it("advancing past a time and then handling a message before it is a typed error naming t", () => {
    const s = ok(vllmCoordInit({ engineCount: 2, waveCoordination: false }))
    const a = ok(vllmCoordAdvance(s, 500))
    const e = vllmCoordHandle(a.state, stats(400, 0, 1, 1))
    expect("_tag" in e && [e.reason, e.field]).toEqual(["InvalidInput", "t"])
    const e2 = vllmCoordHandle(a.state, { t: 600, type: "wave_complete", engine: 2, wave: 0 })
    expect("_tag" in e2 && e2.field).toBe("engine")
    const e3 = vllmCoordAdvance(a.state, Number.POSITIVE_INFINITY)
    expect("_tag" in e3 && e3.field).toBe("untilMs")
  })

  it("bad settings are typed errors naming the field", () => {
    const bad = (o: Parameters<typeof vllmCoordInit>[0]) => {
      const r = vllmCoordInit(o)
      return "_tag" in r ? r.field : undefined
    }
    expect(bad({ engineCount: 0, waveCoordination: true })).toBe("engineCount")
    expect(bad({ engineCount: 2, waveCoordination: true, statsUpdateIntervalMs: 0 })).toBe(
      "statsUpdateIntervalMs"
    )
    expect(bad({ engineCount: 2, waveCoordination: true, heartbeatMs: -1 })).toBe("heartbeatMs")
    expect(bad({ engineCount: 2, waveCoordination: true, minTimeoutMs: -1 })).toBe("minTimeoutMs")
  })
})

describe("docstring examples (VllmCoordinator.ts)", () => {
  it("vllmCoordHandleAll", () => {
    const s = ok(vllmCoordInit({ engineCount: 2, waveCoordination: true }))
    const h = ok(
      vllmCoordHandleAll(s, [
        { t: 30, type: "stats", engine: 0, waiting: 0, running: 1, kv: 0.1, step: 1, wave: 0 },
        { t: 30, type: "stats", engine: 1, waiting: 2, running: 0, kv: 0.0, step: 1, wave: 0 }
      ])
    )
    expect(ok(vllmCoordAdvance(h.state, 80)).outputs).toEqual([
      {
        t: 80,
        kind: "current",
        msg: [
          [
            [0, 1, 0.1],
            [2, 0, 0]
          ],
          0,
          false
        ]
      }
    ])
  })
  it("vllmCoordInit / vllmCoordNextPublishMs", () => {
    const s = ok(vllmCoordInit({ engineCount: 2, waveCoordination: true }))
    expect(vllmCoordNextPublishMs(s)).toBe(50)
    expect(vllmCoordNextPublishMs(ok(vllmCoordInit({ engineCount: 2, waveCoordination: false })))).toBe(0)
  })
  it("vllmCoordAdvance", () => {
    const s = ok(vllmCoordInit({ engineCount: 2, waveCoordination: true }))
    expect(ok(vllmCoordAdvance(s, 6000)).outputs.map((o) => o.t)).toEqual([50, 5050])
  })
  it("vllmCoordHandle", () => {
    const s0 = ok(vllmCoordInit({ engineCount: 2, waveCoordination: false }))
    const s1 = ok(
      vllmCoordHandle(s0, {
        t: 1000,
        type: "stats",
        engine: 1,
        waiting: 3,
        running: 1,
        kv: 0.25,
        step: 0,
        wave: 0
      })
    )
    const s2 = ok(vllmCoordAdvance(s1.state, 1000))
    expect(s2.outputs[0]!.msg).toEqual([
      [
        [0, 0, 0],
        [3, 1, 0.25]
      ],
      0,
      false
    ])
  })
})
