import { readFileSync } from "node:fs"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import {
  type CalibrationSample,
  crossValidate,
  defaultPriors,
  type Efficiencies,
  fit,
  gpus,
  identifiability,
  mape,
  models,
  predict,
  splitwiseSamples,
  stepTime,
  withTp
} from "../src/index.js"

const fixture = (f: string) =>
  readFileSync(new URL(`../../../fixtures/calibration/splitwise/${f}`, import.meta.url), "utf8")
const csv = fixture("perf_model_llama2-70b.csv")
const bloomCsv = fixture("perf_model_bloom-176b.csv")
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

describe("splitwise files of any models", () => {
  it("the vendored BLOOM-176B rows: splitwise-sim's 315 rows (TP8 on three GPUs), same header as the Llama-2-70B file", () => {
    const lines = bloomCsv.trimEnd().split("\n")
    expect(lines[0]).toBe(csv.split("\n")[0])
    expect(lines.length - 1).toBe(315)
    expect(lines.slice(1).every((l) => l.startsWith("bloom-176b,") && l.endsWith(",8"))).toBe(true)
  })
  it("each row's model column picks its spec (no model option)", () => {
    const s = Result.getOrThrow(splitwiseSamples(bloomCsv, {}))
    expect(s.length).toBe(2 * 315)
    expect(new Set(s.map((x) => `${x.model.name} tp${x.model.tp}`))).toEqual(new Set(["bloom-176b tp8"]))
    expect(new Set(s.map((x) => x.gpu.name))).toEqual(new Set(["a100-80gb", "h100-80gb", "h100-80gb-pcap"]))
    expect(s.every((x) => x.source === "splitwise")).toBe(true)
    // configurations name the model: the two models' TP8 rows are distinct setups
    expect(s[0]!.configuration).toBe("bloom-176b a100-80gb tp8 batch 1 prompt 512 tokens 128 decode")
    // the whole upstream file (both models) reads in one call; options.model keeps one model
    const both = `${csv}${bloomCsv.slice(bloomCsv.indexOf("\n") + 1)}`
    expect(Result.getOrThrow(splitwiseSamples(both, {})).length).toBe(2 * (945 + 315))
    const onlyBloom = Result.getOrThrow(splitwiseSamples(both, { model: models["bloom-176b"]! }))
    expect(onlyBloom.length).toBe(2 * 315)
    expect(onlyBloom.every((x) => x.model.name === "bloom-176b")).toBe(true)
  })
  it("a model with no spec is a typed error naming it; options.models supplies the spec", () => {
    const opt = csv.split("\n").slice(0, 2).join("\n").replace("llama2-70b,", "opt-66b,")
    const r = splitwiseSamples(opt, {})
    expect(Result.isFailure(r) && r.failure).toMatchObject({
      _tag: "CalibrationError",
      field: "model",
      row: 2
    })
    expect(Result.isFailure(r) && r.failure.message).toMatch(/opt-66b/)
    const spec = { ...llama, name: "opt-66b" }
    const ok = Result.getOrThrow(splitwiseSamples(opt, { models: { "opt-66b": spec } }))
    expect(ok.map((x) => x.model.name)).toEqual(["opt-66b", "opt-66b"])
    // no prototype lookups: "constructor" is not a model
    const proto = splitwiseSamples(opt.replace("opt-66b,", "constructor,"), {})
    expect(Result.isFailure(proto) && proto.failure.field).toBe("model")
  })
  it("a file without a model column needs options.model; options.source names the stack", () => {
    const header = "hardware,prompt_size,batch_size,token_size,prompt_time,token_time,tensor_parallel\n"
    const row = "h100-80gb,512,4,128,132.7,31.6,8\n"
    const r = splitwiseSamples(header + row, {})
    expect(Result.isFailure(r) && r.failure).toMatchObject({ field: "model", row: 2 })
    const s = Result.getOrThrow(splitwiseSamples(header + row, { model: llama, source: "my-vllm" }))
    expect(s.map((x) => `${x.model.name} ${x.source}`)).toEqual(["llama2-70b my-vllm", "llama2-70b my-vllm"])
  })
  it("the bloom-176b preset is bigscience/bloom's config.json: 70 layers, hidden 14336, 112 heads, vocab 250880, 4h GELU MLP", () => {
    const b = models["bloom-176b"]!
    const h = 14336
    expect([b.numLayers, b.hiddenSize, b.vocabSize, b.attention.numHeads]).toEqual([70, h, 250880, 112])
    // MHA (ALiBi: no rotary or position weights): fused QKV 3h x h plus the dense output h x h
    expect(b.attention.kvHeads).toBe(112)
    expect(b.attention.paramsPerLayer).toBe(4 * h * h)
    expect(b.attention.kvBytesPerTokenPerLayer).toBe(2 * h * 2)
    // dense_h_to_4h and dense_4h_to_h: two matrices (GELU, not gated)
    expect(b.mlp).toEqual({ kind: "dense", paramsPerLayer: 2 * h * 4 * h })
    // 176B parameters with the tied embedding (biases and norms aside)
    expect(((b.attention.paramsPerLayer + 8 * h * h) * 70 + 250880 * h) / 1e9).toBeCloseTo(176.2, 1)
  })
})

describe("overheads belong to the stack that measured a row, efficiencies to the GPU", () => {
  const gpu = gpus["h100-80gb"]!
  const gpuTruth = {
    memoryEfficiency: 0.82,
    computeEfficiency: 0.61,
    linkEfficiency: 0.55,
    collectiveLatencySeconds: 4e-6
  }
  // a serving stack's whole steps carry its CPU costs; a kernel profiler's layers only GPU time
  const serving = {
    ...gpuTruth,
    perLayerOverheadSeconds: 40e-6,
    perRequestSecondsPerLayer: 1e-6,
    fixedOverheadSeconds: 0.008,
    perRequestOverheadSeconds: 0.3e-3
  }
  const kernels = { ...gpuTruth, perLayerOverheadSeconds: 8e-6 }
  const steps = (name: string, tps: ReadonlyArray<number>): Array<CalibrationSample> =>
    tps.flatMap((tp) =>
      [1, 4, 16, 64].flatMap((b) => {
        const model = withTp(models[name]!, tp)
        const dec = [{ decode: Array<number>(b).fill(1000), extend: [] }]
        const pre = [
          { decode: [], extend: Array.from({ length: Math.min(b, 8) }, () => ({ prefix: 0, tokens: 1000 })) }
        ]
        return [dec, pre].map((ranks) => ({
          model,
          gpu,
          ranks,
          source: "serving",
          measuredSeconds: stepTime({ model, gpu, params: serving }, ranks).stepSeconds
        }))
      })
    )
  const layers = (name: string): Array<CalibrationSample> =>
    [1, 8, 64, 512, 4096].map((tokens) => {
      const s = {
        kind: "layer" as const,
        model: withTp(models[name]!, 8),
        gpu,
        tokens,
        source: "kernels",
        measuredSeconds: 1
      }
      return { ...s, measuredSeconds: predict(s, kernels) }
    })
  const train = [...steps("llama2-70b", [2, 4, 8]), ...layers("llama2-70b"), ...layers("bloom-176b")]
  const f = Result.getOrThrow(fit(train))

  it("one parameter set per stack, sharing the GPU's efficiencies", () => {
    expect(Object.keys(f.stacks)).toEqual(["serving", "kernels"])
    expect(f.params).toEqual(f.stacks["serving"])
    for (const k of [
      "memoryEfficiency",
      "computeEfficiency",
      "linkEfficiency",
      "collectiveLatencySeconds"
    ] as const)
      expect(f.stacks["kernels"]![k]).toBe(f.stacks["serving"]![k])
    // the serving stack's per-request CPU cost is recovered; the kernel rows keep their small per-layer cost
    expect(f.stacks["serving"]!.perRequestOverheadSeconds).toBeCloseTo(0.3e-3, 4)
    expect(f.stacks["kernels"]!.perLayerOverheadSeconds).toBeLessThan(10e-6)
    // an overhead no row of a stack depends on stays at its prior
    expect(f.stacks["kernels"]!.fixedOverheadSeconds).toBeCloseTo(
      defaultPriors.fixedOverheadSeconds.centre,
      6
    )
  })
  it("predicts another model's steps on the same stack (BLOOM-176B, never fitted) within 1%", () => {
    expect(mape(steps("bloom-176b", [8]), f).mape).toBeLessThan(1)
  })
  it("collectives alone fit the GPU's link parameters; the overheads stay at the start", () => {
    const link = { ...gpuTruth, collectiveLatencySeconds: 6e-6, linkEfficiency: 0.5 }
    const rows = [1 << 12, 1 << 16, 1 << 20, 1 << 24, 1 << 28].map((bytes) => {
      const s = { kind: "all-reduce" as const, gpu, gpus: 8, bytes, measuredSeconds: 1 }
      return { ...s, measuredSeconds: predict(s, link) }
    })
    const c = Result.getOrThrow(fit(rows))
    expect(c.stacks).toEqual({})
    expect(c.params.linkEfficiency).toBeCloseTo(0.5, 2)
    expect(c.params.fixedOverheadSeconds).toBe(defaultPriors.fixedOverheadSeconds.centre)
    expect(c.mape).toBeLessThan(1)
  })
  it("a source named like an Object property is a stack like any other", () => {
    const odd = train.map((s) => (s.source === "serving" ? { ...s, source: "constructor" } : s))
    const o = Result.getOrThrow(fit(odd))
    expect(Object.keys(o.stacks)).toEqual(["constructor", "kernels"])
    expect(mape(odd, o).mape).toBeCloseTo(f.mape, 6)
  })
  it("identifiability labels each stack's overheads", () => {
    const r = identifiability(train, f)
    expect(r.unused).toContain("fixedOverheadSeconds (kernels)")
    expect(r.unused).not.toContain("fixedOverheadSeconds (serving)")
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
