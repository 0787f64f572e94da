import type { Policy, PolicyOptions } from "@loadledger/policies"
import { findPolicy, glm53H200StepCost } from "@loadledger/policies"
import { gpus, models } from "@loadledger/step-time"
import { describe, expect, it } from "vitest"
import { type SimConfig, simulate, stepModelFor } from "../src/index.js"
import { fixedStep, req } from "./helpers.js"

interface Seen {
  readonly options: PolicyOptions
  readonly routed: Array<string>
  readonly finished: Array<string>
  readonly observedAt: Array<number>
}

// A policy factory that records, per front end, what it was asked to do (state stays immutable).
const recording =
  (log: Array<Seen>) =>
  (options: PolicyOptions): Policy<unknown> => {
    const seen: Seen = { options, routed: [], finished: [], observedAt: [] }
    log.push(seen)
    return {
      name: "recording",
      init: () => 0,
      observe: (s, _loads, now) => {
        seen.observedAt.push(now)
        return s
      },
      route: (s, r) => {
        seen.routed.push(r.requestId)
        return { _tag: "Routed", rank: Number(r.requestId) % 2, state: s, explanation: {} }
      },
      finish: (s, ids) => {
        seen.finished.push(...ids)
        return s
      },
      setStatus: (s) => s
    }
  }

// what `stepCostFrom` fits from a constant 10 ms step: every step costs the same
const flat = {
  chunkTokens: 8192,
  extendStepSeconds: 0.01,
  extendSecondsPerToken: 0,
  extendSecondsPerTokenPerPrefixToken: 0,
  decodeSecondsPerRequest: 0,
  decodeSecondsPerContextToken: 0
}

describe("vLLM front ends", () => {
  const trace = Array.from({ length: 9 }, (_, i) => req(i, i * 0.05, 50, 4))
  it("with no engine in the config, a policy that names vLLM runs behind vLLM front ends (frontEnds honoured)", () => {
    // before, the engine defaulted to SGLang whatever the policy: frontEnds was silently 1
    const log: Array<Seen> = []
    const r = simulate({ dpSize: 2, stepModel: fixedStep(0.01), frontEnds: 3 }, trace, {
      name: "recording",
      make: recording(log),
      engine: "vllm"
    })
    expect(r.requests.finished).toBe(9)
    expect(log.map((s) => s.options.clientCount)).toEqual([3, 3, 3])
    // the registry's vLLM balancer carries its engine; an explicit engine still wins
    expect(findPolicy("vllm-kv-pressure")?.engine).toBe("vllm")
    const sg: Array<Seen> = []
    simulate({ dpSize: 2, stepModel: fixedStep(0.01), frontEnds: 3, engine: "sglang" }, trace, {
      name: "recording",
      make: recording(sg),
      engine: "vllm"
    })
    expect(sg.map((s) => s.options.clientCount)).toEqual([1])
  })
  it("each front end has its own policy state, routes its share of arrivals, and hears only its own finishes", () => {
    const log: Array<Seen> = []
    const r = simulate({ dpSize: 2, stepModel: fixedStep(0.01), engine: "vllm", frontEnds: 3 }, trace, {
      name: "recording",
      make: recording(log)
    })
    expect(r.requests.finished).toBe(9)
    expect(log.map((s) => s.options)).toEqual(
      // the engines' running-request cap (default 64) and step cost reach every front end's policy
      [0, 1, 2].map((i) => ({
        clientCount: 3,
        clientIndex: i,
        seed: 0,
        maxRunningRequests: 64,
        stepCost: flat
      }))
    )
    expect(log.map((s) => s.routed)).toEqual([
      ["0", "3", "6"],
      ["1", "4", "7"],
      ["2", "5", "8"]
    ])
    for (const s of log) expect([...s.finished].sort()).toEqual([...s.routed].sort())
    // the coordinator publishes to every front end, no more often than every 100 ms
    const at = log[0]!.observedAt
    expect(log[1]!.observedAt).toEqual(at)
    for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(0.1 - 1e-12)
  })
  it("SGLang has one controller, which receives every step's snapshots", () => {
    const log: Array<Seen> = []
    const r = simulate({ dpSize: 2, stepModel: fixedStep(0.01), engine: "sglang", frontEnds: 3 }, trace, {
      name: "recording",
      make: recording(log)
    })
    expect(log).toHaveLength(1)
    expect(log[0]!.observedAt).toHaveLength(r.steps)
    const capped: Array<Seen> = []
    simulate({ dpSize: 2, stepModel: fixedStep(0.01), engine: "sglang", maxRunningRequests: 5 }, trace, {
      name: "recording",
      make: recording(capped)
    })
    expect(capped.map((s) => s.options)).toEqual([
      { clientCount: 1, clientIndex: 0, seed: 0, maxRunningRequests: 5, stepCost: flat }
    ])
  })
  it("the policy's step cost is fitted from the run's own step model and chunk size", () => {
    const costOf = (config: Omit<SimConfig, "dpSize">) => {
      const log: Array<Seen> = []
      simulate({ dpSize: 8, ...config }, trace, { name: "recording", make: recording(log) })
      return log[0]!.options.stepCost
    }
    const glm = { model: models["glm-5.3"]!, gpu: gpus.h200! }
    expect(costOf({ stepModel: stepModelFor(glm) })).toEqual(glm53H200StepCost)
    expect(costOf({ stepModel: stepModelFor(glm), chunkedPrefillTokens: 4096 })?.chunkTokens).toBe(4096)
    // another model, another cost: DeepSeek-V3's dense MLA prefills a token about twice as slowly
    const ds = costOf({ stepModel: stepModelFor({ model: models["deepseek-v3"]!, gpu: gpus.h200! }) })
    expect(ds!.extendSecondsPerToken / glm53H200StepCost.extendSecondsPerToken).toBeGreaterThan(1.5)
  })
  it("vllm-kv-pressure with three front ends places every request once", () => {
    const r = simulate(
      { dpSize: 4, stepModel: fixedStep(0.01), engine: "vllm", frontEnds: 3 },
      Array.from({ length: 60 }, (_, i) => req(i, i * 0.01, 500, 8)),
      findPolicy("vllm-kv-pressure")!
    )
    expect(r.requests.finished).toBe(60)
    expect(r.requestsPerRank.reduce((a, b) => a + b, 0)).toBe(60)
  })
})
