// The shared calibration data (fixtures/calibration): splitwise step rows (every model of every file) and Vidur per-operator
// and network profiles, thinned with thinSamples (what `loadledger calibrate --thin` does).
import { readdirSync, readFileSync } from "node:fs"
import { Result } from "effect"
import {
  type CalibrationSample,
  splitwiseSamples,
  thinSamples,
  vidurCollectiveSamples,
  vidurFileInfo,
  vidurMlpSamples
} from "../src/index.js"

const dir = new URL("../../../fixtures/calibration/", import.meta.url)
const text = (f: string) => readFileSync(new URL(f, dir), "utf8")

export const sharedSamples = (): ReadonlyArray<CalibrationSample> => {
  const out: Array<CalibrationSample> = []
  for (const f of readdirSync(new URL("splitwise/", dir)).sort())
    if (f.endsWith(".csv")) out.push(...Result.getOrThrow(splitwiseSamples(text(`splitwise/${f}`), {})))
  for (const f of readdirSync(new URL("vidur/", dir)).sort()) {
    const info = vidurFileInfo(f)
    if (info?.kind === "mlp")
      out.push(
        ...Result.getOrThrow(vidurMlpSamples(text(`vidur/${f}`), { gpu: info.gpu, model: info.model }))
      )
    else if (info !== undefined)
      out.push(...Result.getOrThrow(vidurCollectiveSamples(text(`vidur/${f}`), { gpu: info.gpu })))
  }
  return thinSamples(out)
}
