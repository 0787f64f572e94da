/**
 * Replay the first 2,000 requests of the Mooncake conversation trace (at a tenth of their rate)
 * through two policies on glm-5.3 / h200 / DP 8, and print what load skew costs each of them.
 *
 *     pnpm exec tsx --conditions=@loadledger/source examples/simulate.ts
 *
 * @since 0.1.0
 */
import { readFileSync } from "node:fs"
import { findPolicy } from "@loadledger/policies"
import { isTraceError, modelSimConfig, parseTrace, scaleTrace, simulate } from "@loadledger/sim"
import { gpus, models } from "@loadledger/step-time"

const text = readFileSync(new URL("traces/mooncake/conversation_trace.jsonl", import.meta.url), "utf8")
const parsed = parseTrace(text)
if (isTraceError(parsed)) throw new Error(`line ${parsed.line}: ${parsed.message}`)
const trace = scaleTrace(parsed, { rateScale: 0.1, limit: 2000 })

// the step model, KV pool and sparse-attention cap of GLM-5.3 on H200
const config = { dpSize: 8, ...modelSimConfig(models["glm-5.3"]!, gpus["h200"]!) }

for (const name of ["round-robin", "total-tokens"]) {
  const policy = findPolicy(name)
  if (policy === undefined) throw new Error(`policy ${name} is not registered`)
  const r = simulate(config, trace, policy)
  console.log(
    `${name.padEnd(14)} TTFT p99 ${r.ttftSeconds.p99?.toFixed(1)} s, ITL p99 ${((r.itlSeconds.p99 ?? 0) * 1000).toFixed(0)} ms, ` +
      `sync wait ${(r.syncWaitShare * 100).toFixed(1)}% of step time, idle ranks ${(r.idleRankStepShare * 100).toFixed(1)}% of rank-steps, ` +
      `requests per rank ${Math.min(...r.requestsPerRank)}-${Math.max(...r.requestsPerRank)}`
  )
}
