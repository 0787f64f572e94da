// vLLM's coordinator cadence inside the simulator (fixtures/reference/vllm/README.md section 3),
// and what the policies are handed with each request (prefix hashes, session).
import type { Policy, PolicyOptions, RankLoad, RouteRequest } from "@loadledger/policies"
import { findPolicy } from "@loadledger/policies"
import { describe, expect, it } from "vitest"
import { type PublishRecord, parseTrace, simulate, type TraceRequest } from "../src/index.js"
import { fixedStep, req } from "./helpers.js"

interface Seen {
  readonly observed: Array<{ readonly now: number; readonly loads: ReadonlyArray<RankLoad> }>
  readonly requests: Array<RouteRequest>
}

const recording =
  (log: Array<Seen>) =>
  (_: PolicyOptions): Policy<unknown> => {
    const seen: Seen = { observed: [], requests: [] }
    log.push(seen)
    return {
      name: "recording",
      init: () => 0,
      observe: (s, loads, now) => {
        seen.observed.push({ now, loads })
        return s
      },
      route: (s, r) => {
        seen.requests.push(r)
        return { _tag: "Routed", rank: Number(r.requestId) % 2, state: s, explanation: {} }
      },
      finish: (s) => s,
      setStatus: (s) => s
    }
  }

const at = (p: PublishRecord) => Math.round(p.atSeconds * 1e6) / 1e6
const gaps = (ps: ReadonlyArray<PublishRecord>) =>
  ps.slice(1).map((p, i) => Math.round((p.atSeconds - ps[i]!.atSeconds) * 1e6) / 1e6)
const row0 = (p: PublishRecord) => p.rows?.[0]

// one request of 40 output tokens on rank 0 at t=0 (30 ms steps, a 1,000-token KV pool so that
// kvCacheUsage = tokens / 1000), then a second one 12 s later on rank 1
const trace: ReadonlyArray<TraceRequest> = [req(0, 0, 100, 40), req(1, 12, 100, 3)]
const run = (lockstep: boolean, make = findPolicy("vllm-kv-pressure")!.make) =>
  simulate(
    {
      dpSize: 2,
      stepModel: fixedStep(0.03),
      engine: "vllm",
      lockstep,
      kvPoolTokens: 1000,
      recordPublishes: true
    },
    trace,
    { name: "p", make }
  )

describe("vLLM coordinator cadence in the simulator", () => {
  it("wave mode (MoE lockstep): step snapshots every 100 ms while the wave runs, wave notices at once, then the 5 s heartbeat", () => {
    const r = run(true)
    const log = r.publishLog!
    const waveStates = log.filter((p) => p.kind === "wave_state").map((p) => [at(p), p.wave, p.running])
    // rank 0's start_wave after the first step; wave 0 ends at the first finish-sync step (64 x 30 ms)
    // after the request finished at step 40; the second request starts wave 1, which ends at step 32
    expect(waveStates).toEqual([
      [0.03, 0, true],
      [1.92, 1, false],
      [12.03, 1, true],
      [12.96, 2, false]
    ])
    const wave0 = log.filter((p) => p.kind !== "wave_state" && p.atSeconds < 1.9)
    // every step moves the step counter: each publish is the table captured at a step boundary,
    // 100 ms after the previous one (the first comes as soon as a snapshot is pending: 60 ms)
    expect(wave0.every((p) => p.kind === "step_snapshot")).toBe(true)
    expect(at(wave0[0]!)).toBe(0.06)
    expect(gaps(wave0).every((g) => g === 0.1)).toBe(true)
    expect(wave0).toHaveLength(19)
    // the snapshot published at 0.16 s is the table before the first stats of the step that ended
    // at 0.15 s: rank 0 after 4 steps (100 prompt tokens + 3 decoded), not the live 104
    expect(row0(wave0[1]!)).toMatchObject({
      numWaitingReqs: 0,
      numRunningReqs: 1,
      kvCacheUsage: 0.103,
      numTotalTokens: 103
    })
    // ... and its rows carry the time those stats were taken
    expect(row0(wave0[1]!)?.measuredSeconds).toBeCloseTo(0.12, 9)
    // after wave 0: the step-boundary snapshot of wave 1 / step 0, the live table 100 ms later, then
    // only the heartbeat until the next request
    const quiet = log.filter((p) => p.atSeconds > 1.9 && p.atSeconds < 12).map((p) => [at(p), p.kind])
    expect(quiet).toEqual([
      [1.92, "wave_state"],
      [1.96, "step_snapshot"],
      [2.06, "current"],
      [7.06, "current"]
    ])
  })

  it("without wave coordination: the live table at once, then every 100 ms while stats change, else every 5 s", () => {
    const r = run(false)
    const log = r.publishLog!
    expect(log.every((p) => p.kind === "current")).toBe(true)
    expect(log.map(at)).toEqual([
      0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.1, 1.2, 1.3, 6.3, 11.3, 12.03
    ])
    // the live table: rank 0 after the step that ended at 0.09 s (100 + 2 tokens)
    expect(row0(log[1]!)?.numTotalTokens).toBe(102)
  })

  it("every front end observes each load publish (not the wave notices), each row stamped with the time of its stats", () => {
    const seen: Array<Seen> = []
    const r = simulate(
      {
        dpSize: 2,
        stepModel: fixedStep(0.03),
        engine: "vllm",
        kvPoolTokens: 1000,
        frontEnds: 2,
        recordPublishes: true
      },
      trace,
      { name: "recording", make: recording(seen) }
    )
    const loadPublishes = r.publishLog!.filter((p) => p.kind !== "wave_state")
    expect(seen).toHaveLength(2)
    for (const s of seen) {
      expect(s.observed.map((o) => o.now)).toEqual(loadPublishes.map((p) => p.atSeconds))
      for (const o of s.observed) {
        expect(o.loads.map((l) => l.dpRank)).toEqual([0, 1])
        expect(o.loads.every((l) => l.timestamp !== undefined && l.timestamp <= o.now)).toBe(true)
      }
      // stamped with the rows' stats times (the publish time only before a rank ever reported)
      for (const [k, o] of s.observed.entries()) {
        const rows = loadPublishes[k]!.rows!
        expect(o.loads.map((l) => l.timestamp)).toEqual(
          rows.map((r) => (Number.isNaN(r.measuredSeconds) ? o.now : r.measuredSeconds))
        )
      }
    }
  })

  it("SGLang keeps no publish log (its schedulers write snapshots at step boundaries)", () => {
    const r = simulate(
      { dpSize: 2, stepModel: fixedStep(0.03), recordPublishes: true },
      trace,
      findPolicy("round-robin")!
    )
    expect(r.publishLog).toBeUndefined()
  })
})

describe("what a policy is handed", () => {
  it("the trace's block hashes as prefixHashes (decimal strings) and its session, when it has one", () => {
    const parsed = parseTrace(
      [
        '{"arrival_seconds": 0, "input_length": 1100, "output_length": 2, "hash_ids": [7, 8], "session_id": "chat-1"}',
        '{"arrival_seconds": 0.5, "input_length": 1600, "output_length": 2, "hash_ids": [7, 8, 9], "session_id": 42}',
        '{"arrival_seconds": 1, "input_length": 10, "output_length": 2}'
      ].join("\n")
    )
    if (!Array.isArray(parsed)) throw new Error("trace")
    const seen: Array<Seen> = []
    simulate({ dpSize: 2, stepModel: fixedStep(0.01) }, parsed, { name: "recording", make: recording(seen) })
    expect(seen[0]!.requests.map((r) => [r.requestId, r.prefixHashes, r.sessionId])).toEqual([
      ["0", ["7", "8"], "chat-1"],
      ["1", ["7", "8", "9"], "42"],
      ["2", undefined, undefined]
    ])
  })

  it("a Mooncake trace has no session: prefixHashes only", () => {
    const parsed = parseTrace('{"timestamp": 0, "input_length": 600, "output_length": 1, "hash_ids": [3]}\n')
    if (!Array.isArray(parsed)) throw new Error("trace")
    const seen: Array<Seen> = []
    simulate({ dpSize: 2, stepModel: fixedStep(0.01) }, parsed, { name: "recording", make: recording(seen) })
    expect(seen[0]!.requests[0]).toMatchObject({ prefixHashes: ["3"], sessionId: undefined })
  })

  it("cache-affinity uses them: conversations that share a prefix land where it is cached", () => {
    // 7 conversations x 6 turns (7 is prime to 4 ranks, so round-robin moves each conversation every turn);
    // each turn extends its conversation's prefix by 2 blocks
    const reqs: Array<TraceRequest> = []
    for (let turn = 0; turn < 6; turn++)
      for (let c = 0; c < 7; c++) {
        const blocks = 2 * (turn + 1)
        reqs.push({
          requestId: String(reqs.length),
          arrivalSeconds: turn * 2 + c * 0.05,
          inputLength: blocks * 512 + 100,
          outputLength: 4,
          hashIds: Array.from({ length: blocks }, (_, k) => c * 1000 + k)
        })
      }
    const config = { dpSize: 4, stepModel: fixedStep(0.02) }
    const affinity = simulate(config, reqs, findPolicy("cache-affinity")!)
    const rr = simulate(config, reqs, findPolicy("round-robin")!)
    expect(affinity.requests.finished).toBe(42)
    // every conversation stays where its prefix is: turn t (1..6) finds its first 2(t-1) blocks
    // cached, the most there is (15,360 of 22,104 prompt tokens)
    expect(affinity.prefixCacheHitRate).toBeCloseTo(15_360 / 22_104, 9)
    expect(rr.prefixCacheHitRate).toBeLessThan(0.15)
  })
})
