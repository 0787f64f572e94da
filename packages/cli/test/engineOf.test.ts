// A policy runs on the engine whose router it reproduces when --engine is not given: TensorRT-LLM's
// ADP routers on the trtllm engine (they were registered with engine "any" and ran on SGLang's).
import { findPolicy } from "@loadledger/policies"
import { describe, expect, it } from "vitest"
import { engineOf } from "../src/internal/policyFlags.js"
import { runCaptured } from "./runCli.js"

describe("engineOf", () => {
  it("each router on its own engine, --engine over it, 'any' on SGLang", () => {
    expect(
      ["trtllm/default", "trtllm/kv-cache-aware", "trtllm/conversation-affinity"].map(
        (n) => findPolicy(n)!.engine
      )
    ).toEqual(["trtllm", "trtllm", "trtllm"])
    expect(engineOf(findPolicy("trtllm/default")!, undefined)).toBe("trtllm")
    expect(engineOf(findPolicy("vllm-kv-pressure")!, undefined)).toBe("vllm")
    expect(engineOf(findPolicy("round-robin")!, undefined)).toBe("sglang")
    expect(engineOf(findPolicy("smg/round-robin")!, undefined)).toBe("sglang")
    expect(engineOf(findPolicy("dynamo/kv")!, undefined)).toBe("sglang")
    expect(engineOf(findPolicy("trtllm/default")!, "vllm")).toBe("vllm")
  })

  it("simulate --policies trtllm/default runs on the trtllm engine without --engine", async () => {
    const mooncake = new URL("../../../examples/traces/mooncake/conversation_trace.jsonl", import.meta.url)
      .pathname
    const r = await runCaptured(
      "simulate",
      "--trace",
      mooncake,
      "--policies",
      "trtllm/default,round-robin",
      "--limit",
      "60",
      "--json"
    )
    expect(r.code).toBe(0)
    const doc = JSON.parse(r.out) as { results: Array<{ policy: string; engine: string }> }
    expect(doc.results.map((x) => [x.policy, x.engine])).toEqual([
      ["trtllm/default", "trtllm"],
      ["round-robin", "sglang"]
    ])
  })
})
