/**
 * Golden digests of whole `simulate` results (every field, per-request outcomes, step and publish
 * logs) on small slices of the shipped traces. They pin the simulator's output across performance
 * work: a speed-up must leave them unchanged. Update a digest only with a behaviour change that is
 * meant, and say so in its changeset. (Taken after the one-ledger contract, the KV-gauge rule and
 * the DSA default landed; the three dense cells name `glm-5.3-dense`; the ledger-balanced cell retaken
 * after its tie-rotation fix (issue 16, meant); checked equal on the code
 * before and after the lazy-decoding rewrite; retaken when results gained `firstArrivalSeconds`,
 * `lastArrivalSeconds` and `lastScheduledSeconds` (0.3.0): with those three fields left out, every
 * result hashed to the digest before.)
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
    digest: "f46205c9ad862646b9d91d639f8f986c8b905ffb44264184735abfda93d2098f"
  },
  {
    name: "Mooncake conversation, vLLM x2, ledger-balanced, DSA sparse attention, small KV pool",
    trace: conversation,
    rate: 0.2,
    limit: 150,
    model: "glm-5.3-dsa",
    config: { engine: "vllm", frontEnds: 2, kvPoolTokens: 60_000 },
    policy: "ledger-balanced",
    digest: "068ed295e05b72855ab3a43828ae45d4ae5915493118a57a3bb17ca20b1974dd"
  },
  {
    name: "Azure conversation 4x, vLLM, round-robin, 16 running, prefill interval 3 (a vLLM option: SGLang refuses it)",
    trace: azure,
    rate: 4,
    limit: 800,
    model: "glm-5.3-dense",
    config: { engine: "vllm", maxRunningRequests: 16, prefillIntervalSteps: 3 },
    policy: "round-robin",
    digest: "cfe677dd6bbae1729f6dabd61c33f6c7cbbcb85223c2f69ced7ab469230172f2"
  },
  {
    name: "Azure conversation 4x, vLLM x4, vllm-kv-pressure, 20,000-token KV pool (163 retractions)",
    trace: azure,
    rate: 4,
    limit: 800,
    model: "glm-5.3-dense",
    config: { engine: "vllm", frontEnds: 4, kvPoolTokens: 20_000 },
    policy: "vllm-kv-pressure",
    digest: "8af0267f0d081b58e3801fbd321c3792c2cb2f0409b04bff0ed614cb29b4855e"
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
