import { readFileSync } from "node:fs"
import { type Policy, roundRobin, vllmKvPressure } from "@loadledger/policies"
import { describe, expect, it } from "vitest"
import { type SimConfig, type StepModel, simulate } from "../src/index.js"
import { asSimPolicy, fixture, req } from "./helpers.js"

// fixtures/cases/scenarios.json, case S03 (vllm-project/vllm PR #41626), kind simulator, part (c).
interface S03Inputs {
  readonly dp: number
  readonly broadcastIntervalMs: number
  readonly rank0: {
    readonly stepDurationMs: number
    readonly promptTokens: number
    readonly nextPublishMs: number
  }
  readonly rank1: { readonly stepDurationMs: number; readonly runningContextTokens: number }
  readonly requests: { readonly count: number; readonly inputTokens: number }
}
const cases = JSON.parse(readFileSync(fixture("fixtures/cases/scenarios.json"), "utf8")) as ReadonlyArray<{
  readonly id: string
  readonly inputs: unknown
}>
const inputs = cases.find((c) => c.id === "S03")!.inputs as S03Inputs

// Ranks step independently here (the case has rank 0 in one 2,000 ms step while rank 1 runs 30 ms
// steps). Rank 0's prefill of the 32,768-token prompt takes 2,000 ms; every other step 30 ms.
const stepModel: StepModel = (ranks) => ({
  stepSeconds:
    ranks[0]!.extendTokens >= inputs.rank0.promptTokens
      ? inputs.rank0.stepDurationMs / 1000
      : inputs.rank1.stepDurationMs / 1000,
  tokenImbalanceRatio: 1,
  ranks: ranks.map(() => ({ syncWaitSeconds: 0 }))
})

const trace = [
  req(0, 0, inputs.rank0.promptTokens, 200, { dpRank: 0 }),
  req(1, 0, inputs.rank1.runningContextTokens, 2000, { dpRank: 1 }),
  ...Array.from({ length: inputs.requests.count }, (_, j) =>
    req(2 + j, (50 + 100 * j) / 1000, inputs.requests.inputTokens, 10)
  )
]

const config: SimConfig = {
  dpSize: inputs.dp,
  stepModel,
  lockstep: false,
  engine: "vllm",
  coordinatorIntervalSeconds: inputs.broadcastIntervalMs / 1000,
  chunkedPrefillTokens: inputs.rank0.promptTokens,
  recordRequests: true
}

describe("S03 loads published only after a long GPU step (simulator part c)", () => {
  for (const policy of [roundRobin, vllmKvPressure] as ReadonlyArray<Policy<unknown>>) {
    it(`${policy.name}: no request sent to rank 0 starts before rank 0's 2,000 ms step ends`, () => {
      const r = simulate(config, trace, asSimPolicy(policy))
      expect(r.status._tag).toBe("Completed")
      const toRank0 = r.outcomes!.filter((o) => o.rank === 0 && Number(o.requestId) >= 2)
      if (policy.name === roundRobin.name) expect(toRank0.length).toBe(10)
      for (const o of toRank0)
        expect(o.firstScheduledSeconds!).toBeGreaterThanOrEqual(inputs.rank0.nextPublishMs / 1000)
      // the long prompt itself runs from t = 0 and yields its first token at 2,000 ms
      const long = r.outcomes!.find((o) => o.requestId === "0")!
      expect(long.firstScheduledSeconds).toBe(0)
      expect(long.firstTokenSeconds).toBe(2)
      // requests on rank 1 start at its next 30 ms step boundary after arrival, not later
      for (const o of r.outcomes!.filter((o) => o.rank === 1 && Number(o.requestId) >= 2))
        expect(o.firstScheduledSeconds! - o.arrivalSeconds).toBeLessThanOrEqual(0.03 + 1e-9)
    })
  }
})
