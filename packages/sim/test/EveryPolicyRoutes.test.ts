// Replays that every policy can route (issue #27 item 7): a trace without prompt content (the Azure
// 2023 conversation trace: no tokens, no block hashes) gets synthetic token ids, so every registered
// policy, smg/prefix-hash included (it rejected all 19,366 requests before), places every request.
// Through the public API only: parseTrace -> simulate -> result.
import { readFileSync } from "node:fs"
import { policyEntries } from "@loadledger/policies"
import { describe, expect, it } from "vitest"
import { isTraceError, parseTrace, scaleTrace, simulate, type TraceRequest } from "../src/index.js"
import { fixedStep, fixture } from "./helpers.js"

const text = readFileSync(fixture("fixtures/traces/azure2023/AzureLLMInferenceTrace_conv.csv"), "utf8")
// the first 300 rows at 10x their rate: the same requests in a fifth of the steps (2.5 s for the
// whole registry instead of 7 s); placing them does not depend on the rate
const first300 = (): ReadonlyArray<TraceRequest> => {
  const trace = parseTrace(text, undefined, { limit: 300 })
  if (isTraceError(trace)) throw new Error(trace.message)
  return scaleTrace(trace, { rateScale: 10 })
}

// AIBrix's SLO routers hold a request in their queue while every pod is at its profiled capacity;
// the registry's policies answer such a request AllRanksUnavailable (the stated limit of
// aibrix/slo*, fixtures/reference/peers/README-aibrix.md section 5), so the simulator rejects it.
const holdsAtCapacity = (name: string): boolean => name.startsWith("aibrix/slo")

describe("every registered policy on a trace without prompt content", () => {
  it("routes each of the first 300 Azure conversation requests: none rejected, token ids synthesised per request", () => {
    const trace = first300()
    expect(trace).toHaveLength(300)
    const outcomes = policyEntries().map((entry) => {
      const r = simulate({ dpSize: 8, stepModel: fixedStep(0.02), kvPoolTokens: 200_000 }, trace, entry)
      return [entry.name, r.status._tag, r.requests.rejected, r.requests.finished, r.tokenIds?.origin]
    })
    const held = (o: (typeof outcomes)[number]): number => (holdsAtCapacity(String(o[0])) ? Number(o[2]) : 0)
    expect(outcomes).toEqual(outcomes.map((o) => [o[0], "Completed", held(o), 300 - held(o), "synthetic"]))
    expect(outcomes.map((o) => o[0])).toEqual(policyEntries().map((e) => e.name))
    expect(outcomes.map((o) => o[0])).toContain("smg/prefix-hash")
  })

  it("smg/prefix-hash spreads the requests over every rank (distinct ids: distinct ring keys)", () => {
    const trace = first300()
    const r = simulate({ dpSize: 8, stepModel: fixedStep(0.02), kvPoolTokens: 200_000 }, trace, {
      name: "smg/prefix-hash",
      make: policyEntries().find((e) => e.name === "smg/prefix-hash")!.make
    })
    expect(r.requests.finished).toBe(300)
    expect(r.requestsPerRank.every((n) => n > 0)).toBe(true)
  })
})
