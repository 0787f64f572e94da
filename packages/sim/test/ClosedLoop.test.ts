// Closed-loop load (`maxConcurrency`): N clients, each sending its next request when its last one
// finishes, as vLLM's and SGLang's serving benchmarks drive an engine with --max-concurrency.
import { findPolicy } from "@loadledger/policies"
import { describe, expect, it } from "vitest"
import { checkConfig, engineNames, resolveConfig, simulate, type TraceRequest } from "../src/index.js"
import { fixedStep } from "./helpers.js"

const trace: ReadonlyArray<TraceRequest> = ["a", "b", "c", "d", "e"].map((requestId, i) => ({
  requestId,
  arrivalSeconds: 0,
  inputLength: 10,
  outputLength: i === 0 ? 2 : 4
}))

const arrivals = (engine: (typeof engineNames)[number], maxConcurrency?: number) =>
  simulate(
    { dpSize: 1, stepModel: fixedStep(0.25), engine, recordRequests: true, maxConcurrency },
    trace,
    findPolicy("round-robin")!
  ).outcomes?.map((o) => [o.requestId, o.arrivalSeconds, o.finishSeconds])

describe("closed-loop load", () => {
  it.each(engineNames)("%s: two clients; each next request is sent when one finishes", (engine) => {
    const out = arrivals(engine, 2)!
    // a (2 tokens) and b start at 0; a finishes first, c is sent then; d waits for b
    expect(out.map((o) => o[1])).toEqual([0, 0, out[0]![2], out[1]![2], expect.any(Number)])
    expect(out[2]![1]).toBeGreaterThan(0)
    expect(out[4]![1]).toBe(Math.min(out[2]![2] as number, out[3]![2] as number))
  })

  it("without it the trace is replayed open loop: every request arrives at 0", () => {
    expect(arrivals("sglang")!.map((o) => o[1])).toEqual([0, 0, 0, 0, 0])
  })

  it("maxConcurrency must be an integer >= 1", () => {
    expect(checkConfig(resolveConfig({ dpSize: 1, stepModel: fixedStep(1), maxConcurrency: 0 }))?.field).toBe(
      "maxConcurrency"
    )
  })
})
