/**
 * Golden digests of whole `simulate` results (every field, per-request outcomes, step and publish
 * logs) on small slices of the shipped traces. They pin the simulator's output across performance
 * work: a speed-up must leave them unchanged. Update a digest only with a behaviour change that is
 * meant, and say so in its changeset. (Taken after the one-ledger contract, the KV-gauge rule and
 * the DSA default landed; the three dense cells name `glm-5.3-dense`; the ledger-balanced cell retaken
 * after its tie-rotation fix (issue 16, meant); checked equal on the code
 * before and after the lazy-decoding rewrite; retaken when results gained `firstArrivalSeconds`,
 * `lastArrivalSeconds` and `lastScheduledSeconds` (0.3.0): with those three fields left out, every
 * result hashed to the digest before; retaken when results gained `tokenIds` (0.5.0): with it left
 * out, every result hashed to the digest before, none of these four policies reads token ids; the latency curves gained p99.1..p99.9
 * (0.6.0): `onPercentileGrid` leaves them out and every result hashes to the digest before.)
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
import { fixture, onPercentileGrid } from "./helpers.js"

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
    digest: "f720d08bc659c7c405c5505db612ef23008cf0758f9236c91d9984f6c66c80af"
  },
  {
    name: "Mooncake conversation, vLLM x2, ledger-balanced, DSA sparse attention, small KV pool",
    trace: conversation,
    rate: 0.2,
    limit: 150,
    model: "glm-5.3-dsa",
    config: { engine: "vllm", frontEnds: 2, kvPoolTokens: 60_000 },
    policy: "ledger-balanced",
    digest: "2c7f10542440f56dce33ff79d3a5aec8b9db9d195a1510318c7a451d1a576b3e"
  },
  {
    name: "Azure conversation 4x, vLLM, round-robin, 16 running, prefill interval 3 (a vLLM option: SGLang refuses it)",
    trace: azure,
    rate: 4,
    limit: 800,
    model: "glm-5.3-dense",
    config: { engine: "vllm", maxRunningRequests: 16, prefillIntervalSteps: 3 },
    policy: "round-robin",
    digest: "99a00c99075d349ff54379d28d9a355b41741eff3385005ecc4a17af0707122f"
  },
  {
    name: "Azure conversation 4x, vLLM x4, vllm-kv-pressure, 20,000-token KV pool (163 retractions)",
    trace: azure,
    rate: 4,
    limit: 800,
    model: "glm-5.3-dense",
    config: { engine: "vllm", frontEnds: 4, kvPoolTokens: 20_000 },
    policy: "vllm-kv-pressure",
    digest: "ac7bbee843e656eb96c23210151e866929acb555c77401b404c846393c5db575"
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
      expect(
        createHash("sha256")
          .update(JSON.stringify(onPercentileGrid(result)))
          .digest("hex")
      ).toBe(c.digest)
    })
})
