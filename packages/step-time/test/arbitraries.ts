// The step-time property tests' inputs: rank batches and the preset model + GPU pairs they run on.
import { fc } from "@fast-check/vitest"
import { gpus, models, type RankBatch } from "../src/index.js"

/** glm-5.3-dense on an H200: the issue 5 configuration. */
export const glm = { model: models["glm-5.3-dense"]!, gpu: gpus["h200"]! }

/** One rank's batch: up to 6 decodes (contexts 1..300K) and up to 2 extends. */
export const arbBatch: fc.Arbitrary<RankBatch> = fc.record({
  decode: fc.array(fc.integer({ min: 1, max: 300_000 }), { maxLength: 6 }),
  extend: fc.array(
    fc.record({ prefix: fc.integer({ min: 0, max: 100_000 }), tokens: fc.integer({ min: 1, max: 16_384 }) }),
    { maxLength: 2 }
  )
})

/** 1 to 8 ranks' batches. */
export const arbRanks = fc.array(arbBatch, { minLength: 1, maxLength: 8 })

/**
 * A preset on a GPU it is deployed on: glm-5.3-dense on H200, with `dsa` glm-5.3 (DeepSeek sparse
 * attention) on H200, then deepseek-v3 on B200, llama2-70b on A100 80GB, bloom-176b on H100 80GB
 * (MLA + MoE, GQA + dense, MHA + dense).
 */
export const arbPresetConfig = (options: { readonly dsa: boolean }) =>
  fc.constantFrom(
    glm,
    ...(options.dsa ? [{ model: models["glm-5.3"]!, gpu: gpus["h200"]! }] : []),
    { model: models["deepseek-v3"]!, gpu: gpus["b200"]! },
    { model: models["llama2-70b"]!, gpu: gpus["a100-80gb"]! },
    { model: models["bloom-176b"]!, gpu: gpus["h100-80gb"]! }
  )
