// The TensorRT-LLM engine (engines/trtllm): per-iteration batch assignment in upstream's order, the
// ADP balance strategy's context wait, and every registered policy running behind it.
import { readFileSync } from "node:fs"
import { findPolicy, policyEntries } from "@loadledger/policies"
import { describe, expect, it } from "vitest"
import {
  checkConfig,
  isTraceError,
  parseTrace,
  resolveConfig,
  scaleTrace,
  simulate,
  type TraceRequest
} from "../src/index.js"
import { fixedStep, fixture } from "./helpers.js"

const req = (
  requestId: string,
  arrivalSeconds: number,
  inputLength: number,
  outputLength = 4
): TraceRequest => ({
  requestId,
  arrivalSeconds,
  inputLength,
  outputLength
})
const ranksOf = (engine: "trtllm" | "sglang", trace: ReadonlyArray<TraceRequest>) => {
  const r = simulate(
    { dpSize: 2, stepModel: fixedStep(0.25), engine, recordRequests: true },
    trace,
    findPolicy("trtllm/default")!
  )
  return r.outcomes?.map((o) => [o.requestId, o.rank])
}

describe("the TensorRT-LLM engine", () => {
  const burst = [req("a", 0, 10), req("b", 0, 100), req("c", 0, 20), req("d", 0, 30)]

  it("assigns the requests of one iteration as a batch, longest prompt first", () => {
    // b (100) -> 0, d (30) -> 1, c (20) -> 1 (30 < 100), a (10) -> 0 (rank 1 at the cap 2)
    expect(ranksOf("trtllm", burst)).toEqual([
      ["a", 0],
      ["b", 0],
      ["c", 1],
      ["d", 1]
    ])
    // routed on arrival (SGLang engine): a -> 0, b -> 1, c -> 0, d -> 1
    expect(ranksOf("sglang", burst)).toEqual([
      ["a", 0],
      ["b", 1],
      ["c", 0],
      ["d", 1]
    ])
  })

  const late = [req("a", 0, 10, 100), req("b", 0, 10, 100), req("c", 0.9, 10, 4)]
  const firstScheduled = (balance: boolean) =>
    simulate(
      {
        dpSize: 2,
        stepModel: fixedStep(0.25),
        engine: "trtllm",
        recordRequests: true,
        attentionDpEnableBalance: balance,
        attentionDpTimeoutIters: 3
      },
      late,
      findPolicy("trtllm/default")!
    ).outcomes?.find((o) => o.requestId === "c")?.firstScheduledSeconds

  it("the ADP balance strategy holds a lone context up to timeout_iters iterations", () => {
    expect(firstScheduled(false)).toBe(1)
    // held at 1.0 and 1.25 (rank 1 has no context request), run at the third iteration
    expect(firstScheduled(true)).toBe(1.5)
  })

  it("the balance hold has no saturation guard: a context left waiting by a prefill step is held too", () => {
    // rank 0 runs a (decoding) and is pinned c and d (60 tokens each) at 0.9, rank 1 only b: the
    // contexts are held at 1.0 and 1.25 and run at 1.5 (timeout 3), where the 50-token budget
    // admits c (a 49-token chunk) and leaves d waiting; d is held again until 2.25 (vLLM's
    // saturation guard, which a throttled step skips after such a step, would admit it at 1.75)
    const pinned = (requestId: string, at: number, input: number, output: number, dpRank: number) => ({
      ...req(requestId, at, input, output),
      dpRank
    })
    const r = simulate(
      {
        dpSize: 2,
        stepModel: fixedStep(0.25),
        engine: "trtllm",
        recordRequests: true,
        chunkedPrefillTokens: 50,
        attentionDpEnableBalance: true,
        attentionDpTimeoutIters: 3
      },
      [
        pinned("a", 0, 10, 100, 0),
        pinned("b", 0, 10, 100, 1),
        pinned("c", 0.9, 60, 4, 0),
        pinned("d", 0.9, 60, 4, 0)
      ],
      findPolicy("trtllm/default")!
    )
    const first = (id: string) => r.outcomes?.find((o) => o.requestId === id)?.firstScheduledSeconds
    expect([first("c"), first("d")]).toEqual([1.5, 2.25])
  })

  it("its options are checked, and refused on another engine", () => {
    const stepModel = fixedStep(0.1)
    expect(
      checkConfig(resolveConfig({ dpSize: 2, stepModel, engine: "trtllm", attentionDpTimeoutIters: -1 }))
        ?.field
    ).toBe("attentionDpTimeoutIters")
    expect(checkConfig(resolveConfig({ dpSize: 2, stepModel, attentionDpEnableBalance: true }))).toEqual({
      field: "attentionDpEnableBalance",
      message:
        "attentionDpEnableBalance true needs the TensorRT-LLM engine (SGLang has no ADP balance strategy), got engine sglang"
    })
  })

  it("runs every registered policy on 300 Azure conversation requests: all finish", () => {
    const text = readFileSync(fixture("fixtures/traces/azure2023/AzureLLMInferenceTrace_conv.csv"), "utf8")
    const parsed = parseTrace(text, undefined, { limit: 300 })
    if (isTraceError(parsed)) throw new Error(parsed.message)
    const trace = scaleTrace(parsed, { rateScale: 10 })
    const outcomes = policyEntries().map((entry) => {
      const r = simulate(
        { dpSize: 8, stepModel: fixedStep(0.02), kvPoolTokens: 200_000, engine: "trtllm" },
        trace,
        entry
      )
      return [entry.name, r.status._tag, r.requests.rejected, r.requests.finished]
    })
    // AIBrix's SLO routers: a request every pod's profile is full for is rejected, not held (their
    // stated limit, fixtures/reference/peers/README-aibrix.md section 5)
    const held = (o: (typeof outcomes)[number]): number =>
      String(o[0]).startsWith("aibrix/slo") ? Number(o[2]) : 0
    expect(outcomes).toEqual(outcomes.map((o) => [o[0], "Completed", held(o), 300 - held(o)]))
    expect(outcomes.map((o) => o[0])).toEqual(policyEntries().map((e) => e.name))
  })
})
