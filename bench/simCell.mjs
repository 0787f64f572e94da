/**
 * One simulator cell for `bench/sim.ts`, in a process of its own: reads a trace, scales it, runs
 * `simulate` `reps` times on glm-5.3 / h200 / DP 8 and prints one JSON line per run (wall and CPU
 * seconds, simulated seconds). Plain JavaScript on purpose: run by plain `node` it imports the
 * built packages (`dist`, what users run); run with `--import tsx --conditions=@loadledger/source`
 * it imports the sources.
 *
 * usage: node bench/simCell.mjs TRACE RATE ENGINE POLICY FRONT_ENDS REPS
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

const [tracePath, rate, engine, policy, frontEnds, reps] = process.argv.slice(2)
const parsed = parseTrace(readFileSync(tracePath, "utf8"))
if (isTraceError(parsed)) throw new Error(parsed.message)
const trace = scaleTrace(parsed, { rateScale: Number(rate) })
const model = models["glm-5.3"]
const gpu = gpus.h200
const config = {
  dpSize: 8,
  engine,
  stepModel: stepModelFor({ model, gpu }),
  kvPoolTokens: kvPoolTokensFor(model, gpu),
  sparseTopK: model.attention.sparseTopK,
  frontEnds: Number(frontEnds)
}
const entry = findPolicy(policy)
if (entry === undefined) throw new Error(`unknown policy ${policy}`)
for (let i = 0; i < Number(reps); i++) {
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const r = simulate(config, trace, entry)
  const wallSeconds = (performance.now() - t0) / 1000
  const cpu = process.cpuUsage(cpu0)
  process.stdout.write(
    `${JSON.stringify({ wallSeconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, simulatedSeconds: r.simulatedSeconds, steps: r.steps, status: r.status._tag })}\n`
  )
}
