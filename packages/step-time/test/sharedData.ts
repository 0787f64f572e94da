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
  vidurFileInfo,
  vidurMlpSamples
} from "../src/index.js"

const dir = new URL("../../../fixtures/calibration/", import.meta.url)
const text = (f: string) => readFileSync(new URL(f, dir), "utf8")

const isPow2 = (n: number) => n >= 1 && (n & (n - 1)) === 0

export const sharedSamples = (): ReadonlyArray<CalibrationSample> => {
  const out: Array<CalibrationSample> = []
  // splitwise measures each configuration about 5 times: keep the first repeat of each
  const seen = new Set<string>()
  const sw = Result.getOrThrow(
    splitwiseSamples(text("splitwise/perf_model_llama2-70b.csv"), { model: models["llama2-70b"]! })
  )
  for (const s of sw) {
    if (seen.has(s.configuration!)) continue
    seen.add(s.configuration!)
    out.push(s)
  }
  for (const f of readdirSync(new URL("vidur/", dir)).sort()) {
    const info = vidurFileInfo(f)
    if (info?.kind === "mlp") {
      const rows = Result.getOrThrow(
        vidurMlpSamples(text(`vidur/${f}`), { gpu: info.gpu, model: info.model })
      )
      out.push(...rows.filter((s) => isPow2(s.tokens)))
    } else if (info !== undefined) {
      const rows = Result.getOrThrow(vidurCollectiveSamples(text(`vidur/${f}`), { gpu: info.gpu }))
      out.push(...rows.filter((s) => s.bytes === 2048 || isPow2((s.bytes - 2048) / 8192)))
    }
  }
  return out
}
