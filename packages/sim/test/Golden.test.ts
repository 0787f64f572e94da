/**
 * Golden digests of whole `simulate` results (every field, per-request outcomes, step and publish
 * logs) on small slices of the shipped traces. They pin the simulator's output across performance
 * work: a speed-up must leave them unchanged. Update a digest only with a behaviour change that is
 * meant, and say so in its changeset.
 */
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { findPolicy } from "@loadledger/policies"
import { gpus, models } from "@loadledger/step-time"
import { describe, expect, it } from "vitest"
import {
  isTraceError,
  kvPoolTokensFor,
  parseTrace,
  type SimConfig,
  scaleTrace,
  simulate,
  stepModelFor
} from "../src/index.js"
import { fixture } from "./helpers.js"

const conversation = "examples/traces/mooncake/conversation_trace.jsonl"
const azure = "fixtures/traces/azure2023/AzureLLMInferenceTrace_conv.csv"

const cases: ReadonlyArray<{
  readonly name: string
  readonly trace: string
  readonly rate: number
  readonly limit: number
  readonly model: string
  readonly config: Partial<SimConfig>
  readonly policy: string
  readonly digest: string
}> = [
  {
    name: "Mooncake conversation, SGLang, total-tokens (prefix cache, retractions)",
    trace: conversation,
    rate: 0.2,
    limit: 400,
    model: "glm-5.3",
    config: { engine: "sglang" },
    policy: "total-tokens",
    digest: "b685f3074c1fc2966a622fa4240182a700123baa6f04864dc7b61db50c0dc646"
  },
  {
    name: "Mooncake conversation, vLLM x2, ledger-balanced, DSA sparse attention, small KV pool",
    trace: conversation,
    rate: 0.2,
    limit: 150,
    model: "glm-5.3-dsa",
    config: { engine: "vllm", frontEnds: 2, kvPoolTokens: 60_000 },
    policy: "ledger-balanced",
    digest: "4f156d30c7f5a43d3684cf703f0b18bf647444ff084495e5d4541f70ad8b5834"
  },
  {
    name: "Azure conversation 4x, SGLang, round-robin, 16 running, prefill interval 3",
    trace: azure,
    rate: 4,
    limit: 800,
    model: "glm-5.3",
    config: { engine: "sglang", maxRunningRequests: 16, prefillIntervalSteps: 3 },
    policy: "round-robin",
    digest: "b690cce597972dd6d53b8b9a995373b91efcfc77d80c0213920064955f11cc58"
  },
  {
    name: "Azure conversation 4x, vLLM x4, vllm-kv-pressure, 20,000-token KV pool (163 retractions)",
    trace: azure,
    rate: 4,
    limit: 800,
    model: "glm-5.3",
    config: { engine: "vllm", frontEnds: 4, kvPoolTokens: 20_000 },
    policy: "vllm-kv-pressure",
    digest: "008c52506edc8b1362b01e9ae57c94535bba1bb0612d38b3d631d4a7c771601d"
  }
]

describe("golden results", () => {
  for (const c of cases)
    it(c.name, () => {
      const parsed = parseTrace(readFileSync(fixture(c.trace), "utf8"))
      if (isTraceError(parsed)) throw new Error(parsed.message)
      const model = models[c.model]!
      const gpu = gpus.h200!
      const result = simulate(
        {
          dpSize: 8,
          stepModel: stepModelFor({ model, gpu }),
          kvPoolTokens: kvPoolTokensFor(model, gpu),
          sparseTopK: model.attention.sparseTopK,
          recordRequests: true,
          recordSteps: true,
          recordPublishes: true,
          ...c.config
        },
        scaleTrace(parsed, { rateScale: c.rate, limit: c.limit }),
        findPolicy(c.policy)!
      )
      expect(result.status._tag).toBe("Completed")
      expect(createHash("sha256").update(JSON.stringify(result)).digest("hex")).toBe(c.digest)
    })
})
