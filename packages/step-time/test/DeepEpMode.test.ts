// Issue 33: DeepEP's low-latency mode (SGLang `--deepep-mode`) in the step-time model.
import { describe, expect, it } from "vitest"
import {
  type ExpertLoadError,
  type ExpertRouting,
  expertRoutingFor,
  gpus,
  models,
  stepTime
} from "../src/index.js"

const c = { model: models["glm-5.3"]!, gpu: gpus["h200"]! }
const routingOf = (x: ExpertRouting | ExpertLoadError): ExpertRouting => {
  if ("_tag" in x) throw new Error(x.message)
  return x
}
// a decode step of 8 ranks x 96 requests (below the 128-token buffer)
const decode = Array.from({ length: 8 }, () => ({
  decode: Array.from({ length: 96 }, () => 2000),
  extend: []
}))
const prefill = Array.from({ length: 8 }, () => ({ decode: [], extend: [{ prefix: 0, tokens: 4096 }] }))
const skews = [0, 0.6, 1.2].map((zipfS) => routingOf(expertRoutingFor(c.model, { zipfS, seed: 3 })))

describe("DeepEP low-latency mode", () => {
  it("under an expert skew, the low-latency step is the same at every skew and no rank waits for a hot EP rank; normal mode's step and wait grow with the skew", () => {
    const ll = skews.map((experts) => stepTime({ ...c, experts, deepEp: { mode: "low_latency" } }, decode))
    const normal = skews.map((experts) => stepTime({ ...c, experts, deepEp: { mode: "normal" } }, decode))
    expect(ll.map((r) => r.deepEpMode)).toEqual(["low_latency", "low_latency", "low_latency"])
    expect(normal.map((r) => r.deepEpMode)).toEqual(["normal", "normal", "normal"])
    // constant to the last bit across the skews
    expect(ll[1]!.stepSeconds).toBe(ll[0]!.stepSeconds)
    expect(ll[2]!.stepSeconds).toBe(ll[0]!.stepSeconds)
    for (const r of ll) for (const x of r.ranks) expect(x.moeWaitSeconds).toBe(0)
    const maxWait = (r: (typeof normal)[number]) => Math.max(...r.ranks.map((x) => x.moeWaitSeconds ?? 0))
    expect(maxWait(normal[2]!)).toBeGreaterThan(1e-4)
    expect(maxWait(normal[2]!)).toBeGreaterThan(maxWait(normal[0]!))
    // the hot-spot wait grows with the skew in normal mode and is never there in low-latency mode
    const meanSync = (r: (typeof normal)[number]) => r.ranks.reduce((a, x) => a + x.syncWaitSeconds, 0) / 8
    expect(meanSync(ll[2]!)).toBeLessThan(meanSync(normal[2]!))
    // the price: at no skew, the fixed 128-token buffer costs more than normal mode's 96 tokens
    expect(ll[0]!.moeSeconds).toBeGreaterThan(normal[0]!.moeSeconds)
  })

  it("low-latency mode charges the fixed buffer: 32 or 96 requests per rank cost the same exchange; a larger buffer costs a longer one", () => {
    const small = Array.from({ length: 8 }, () => ({
      decode: Array.from({ length: 32 }, () => 2000),
      extend: []
    }))
    const a = stepTime({ ...c, deepEp: { mode: "low_latency" } }, small)
    const b = stepTime({ ...c, deepEp: { mode: "low_latency" } }, decode)
    expect(a.commSeconds).toBe(b.commSeconds)
    // normal mode's exchange moves with the tokens
    const na = stepTime({ ...c, deepEp: { mode: "normal" } }, small)
    expect(na.commSeconds).toBeLessThan(a.commSeconds)
    const bigger = stepTime(
      { ...c, deepEp: { mode: "low_latency", numMaxDispatchTokensPerRank: 256 } },
      decode
    )
    expect(bigger.commSeconds).toBeGreaterThan(1.5 * b.commSeconds)
  })

  it("auto: low-latency for a decode-only step, normal for a step with a prefill (SGLang's rule)", () => {
    expect(stepTime({ ...c, deepEp: { mode: "auto" } }, decode).deepEpMode).toBe("low_latency")
    expect(stepTime({ ...c, deepEp: { mode: "auto" } }, prefill).deepEpMode).toBe("normal")
    // auto on a prefill step is normal mode
    const plain = stepTime({ ...c, experts: skews[2]!, deepEp: { mode: "normal" } }, prefill)
    expect(stepTime({ ...c, experts: skews[2]!, deepEp: { mode: "auto" } }, prefill).stepSeconds).toBe(
      plain.stepSeconds
    )
  })
})
