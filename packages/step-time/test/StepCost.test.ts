/**
 * `stepCostFromAggregates`, the simulator's lean step cost, against the full
 * `stepTimeFromAggregates` it must equal to the last bit.
 */
import { fc, test } from "@fast-check/vitest"
import { describe, expect, it } from "vitest"
import { aggregate, stepCostFromAggregates, stepTimeFromAggregates } from "../src/index.js"
import { arbPresetConfig, arbRanks, glm } from "./arbitraries.js"

const arbConfig = arbPresetConfig({ dsa: true })

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
