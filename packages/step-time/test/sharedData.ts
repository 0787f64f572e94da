// The shared calibration data (fixtures/calibration): splitwise step rows and Vidur per-operator
// and network profiles, thinned to a geometric grid so that every model weighs alike and the
// leave-one-model-out test stays fast.
import { readdirSync, readFileSync } from "node:fs"
import { Result } from "effect"
import {
  type CalibrationSample,
  models,
  splitwiseSamples,
  vidurCollectiveSamples,
  vidurMlpSamples
} from "../src/index.js"

const dir = new URL("../../../fixtures/calibration/", import.meta.url)
const text = (f: string) => readFileSync(new URL(f, dir), "utf8")

// Vidur's model folder names -> the names the rows carry (the llama2-70b preset for Llama-2-70b-hf)
export const vidurModelNames: Record<string, string> = {
  "meta-llama_Llama-2-70b-hf": "llama2-70b",
  "meta-llama_Llama-2-7b-hf": "llama2-7b",
  "meta-llama_Meta-Llama-3-70B": "llama3-70b",
  "meta-llama_Meta-Llama-3-8B": "llama3-8b",
  "codellama_CodeLlama-34b-Instruct-hf": "codellama-34b",
  "internlm_internlm-20b": "internlm-20b",
  "microsoft_phi-2": "phi-2"
}

const isPow2 = (n: number) => n >= 1 && (n & (n - 1)) === 0

export const sharedSamples = (): ReadonlyArray<CalibrationSample> => {
  const out: Array<CalibrationSample> = []
  out.push(
    ...Result.getOrThrow(splitwiseSamples(text("splitwise/perf_model_llama2-70b.csv"), { model: models["llama2-70b"]! }))
  )
  for (const f of readdirSync(new URL("vidur/", dir)).sort()) {
    const m = /^(a100|h100|a40)_(.+)_mlp\.csv$/.exec(f)
    if (m !== null) {
      const rows = Result.getOrThrow(
        vidurMlpSamples(text(`vidur/${f}`), { gpu: m[1]!, model: vidurModelNames[m[2]!] ?? m[2]! })
      )
      out.push(...rows.filter((s) => isPow2(s.tokens)))
      continue
    }
    const n = /^a100_dgx_(all_reduce|send_recv)\.csv$/.exec(f)
    if (n !== null) {
      const rows = Result.getOrThrow(vidurCollectiveSamples(text(`vidur/${f}`), { gpu: "a100_dgx" }))
      out.push(...rows.filter((s) => s.bytes === 2048 || isPow2((s.bytes - 2048) / 8192)))
    }
  }
  return out
}
