import { readFileSync } from "node:fs"
import { findPolicy, type Policy } from "@loadledger/policies"
import { gpus, models } from "@loadledger/step-time"
import { describe, expect, it } from "vitest"
import {
  detectTraceFormat,
  IMBALANCE_BUCKETS,
  isTraceError,
  kvPoolTokensFor,
  parseTrace,
  resolveConfig,
  type StepModel,
  scaleTrace,
  simulate,
  stepModelFor
} from "../src/index.js"
import { fixture } from "./helpers.js"

// The @example blocks of the public exports, and the package README's Usage block, as tests.
describe("docstring examples", () => {
  it("detectTraceFormat", () => {
    expect(
      detectTraceFormat('{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [0]}')
    ).toBe("mooncake")
  })
  it("isTraceError", () => {
    expect(isTraceError(parseTrace("not a trace"))).toBe(true)
  })
  it("IMBALANCE_BUCKETS: issue 5's sixteen SGLang buckets", () => {
    expect(IMBALANCE_BUCKETS).toEqual([1.0, 1.05, 1.1, 1.25, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64])
  })
  it("parseTrace", () => {
    const t = parseTrace(
      '{"timestamp": 1500, "input_length": 900, "output_length": 20, "hash_ids": [0, 1]}\n'
    )
    expect(Array.isArray(t) && t[0]!.arrivalSeconds === 1.5).toBe(true)
  })
  it("scaleTrace", () => {
    const t = scaleTrace([{ requestId: "0", arrivalSeconds: 4, inputLength: 10, outputLength: 1 }], {
      rateScale: 2
    })
    expect(t[0]!.arrivalSeconds).toBe(2)
  })
  it("resolveConfig", () => {
    const c = resolveConfig({
      dpSize: 8,
      stepModel: () => ({ stepSeconds: 0.03, tokenImbalanceRatio: 1, ranks: [] })
    })
    expect(c.chunkedPrefillTokens).toBe(8192)
    expect(c.engine).toBe("sglang")
  })
  it("StepModel", () => {
    const fixed: StepModel = (ranks) => ({
      stepSeconds: 0.03,
      tokenImbalanceRatio: 1,
      ranks: ranks.map(() => ({ syncWaitSeconds: 0 }))
    })
    expect(fixed([]).stepSeconds).toBe(0.03)
  })
  it("simulate", () => {
    const rr: Policy<number> = {
      name: "rr",
      init: () => 0,
      observe: (s) => s,
      finish: (s) => s,
      setStatus: (s) => s,
      route: (s, _r) => ({ _tag: "Routed", rank: s % 2, state: s + 1, explanation: {} })
    }
    const result = simulate(
      {
        dpSize: 2,
        stepModel: (ranks) => ({
          stepSeconds: 0.01,
          tokenImbalanceRatio: 1,
          ranks: ranks.map(() => ({ syncWaitSeconds: 0 }))
        })
      },
      [{ requestId: "a", arrivalSeconds: 0, inputLength: 100, outputLength: 3 }],
      { name: "rr", make: () => rr as Policy<unknown> }
    )
    expect(result.requests.finished).toBe(1)
    expect(result.ttftSeconds.p50).toBe(0.01)
  })
  it("stepModelFor: issue 5's batch-32 decode on glm-5.3 / h200 is about 30 ms", () => {
    const m = stepModelFor({ model: models["glm-5.3"]!, gpu: gpus["h200"]! })
    const w = {
      attentionPairs: 32768,
      tokens: 4,
      numDecodes: 4,
      extendTokens: 0,
      numRequests: 4,
      numExtends: 0
    }
    const cost = m(Array(8).fill(w))
    expect(cost.stepSeconds).toBeGreaterThan(0.03 * 0.85)
    expect(cost.stepSeconds).toBeLessThan(0.03 * 1.15)
    expect(cost.ranks).toHaveLength(8)
  })
  it("kvPoolTokensFor", () => {
    const tokens = kvPoolTokensFor(models["glm-5.3"]!, gpus["h200"]!)
    expect(tokens).toBeGreaterThan(100_000)
    // a bigger HBM leaves more room for KV, by exactly the extra bytes over bytes per token
    const bigger = kvPoolTokensFor(models["glm-5.3"]!, {
      ...gpus["h200"]!,
      hbmBytes: gpus["h200"]!.hbmBytes + (576 * 78 * 1000) / 0.88
    })
    expect(bigger - tokens).toBeGreaterThanOrEqual(999)
    expect(bigger - tokens).toBeLessThanOrEqual(1001)
  })
  it("README Usage", () => {
    const trace = parseTrace(
      readFileSync(fixture("examples/traces/mooncake/conversation_trace.jsonl"), "utf8")
    )
    if (isTraceError(trace)) throw new Error(`line ${trace.line}: ${trace.message}`)
    const model = models["glm-5.3"]!
    const gpu = gpus["h200"]!
    const result = simulate(
      { dpSize: 8, stepModel: stepModelFor({ model, gpu }), kvPoolTokens: kvPoolTokensFor(model, gpu) },
      trace.slice(0, 200),
      findPolicy("ledger-balanced")!
    )
    expect(result.requests.finished).toBe(200)
    expect(result.syncWaitShare).toBeGreaterThan(0)
    expect(result.syncWaitShare).toBeLessThan(1)
  })
})
