/**
 * The simulator's speed on `pnpm demo`'s workload: the Mooncake conversation trace (12,031 requests)
 * at 0.1x its recorded rate on glm-5.3 / h200 / DP 8, one run per demo policy: wall seconds,
 * simulated requests per wall second, simulated seconds per wall second, lockstep steps per wall
 * second, and the process's peak RSS. Issue 6's budget: all five under 60 s, under 1 GB.
 *
 * @since 0.1.0
 */
import { readFileSync } from "node:fs"
import { findPolicy } from "@loadledger/policies"
import {
  isTraceError,
  kvPoolTokensFor,
  parseTrace,
  scaleTrace,
  simulate,
  stepModelFor
} from "@loadledger/sim"
import { gpus, models } from "@loadledger/step-time"
import { type Benchmark, consume } from "./harness.js"

const demoPolicies = [
  "round-robin",
  "total-requests",
  "total-tokens",
  "vllm-kv-pressure",
  "follow-bootstrap-room"
]

export const simBench: Benchmark = {
  name: "sim: pnpm demo workload (Mooncake conversation trace at 0.1x, glm-5.3 / h200 / DP 8)",
  run: () => {
    const text = readFileSync(
      new URL("../examples/traces/mooncake/conversation_trace.jsonl", import.meta.url),
      "utf8"
    )
    const t0 = performance.now()
    const parsed = parseTrace(text)
    if (isTraceError(parsed)) throw new Error(parsed.message)
    const trace = scaleTrace(parsed, { rateScale: 0.1 })
    process.stdout.write(`parse: ${trace.length} requests in ${(performance.now() - t0).toFixed(0)} ms\n`)
    const model = models["glm-5.3"]!
    const gpu = gpus["h200"]!
    const base = {
      dpSize: 8,
      stepModel: stepModelFor({ model, gpu }),
      kvPoolTokens: kvPoolTokensFor(model, gpu)
    }
    process.stdout.write(
      "| policy | engine | wall s | sim requests / wall s | sim s / wall s | steps / wall s |\n|---|---|---|---|---|---|\n"
    )
    let wallTotal = 0
    for (const name of demoPolicies) {
      const entry = findPolicy(name)
      if (!entry) {
        process.stdout.write(`| ${name} | not registered | | | | |\n`)
        continue
      }
      const engine = entry.engine === "vllm" ? "vllm" : "sglang"
      const s0 = performance.now()
      const r = simulate({ ...base, engine }, trace, entry)
      const wall = (performance.now() - s0) / 1000
      wallTotal += wall
      consume(r.steps)
      process.stdout.write(
        `| ${name} | ${engine} | ${wall.toFixed(2)} | ${(trace.length / wall).toFixed(0)} | ${(r.simulatedSeconds / wall).toFixed(0)} | ${(r.steps / wall).toFixed(0)} |\n`
      )
    }
    process.stdout.write(
      `all policies: ${wallTotal.toFixed(1)} s wall; peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB\n`
    )
  }
}
