/**
 * Golden digests of whole `simulate` results (every field, per-request outcomes, step and publish
 * logs) on small slices of the shipped traces. They pin the simulator's output across performance
 * work: a speed-up must leave them unchanged. Update a digest only with a behaviour change that is
 * meant, and say so in its changeset. (Taken after the one-ledger contract, the KV-gauge rule and
 * the DSA default landed; the three dense cells name `glm-5.3-dense`; the ledger-balanced cell retaken
 * after its tie-rotation fix (issue 16, meant); checked equal on the code
 * before and after the lazy-decoding rewrite.)
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
    model: "glm-5.3-dense",
    config: { engine: "sglang" },
    policy: "total-tokens",
    digest: "c7f2ac8a8237ae9139afcf7f89dfff5b5c0fcce0c9e8b6d3d937f3f131f8851e"
  },
  {
    name: "Mooncake conversation, vLLM x2, ledger-balanced, DSA sparse attention, small KV pool",
    trace: conversation,
    rate: 0.2,
    limit: 150,
    model: "glm-5.3-dsa",
    config: { engine: "vllm", frontEnds: 2, kvPoolTokens: 60_000 },
    policy: "ledger-balanced",
    digest: "10bebd81b45c0ae23b5fcfeb21cc8390e5ceff3802248336593c8f24bd3b735a"
  },
  {
    name: "Azure conversation 4x, SGLang, round-robin, 16 running, prefill interval 3",
    trace: azure,
    rate: 4,
    limit: 800,
    model: "glm-5.3-dense",
    config: { engine: "sglang", maxRunningRequests: 16, prefillIntervalSteps: 3 },
    policy: "round-robin",
    digest: "e0c5455efc4bda64802ee68f7f1eb6019f2e1a8710a16246b7fccfd4f4ba68aa"
  },
  {
    name: "Azure conversation 4x, vLLM x4, vllm-kv-pressure, 20,000-token KV pool (163 retractions)",
    trace: azure,
    rate: 4,
    limit: 800,
    model: "glm-5.3-dense",
    config: { engine: "vllm", frontEnds: 4, kvPoolTokens: 20_000 },
    policy: "vllm-kv-pressure",
    digest: "9be44e8a4e0f19cc7d2c5072ab23d087b763be0be42406cd6042094619f3320b"
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
