// vLLM policy registry entries and the in-flight law (the docstring examples run in examples.test.ts).
import { findPolicy, makeVllmLb } from "@loadledger/policies"
import { inflightLaw } from "@loadledger/testing"
import fc from "fast-check"
import { describe, expect, it } from "vitest"

describe("vLLM registry", () => {
  it("inflightLaw holds for makeVllmLb", () => {
    fc.assert(inflightLaw({ policy: makeVllmLb(), inflightOf: (s) => s.lb.inflight }), { numRuns: 50 })
  })
  it("registry entries: names match the policies, options reach the client", () => {
    const p = findPolicy("vllm-kv-pressure")!.make({ clientCount: 2, clientIndex: 1 })
    expect(p.name).toBe("vllm-kv-pressure")
    // start index floor(4 * 1 / 2) = 2
    const r = p.route(p.init(4), { requestId: "a", inputLength: 1 }, 0)
    expect(r._tag === "Routed" && r.rank).toBe(2)
    expect(findPolicy("vllm-kv-pressure")!.reference).toBe(true)
    const g = findPolicy("vllm-kv-pressure-kv-guard")!
    expect([g.reference, g.make({}).name]).toEqual([false, "vllm-kv-pressure-kv-guard"])
  })
})
