import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { models } from "@loadledger/step-time"
import { Command } from "commander"
import { afterEach, describe, expect, it, vi } from "vitest"
import * as calibrate from "../src/commands/calibrate.js"
import * as stepTimeCommand from "../src/commands/stepTime.js"

// only the two commands under test, so other commands' work in progress cannot break these tests
const run = async (...args: Array<string>): Promise<{ out: string; error?: string }> => {
  const p = new Command("loadledger").exitOverride()
  stepTimeCommand.register(p)
  calibrate.register(p)
  let out = ""
  const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk)
    return true
  })
  try {
    await p.parseAsync(["node", "loadledger", ...args])
    return { out }
  } catch (e) {
    return { out, error: e instanceof Error ? e.message : String(e) }
  } finally {
    spy.mockRestore()
  }
}
afterEach(() => {
  vi.restoreAllMocks()
})

const issueRanks = JSON.stringify([
  [8192, 8192, 8192, 204800],
  ...Array.from({ length: 7 }, () => [8192, 8192, 8192, 8192])
])
const profile = new URL("../../../fixtures/calibration/splitwise/perf_model_llama2-70b.csv", import.meta.url)
  .pathname

/** `loadledger step-time` of `ranks` (JSON text or a file) for a model on a GPU, then `extra` flags. */
const stepTime = (model: string, gpu: string, ranks: string, ...extra: Array<string>) =>
  run("step-time", "--model", model, "--gpu", gpu, "--ranks", ranks, ...extra)
/** The `--json` document of `stepTime`. */
const stepTimeJson = async (model: string, gpu: string, ranks: string, ...extra: Array<string>) =>
  JSON.parse((await stepTime(model, gpu, ranks, "--json", ...extra)).out)
/** `loadledger calibrate` on the Llama-2-70B splitwise profile, then `extra` flags. */
const calibrateLlama = (...extra: Array<string>) =>
  run("calibrate", "--profile", profile, "--model", "llama2-70b", ...extra)

describe("loadledger step-time", () => {
  it("--json has the issue's fields and exact numbers", async () => {
    const { out, error } = await stepTime("glm-5.3-dense", "h200", issueRanks, "--json")
    expect(error).toBeUndefined()
    const j = JSON.parse(out)
    for (const k of [
      "stepSeconds",
      "moeSeconds",
      "commSeconds",
      "tokenImbalanceRatio",
      "pairsImbalanceRatio",
      "cudaGraph"
    ])
      expect(j).toHaveProperty(k)
    expect(j.ranks).toHaveLength(8)
    for (const k of [
      "attentionPairs",
      "kvBytesRead",
      "tokens",
      "localSeconds",
      "syncWaitSeconds",
      "imbalancePairs",
      "idle"
    ])
      expect(j.ranks[0]).toHaveProperty(k)
    expect(j.ranks[0].attentionPairs).toBe(229_376)
    expect(j.ranks[3].attentionPairs).toBe(32_768)
    expect(j.ranks[0].kvBytesRead).toBe(229_376 * 576 * 78)
    expect(j.ranks[5].imbalancePairs).toBe(196_608)
    expect(j.pairsImbalanceRatio).toBe(4)
  })

  it("accepts {decode, extend} objects and a ranks file; idle rank + extend -> no CUDA graph", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ll-st-"))
    const f = join(dir, "ranks.json")
    writeFileSync(f, JSON.stringify([{ decode: [100], extend: [{ prefix: 0, tokens: 512 }] }, []]))
    const { out, error } = await stepTime("glm-5.3", "h200", f, "--json")
    expect(error).toBeUndefined()
    const j = JSON.parse(out)
    expect(j.cudaGraph).toBe(false)
    expect(j.ranks[1].idle).toBe(true)
    expect(j.ranks[0].tokens).toBe(513)
  })

  it("prints a readable table without --json", async () => {
    const { out } = await stepTime("glm-5.3-dense", "h200", issueRanks)
    expect(out).toContain("glm-5.3-dense on h200, 8 DP ranks, 78 layers")
    expect(out).toContain("229,376")
    expect(out).toContain("196,608")
    expect(out).toContain("10.31")
    expect(out).toContain("1.47")
  })

  it("a JSON model spec file works like the preset", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ll-st-"))
    const f = join(dir, "model.json")
    writeFileSync(f, JSON.stringify(models["glm-5.3"]))
    const a = await stepTimeJson(f, "h200", "[[8192]]")
    const b = await stepTimeJson("glm-5.3", "h200", "[[8192]]")
    expect(a.stepSeconds).toBe(b.stepSeconds)
  })

  it("--params overrides efficiencies", async () => {
    const base = await stepTimeJson("glm-5.3", "h200", "[[8192]]")
    const slow = await stepTimeJson("glm-5.3", "h200", "[[8192]]", "--params", '{"memoryEfficiency":0.35}')
    expect(slow.moeSeconds).toBeCloseTo(2 * base.moeSeconds, 12)
  })

  it("bad input is one error naming the field", async () => {
    expect((await stepTime("glm-5.3", "h200", '[[1],{"decode":[-1]}]')).error).toBe(
      "--ranks: 1.decode.0: Expected a value greater than or equal to 0"
    )
    expect((await stepTime("gpt-9", "h200", "[[1]]")).error).toMatch(/unknown model gpt-9/)
    expect((await stepTime("glm-5.3", "tpu", "[[1]]")).error).toMatch(/unknown GPU tpu/)
  })
})

describe("loadledger calibrate", () => {
  it("fits per hardware and reports held-out decode MAPE <= 10% on the splitwise profile", async () => {
    const { out, error } = await calibrateLlama("--gpu", "h100-80gb", "--json")
    expect(error).toBeUndefined()
    const j = JSON.parse(out)
    expect(j.hardware).toHaveLength(1)
    const h = j.hardware[0]
    expect(h.gpu).toBe("h100-80gb")
    expect(h.rows).toBe(630)
    expect(h.crossValidated.byGroup["h100-80gb/decode"].mape).toBeLessThanOrEqual(10)
    expect(h.params.memoryEfficiency).toBeLessThanOrEqual(1)
  })

  it("--tp filters rows; --evaluate predicts another profile with the evaluate model", async () => {
    const { out, error } = await calibrateLlama(
      ...["--gpu", "a100-80gb", "--tp", "4"],
      ...["--evaluate", profile, "--evaluate-model", "llama2-70b", "--json"]
    )
    expect(error).toBeUndefined()
    const j = JSON.parse(out)
    expect(j.hardware[0].rows).toBe(210)
    expect(j.evaluateModel).toBe("llama2-70b")
    expect(j.hardware[0].evaluate.rows).toBe(210)
    expect(j.hardware[0].evaluate.byGroup["a100-80gb/decode"].mape).toBeLessThanOrEqual(10)
  })

  it("prints the parameters and a MAPE table without --json", async () => {
    const { out } = await calibrateLlama("--gpu", "h100-80gb", "--tp", "8")
    expect(out).toContain("h100-80gb: 210 samples")
    expect(out).toContain("memoryEfficiency")
    expect(out).toMatch(/decode/)
    expect(out).toMatch(/prefill/)
  })

  it("errors: unknown hardware filter, missing file, --evaluate-model without --evaluate", async () => {
    expect((await calibrateLlama("--gpu", "tpu")).error).toMatch(/unknown GPU/)
    expect((await run("calibrate", "--profile", "/nonexistent.csv", "--model", "llama2-70b")).error).toMatch(
      /nonexistent/
    )
    expect((await calibrateLlama("--evaluate-model", "bloom-176b")).error).toMatch(/needs --evaluate/)
  })
})

describe("loadledger calibrate on Vidur profiles", () => {
  const vidur = (f: string) => new URL(`../../../fixtures/calibration/vidur/${f}`, import.meta.url).pathname
  it("reads an mlp.csv (was: missing column hardware), evaluates another model per phase and batch", async () => {
    const { out, error } = await run(
      "calibrate",
      ...["--profile", vidur("a40_microsoft_phi-2_mlp.csv"), "--tp", "1"],
      ...["--evaluate", vidur("a40_internlm_internlm-20b_mlp.csv"), "--json"]
    )
    expect(error).toBeUndefined()
    const j = JSON.parse(out)
    expect(j.hardware[0].gpu).toBe("a40")
    expect(j.hardware[0].rows).toBe(261)
    expect(j.hardware[0].identifiability.unused).toContain("fixedOverheadSeconds")
    const e = j.hardware[0].evaluateErrors
    expect(e.overall.rows).toBe(261)
    expect(Object.keys(e.byPhase).sort()).toEqual(["internlm-20b/decode", "internlm-20b/prefill"])
    expect(e.byBatch["internlm-20b/decode/1"].rows).toBe(1)
    expect(e.byModel["internlm-20b"].mape).toBeLessThan(15)
  })
  it("a Vidur file without a GPU in its name needs --gpu; a splitwise model with no preset needs --model SPEC", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ll-cal-"))
    const f = join(dir, "mlp.csv")
    writeFileSync(f, "time_stats.mlp_up_proj.median\n1\n")
    expect((await run("calibrate", "--profile", f)).error).toMatch(/--gpu/)
    const opt = join(dir, "perf_model_opt.csv")
    writeFileSync(
      opt,
      "model,hardware,prompt_size,batch_size,token_size,prompt_time,token_time,tensor_parallel\n" +
        "opt-66b,h100-80gb,512,4,128,132.7,31.6,8\n"
    )
    const e = (await run("calibrate", "--profile", opt)).error
    expect(e).toMatch(/perf_model_opt\.csv:2: model: no model spec for opt-66b/)
    expect(e).toMatch(/--model/)
    const spec = join(dir, "opt.json")
    writeFileSync(spec, JSON.stringify({ ...models["llama2-70b"], name: "opt-66b" }))
    expect((await run("calibrate", "--profile", opt, "--model", spec, "--json")).error).toBeUndefined()
    // --model names rows by their model column: none of the Llama-2-70B file's rows is opt-66b
    expect((await run("calibrate", "--profile", profile, "--model", spec)).error).toMatch(
      /no rows match --model opt-66b/
    )
  })
})

describe("loadledger calibrate --evaluate --leave-one-model-out over several splitwise and Vidur files", () => {
  const bloom = new URL("../../../fixtures/calibration/splitwise/perf_model_bloom-176b.csv", import.meta.url)
    .pathname
  const phi = new URL("../../../fixtures/calibration/vidur/h100_microsoft_phi-2_mlp.csv", import.meta.url)
    .pathname
  const args = [
    "--profile",
    profile,
    bloom,
    phi,
    "--gpu",
    "h100-80gb",
    "--thin",
    "--folds",
    "2",
    "--leave-one-model-out"
  ]
  it("reads every model of every file (no --model) and holds each out in turn", async () => {
    const { out, error } = await run("calibrate", ...args, "--json")
    expect(error).toBeUndefined()
    const j = JSON.parse(out)
    // --thin: the first repeat of each splitwise configuration (19 per TP degree, two phases each)
    // and the power-of-two token counts of phi-2's layer rows
    expect(j.hardware[0].rows).toBe(2 * 19 * 3 + 2 * 19 + 15)
    expect(Object.keys(j.hardware[0].stacks)).toEqual(["splitwise", "vidur"])
    const lomo = j.leaveOneModelOut as ReadonlyArray<{
      model: string
      errors: { byPhase: Record<string, { mape: number }> }
      byGpu: Record<string, { unfittedStacks: ReadonlyArray<string> }>
    }>
    expect(lomo.map((m) => m.model)).toEqual(["llama2-70b", "bloom-176b", "phi-2"])
    // each splitwise model is predicted with the splitwise overheads fitted on the other one
    for (const m of lomo.slice(0, 2)) {
      expect(m.byGpu["h100-80gb"]!.unfittedStacks).toEqual([])
      expect(m.errors.byPhase[`${m.model}/decode`]!.mape).toBeLessThan(15)
    }
    // phi-2's kernel rows have no other Vidur model here: the vidur overheads come from priors
    expect(lomo[2]!.byGpu["h100-80gb"]!.unfittedStacks).toEqual(["vidur"])
  })
  it("the text table says when a stack's overheads come from priors", async () => {
    const { out } = await run(
      "calibrate",
      "--profile",
      bloom,
      phi,
      "--gpu",
      "h100-80gb",
      "--thin",
      "--leave-one-model-out"
    )
    expect(out).toMatch(/phi-2 .*h100-80gb [0-9.]+ \/ [0-9.]+ \(vidur overheads from priors\)/)
    expect(out).toMatch(/bloom-176b .*h100-80gb [0-9.]+ \/ [0-9.]+ \(splitwise overheads from priors\)/)
  })
  it("prints the per-model table against the target, and per GPU, source and phase with --evaluate", async () => {
    // the two splitwise models at TP8 on one GPU: the smallest leave-one-model-out there is
    const { out, error } = await run(
      "calibrate",
      ...["--profile", profile, bloom, "--gpu", "h100-80gb", "--tp", "8", "--thin"],
      ...["--leave-one-model-out", "--evaluate"]
    )
    expect(error).toBeUndefined()
    expect(out).toContain("leave-one-model-out (target: decode <= 10%, overall <= 15% MAPE)")
    expect(out).toMatch(/bloom-176b\s*│\s*38\s*│/)
    expect(out).toContain("target met")
    expect(out).toContain("llama2-70b/splitwise/decode")
    expect(out).toContain("bloom-176b/h100-80gb/prefill")
    expect(out).toContain("splitwise: perLayer")
  })
})

describe("loadledger step-time --model config.json", () => {
  it("reads a Hugging Face config.json (BF16 Llama-2-70b) like the llama2-70b preset", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ll-st-"))
    const f = join(dir, "config.json")
    writeFileSync(
      f,
      JSON.stringify({
        hidden_size: 8192,
        num_hidden_layers: 80,
        num_attention_heads: 64,
        num_key_value_heads: 8,
        intermediate_size: 28672,
        vocab_size: 32000,
        hidden_act: "silu",
        torch_dtype: "float16"
      })
    )
    const a = await stepTimeJson(f, "a100-80gb", "[[4096, 4096]]")
    const b = await stepTimeJson("llama2-70b", "a100-80gb", "[[4096, 4096]]")
    expect(a.model).toBe("config")
    expect(a.stepSeconds).toBe(b.stepSeconds)
    expect(a.ranks[0].kvBytesRead).toBe(8192 * 4096 * 80)
  })
})
