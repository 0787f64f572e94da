import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import {
  admitCount,
  chunkedPrefillTimeline,
  gpus,
  lockstepSyncWait,
  models,
  type RankBatch,
  runningCapacity,
  stepTime
} from "../src/index.js"

interface Scenario {
  readonly id: string
  readonly kind: string
  readonly inputs: Record<string, unknown>
  readonly expected: Record<string, unknown>
}
const scenarios: ReadonlyArray<Scenario> = JSON.parse(
  readFileSync(new URL("../../../fixtures/cases/scenarios.json", import.meta.url), "utf8")
)
const byId = (id: string) => scenarios.find((s) => s.id === id)!
const glm = { model: models["glm-5.3-dense"]!, gpu: gpus["h200"]! }
const idle: RankBatch = { decode: [], extend: [] }

it("every case of kind step-time is covered here", () => {
  expect(scenarios.filter((s) => s.kind === "step-time").map((s) => s.id)).toEqual(["S17", "S18", "S20"])
})

describe("S16 step-time part: one busy rank in a DP-4 engine", () => {
  const s = byId("S16")
  const ranks = s.inputs["ranks"] as Record<string, { running: number; queue: number }>
  const exp = (s.expected["stepTime"] as Record<string, unknown>) ?? {}
  const balanced = exp["balanced"] as { perRank: ReadonlyArray<number>; dummyRanks: number }

  it("S16 while rank 2 alone has work, every step has 3 dummy ranks and costs rank 2's step time", () => {
    // rank 2 admits one request per step; each admitted request decodes at a 4K context (added)
    let running = ranks["2"]!.running
    let queue = ranks["2"]!.queue
    let steps = 0
    let dummyRankSteps = 0
    while (queue > 0) {
      const admit = Math.min(queue, s.inputs["admissionPerStepRank2"] as number)
      queue -= admit
      running += admit
      const batches: Array<RankBatch> = [0, 1, 2, 3].map((r) =>
        r === 2 ? { decode: Array(running).fill(4096), extend: [] } : idle
      )
      const r = stepTime(glm, batches)
      const alone = stepTime(glm, [batches[2]!])
      expect(r.idleRanks).toBe(exp["dummyRanksPerStep"])
      // the step's attention is rank 2's: the idle ranks wait for it at every layer
      expect(r.attentionSeconds).toBe(r.ranks[2]!.localSeconds)
      expect(r.attentionSeconds).toBe(alone.attentionSeconds)
      for (const k of [0, 1, 3]) expect(r.ranks[k]!.syncWaitSeconds).toBeGreaterThan(0)
      steps++
      dummyRankSteps += r.idleRanks
    }
    expect(steps).toBeGreaterThanOrEqual(exp["stepsToDrainAtLeast"] as number)
    expect(dummyRankSteps).toBeGreaterThanOrEqual(exp["dummyRankStepsAtLeast"] as number)
  })

  it("S16 routing the same 12 requests 3/3/3/3 gives 0 dummy ranks and no longer step", () => {
    const total = Object.values(ranks).reduce((a, r) => a + r.running + r.queue, 0)
    expect(total).toBe(12)
    const r = stepTime(
      glm,
      balanced.perRank.map((n) => ({ decode: Array(n).fill(4096), extend: [] }))
    )
    expect(r.idleRanks).toBe(balanced.dummyRanks)
    const skew = stepTime(glm, [idle, idle, { decode: Array(12).fill(4096), extend: [] }, idle])
    expect(r.stepSeconds).toBeLessThan(skew.stepSeconds)
  })
})

describe("S17 prefill-first scheduling on one DP-attention rank", () => {
  const s = byId("S17")
  const rank0 = s.inputs["rank0"] as { promptTokens: number; chunkTokens: number; extendSteps: number }
  const extendStepSeconds = (s.inputs["extendStepMs"] as number) / 1000
  const decodeStepSeconds = (s.inputs["decodeStepMs"] as number) / 1000
  const n0 = s.expected["N0"] as Record<string, number>
  const n2 = s.expected["N2"] as Record<string, number>
  const chunks = rank0.promptTokens / rank0.chunkTokens

  it("S17 step time is the max over ranks: the chunk holds every decoder", () => {
    expect(chunks).toBe(rank0.extendSteps)
    const w = lockstepSyncWait(
      [extendStepSeconds, decodeStepSeconds, decodeStepSeconds, decodeStepSeconds],
      1
    )
    expect(w.maxLocalSecondsPerLayer).toBe(extendStepSeconds)
    // the same rule in the model: a rank with an 8K chunk holds three decoding ranks
    const r = stepTime(glm, [
      { decode: [], extend: [{ prefix: 0, tokens: rank0.chunkTokens }] },
      ...Array.from({ length: 3 }, () => ({ decode: Array(32).fill(4096), extend: [] }))
    ])
    const decodeOnly = stepTime(
      glm,
      Array.from({ length: 4 }, () => ({ decode: Array(32).fill(4096), extend: [] }))
    )
    expect(r.stepSeconds).toBeGreaterThan(5 * decodeOnly.stepSeconds)
  })

  /** The S17 timeline of the long prompt's chunks with `prefillDecodeInterval` = `interval`. */
  const timeline = (interval: number) =>
    chunkedPrefillTimeline({
      extendChunks: chunks,
      prefillDecodeInterval: interval,
      extendStepSeconds,
      decodeStepSeconds
    })

  it("S17 N=0: 16 consecutive 600 ms steps, median ITL 600 ms, prompt done at 9,600 ms", () => {
    const t = timeline(0)
    expect(t.itlSeconds.filter((x) => x === extendStepSeconds).length).toBe(n0["consecutive600msItls"])
    expect(t.kinds.every((k) => k === "extend")).toBe(true)
    expect(t.medianItlSeconds * 1000).toBeCloseTo(n0["medianItlMs"]!, 9)
    expect(t.extendDoneSeconds * 1000).toBeCloseTo(n0["longPromptDoneMs"]!, 9)
  })

  it("S17 N=2: at most 1 extend in any 3 steps, 16 + 30 steps, median ITL 30 ms, done at 10,500 ms", () => {
    const t = timeline(2)
    for (let i = 0; i + 3 <= t.kinds.length; i++)
      expect(t.kinds.slice(i, i + 3).filter((k) => k === "extend").length).toBeLessThanOrEqual(
        n2["maxExtendStepsPer3"]!
      )
    expect(t.extendSteps).toBe(n2["extendSteps"])
    expect(t.decodeSteps).toBe(n2["decodeSteps"])
    expect(t.medianItlSeconds * 1000).toBeCloseTo(n2["medianItlMs"]!, 9)
    expect(t.extendDoneSeconds * 1000).toBeCloseTo(n2["longPromptDoneMs"]!, 9)
  })
})

describe("S18 idle-rank dummy rows and MAX_LEN padding", () => {
  const s = byId("S18")
  const skewed = s.inputs["skewed"] as ReadonlyArray<number>
  const balanced = s.inputs["balanced"] as ReadonlyArray<number>
  const toRanks = (xs: ReadonlyArray<number>): Array<RankBatch> =>
    xs.map((e) => (e > 0 ? { decode: [], extend: [{ prefix: 0, tokens: e }] } : idle))

  it("S18 MoE tokens for [8192, 0, ...] are at most 8,192 + 7, never the padded 65,536", () => {
    const r = stepTime(glm, toRanks(skewed))
    expect(r.moeTokens).toBeLessThanOrEqual(s.expected["moeTokensSkewedMax"] as number)
    expect(r.moeTokens).not.toBe(s.expected["buggyMoeTokens"])
    // the MoE term is the one for 8,192 real tokens: the same as the balanced layout's
    expect(r.moeSeconds).toBe(stepTime(glm, toRanks(balanced)).moeSeconds)
  })

  it("S18 step time of [1024] x 8 < step time of [8192, 0, ...]", () => {
    expect(balanced.reduce((a, b) => a + b, 0)).toBe(skewed.reduce((a, b) => a + b, 0))
    expect(stepTime(glm, toRanks(balanced)).stepSeconds).toBeLessThan(
      stepTime(glm, toRanks(skewed)).stepSeconds
    )
  })
})

describe("S20 running batch per rank reaches the DP-attention cap", () => {
  const s = byId("S20")
  const dp = s.inputs["dp"] as number
  const maxRunningRequests = s.inputs["maxRunningRequests"] as number

  it("S20 cap 16 per rank; steady state 16 running per rank, 128 in the fleet", () => {
    const cap = runningCapacity({ maxRunningRequests, dpSize: dp })
    expect(cap.perRank).toBe(s.inputs["capPerRank"])
    // steady queue of >= 1 per rank; every 4th step one request finishes on each rank (added)
    let running = Array<number>(dp).fill(0)
    const waiting = Array<number>(dp).fill(s.inputs["queuePerRankAtLeast"] as number)
    for (let step = 0; step < 64; step++) {
      if (step % 4 === 3) running = running.map((r) => Math.max(0, r - 1))
      running = running.map(
        (r, i) => r + admitCount({ running: r, waiting: waiting[i]!, perRankCap: cap.perRank })
      )
      if (step >= 20) {
        for (const r of running) expect(r).toBe(s.expected["runningPerRank"])
        expect(running.reduce((a, b) => a + b, 0)).toBe(s.expected["fleetConcurrency"])
      }
    }
    // the step model takes the full batch: 16 decodes on each of 8 ranks = 128 MoE tokens
    const r = stepTime(
      glm,
      running.map((n) => ({ decode: Array(n).fill(4096), extend: [] }))
    )
    expect(r.moeTokens).toBe(s.expected["fleetConcurrency"])
    const buggy = s.expected["buggyReference"] as { perRank: number; fleet: number }
    expect(cap.perRank).not.toBe(buggy.perRank)
    expect(cap.fleet).not.toBe(buggy.fleet)
  })

  it("S20 admission never exceeds the cap or the queue", () => {
    expect(admitCount({ running: 15, waiting: 5, perRankCap: 16 })).toBe(1)
    expect(admitCount({ running: 16, waiting: 5, perRankCap: 16 })).toBe(0)
    expect(admitCount({ running: 3, waiting: 2, perRankCap: 16 })).toBe(2)
    expect(admitCount({ running: 17, waiting: 2, perRankCap: 16 })).toBe(0)
  })
})
