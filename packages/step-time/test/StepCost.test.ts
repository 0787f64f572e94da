/**
 * `stepCostFromAggregates`, the simulator's lean step cost, against the full
 * `stepTimeFromAggregates` it must equal to the last bit.
 */
import { fc, test } from "@fast-check/vitest"
import { describe, expect, it } from "vitest"
import { aggregate, gpus, models, stepCostFromAggregates, stepTimeFromAggregates } from "../src/index.js"

const glm = { model: models["glm-5.3-dense"]!, gpu: gpus["h200"]! }
const arbBatch = fc.record({
  decode: fc.array(fc.integer({ min: 1, max: 300_000 }), { maxLength: 6 }),
  extend: fc.array(
    fc.record({ prefix: fc.integer({ min: 0, max: 100_000 }), tokens: fc.integer({ min: 1, max: 16_384 }) }),
    { maxLength: 2 }
  )
})
const arbRanks = fc.array(arbBatch, { minLength: 1, maxLength: 8 })
const arbConfig = fc.constantFrom(
  glm,
  { model: models["glm-5.3"]!, gpu: gpus["h200"]! },
  { model: models["deepseek-v3"]!, gpu: gpus["b200"]! },
  { model: models["llama2-70b"]!, gpu: gpus["a100-80gb"]! },
  { model: models["bloom-176b"]!, gpu: gpus["h100-80gb"]! }
)

describe("stepCostFromAggregates (the simulator's lean cost)", () => {
  test.prop([arbConfig, arbRanks, fc.boolean()])(
    "equals the full result's step time, token imbalance and every sync wait, to the last bit",
    (config, ranks, exactKv) => {
      // with the exact KV reads of `aggregate`, or without them (the estimated path)
      const aggs = ranks.map((b) => {
        const a = aggregate(b, config.model.attention.sparseTopK)
        return exactKv ? a : { ...a, kvReadPairs: undefined, denseKvReadPairs: undefined }
      })
      const full = stepTimeFromAggregates(config, aggs)
      const lean = stepCostFromAggregates(config, aggs)
      expect(lean.stepSeconds).toBe(full.stepSeconds)
      expect(lean.tokenImbalanceRatio).toBe(full.tokenImbalanceRatio)
      expect(lean.syncWaitSeconds.length).toBe(full.ranks.length)
      for (let i = 0; i < full.ranks.length; i++)
        expect(lean.syncWaitSeconds[i]).toBe(full.ranks[i]!.syncWaitSeconds)
    }
  )

  it("no rank: no work, imbalance 1, no waits", () => {
    const lean = stepCostFromAggregates(glm, [])
    expect(lean.stepSeconds).toBe(stepTimeFromAggregates(glm, []).stepSeconds)
    expect(lean.tokenImbalanceRatio).toBe(1)
    expect(lean.syncWaitSeconds).toEqual([])
  })
})
