import { readFileSync } from "node:fs"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import {
  type CalibrationSample,
  crossValidate,
  type Efficiencies,
  fit,
  gpus,
  mape,
  models,
  predict,
  splitwiseSamples,
  stepTime,
  withTp
} from "../src/index.js"

const csv = readFileSync(
  new URL("../../../fixtures/calibration/splitwise/perf_model_llama2-70b.csv", import.meta.url),
  "utf8"
)
const llama = models["llama2-70b"]!

describe("splitwise llama2-70b profiles", () => {
  it("loads two samples (decode, prefill) per CSV row, in seconds", () => {
    const s = Result.getOrThrow(splitwiseSamples(csv, { model: llama }))
    expect(s.length).toBe(2 * 945)
    // first row: a100-80gb, TP2, prompt 512, batch 1, 128 tokens, token_time 54.8795 ms
    expect(s[0]!.phase).toBe("decode")
    expect(s[0]!.model.tp).toBe(2)
    expect(s[0]!.gpu.name).toBe("a100-80gb")
    expect(s[0]!.ranks[0]!.decode).toEqual([512 + 64])
    expect(s[0]!.measuredSeconds).toBeCloseTo(0.05487951193752838, 15)
    expect(s[1]!.phase).toBe("prefill")
    expect(s[1]!.ranks[0]!.extend).toEqual([{ prefix: 0, tokens: 512 }])
    expect(s[1]!.measuredSeconds).toBeCloseTo(0.1962532191537321, 15)
  })

  for (const hw of ["a100-80gb", "h100-80gb", "h100-80gb-pcap"]) {
    it(`${hw}: 5-fold held-out decode MAPE <= 10% (issue 5 target), whole configurations held out`, () => {
      const s = Result.getOrThrow(splitwiseSamples(csv, { model: llama, gpu: hw }))
      expect(s.length).toBe(2 * 315)
      const cv = Result.getOrThrow(crossValidate(s, 5, { holdOut: "configuration" }))
      const decode = cv.byGroup[`${hw}/decode`]!
      expect(decode.rows).toBe(315)
      expect(decode.mape).toBeLessThanOrEqual(10)
      expect(cv.byGroup[`${hw}/prefill`]!.rows).toBe(315)
    })
  }

  it("fitted efficiencies are physical: in (0, 1], overheads >= 0", () => {
    const s = Result.getOrThrow(splitwiseSamples(csv, { model: llama, gpu: "h100-80gb" }))
    const f = Result.getOrThrow(fit(s))
    for (const k of ["memoryEfficiency", "computeEfficiency", "linkEfficiency"] as const) {
      expect(f.params[k]).toBeGreaterThan(0)
      expect(f.params[k]).toBeLessThanOrEqual(1)
    }
    for (const k of [
      "collectiveLatencySeconds",
      "perLayerOverheadSeconds",
      "perRequestSecondsPerLayer",
      "fixedOverheadSeconds"
    ] as const)
      expect(f.params[k]).toBeGreaterThanOrEqual(0)
  })

  it("row-wise folds also meet the decode target", () => {
    const s = Result.getOrThrow(splitwiseSamples(csv, { model: llama, gpu: "a100-80gb" }))
    const cv = Result.getOrThrow(crossValidate(s, 5))
    expect(cv.byGroup["a100-80gb/decode"]!.mape).toBeLessThanOrEqual(10)
  })

  it("filters by --gpu and --tp", () => {
    const s = Result.getOrThrow(splitwiseSamples(csv, { model: llama, gpu: "h100-80gb", tp: 8 }))
    expect(s.length).toBe(2 * 105)
    expect(s.every((x) => x.model.tp === 8 && x.gpu.name === "h100-80gb")).toBe(true)
  })
})

describe("calibration works through physical features, not per-model constants", () => {
  const truth: Efficiencies = {
    memoryEfficiency: 0.82,
    computeEfficiency: 0.61,
    linkEfficiency: 0.55,
    collectiveLatencySeconds: 4e-6,
    perLayerOverheadSeconds: 25e-6,
    perRequestSecondsPerLayer: 1e-6,
    fixedOverheadSeconds: 0.004,
    eagerOverheadSecondsPerLayer: 30e-6,
    perRequestOverheadSeconds: 150e-6
  }
  const gpu = gpus["h100-80gb"]!
  const synth = (model: typeof llama, tp: number): Array<CalibrationSample> =>
    [1, 4, 16, 64].flatMap((batch) =>
      [512, 4096].flatMap((ctx) => {
        const m = withTp(model, tp)
        const dec = [{ decode: Array(batch).fill(ctx), extend: [] }]
        const pre = [
          {
            decode: [],
            extend: Array.from({ length: Math.min(batch, 8) }, () => ({ prefix: 0, tokens: ctx }))
          }
        ]
        return [
          {
            model: m,
            gpu,
            ranks: dec,
            measuredSeconds: stepTime({ model: m, gpu, params: truth }, dec).stepSeconds
          },
          {
            model: m,
            gpu,
            ranks: pre,
            measuredSeconds: stepTime({ model: m, gpu, params: truth }, pre).stepSeconds
          }
        ]
      })
    )

  it("fit on llama2-70b (TP 2/4/8), predict bloom-176b (TP8) on the same GPU within 1%", () => {
    const train = [2, 4, 8].flatMap((tp) => synth(llama, tp))
    const f = Result.getOrThrow(fit(train))
    expect(f.mape).toBeLessThan(1)
    const bloom = synth(models["bloom-176b"]!, 8)
    expect(mape(bloom, f.params).mape).toBeLessThan(1)
    // with the default (uncalibrated) parameters the same prediction is far off
    expect(mape(bloom, {}).mape).toBeGreaterThan(5)
  })

  it("a few corrupt rows (10x too fast) do not drag the fit off the others", () => {
    const clean = [2, 4, 8].flatMap((tp) => synth(llama, tp))
    const corrupt = clean.map((s, i) =>
      i % 16 === 5 ? { ...s, measuredSeconds: s.measuredSeconds / 10 } : s
    )
    const f = Result.getOrThrow(fit(corrupt))
    const good = clean.filter((_, i) => i % 16 !== 5)
    expect(mape(good, f.params).mape).toBeLessThan(1)
    // plain least squares (no down-weighting) is dragged well off by the same rows
    const plain = Result.getOrThrow(fit(corrupt, { outlierScale: 1e9 }))
    expect(mape(good, plain.params).mape).toBeGreaterThan(mape(good, f.params).mape)
  })

  it("predict() is the model's step time under the given parameters", () => {
    const s = synth(llama, 4)[0]!
    expect(predict(s, truth)).toBe(s.measuredSeconds)
  })
})

describe("errors are values", () => {
  it("fit with no samples names the field", () => {
    const r = fit([])
    expect(Result.isFailure(r) && r.failure).toMatchObject({ _tag: "CalibrationError", field: "samples" })
  })
  it("a non-positive measured time names the row", () => {
    const s = {
      model: llama,
      gpu: gpus["a100-80gb"]!,
      ranks: [{ decode: [10], extend: [] }],
      measuredSeconds: 0
    }
    const r = fit([s])
    expect(Result.isFailure(r) && r.failure).toMatchObject({ field: "measuredSeconds", row: 0 })
  })
  it("a bad CSV value names its column and line", () => {
    const bad =
      "model,hardware,prompt_size,batch_size,token_size,prompt_time,token_time,tensor_parallel\nx,h100-80gb,512,abc,128,1,1,2\n"
    const r = splitwiseSamples(bad, { model: llama })
    expect(Result.isFailure(r) && r.failure).toMatchObject({ field: "batch_size", row: 2 })
  })
  it("an unknown hardware name is an error, not a guess", () => {
    const bad =
      "model,hardware,prompt_size,batch_size,token_size,prompt_time,token_time,tensor_parallel\nllama2-70b,tpu-v5,512,1,128,1,1,2\n"
    const r = splitwiseSamples(bad, { model: llama })
    expect(Result.isFailure(r) && r.failure).toMatchObject({ field: "hardware", row: 2 })
  })
  it("a missing column is reported", () => {
    const r = splitwiseSamples("model,hardware\nx,h100-80gb\n", { model: llama })
    expect(Result.isFailure(r) && r.failure).toMatchObject({ _tag: "CalibrationError", field: "prompt_size" })
  })
})
