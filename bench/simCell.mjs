/**
 * One simulator cell for `bench/simCells.ts`, in a process of its own: reads a trace, scales it, runs
 * `simulate` `reps` times on one DP group and prints one JSON line per run (wall and CPU seconds,
 * simulated seconds). Plain JavaScript on purpose: run by plain `node` it imports the built
 * packages (`dist`, what users run); run with `--import tsx --conditions=@loadledger/source` it
 * imports the sources. With `BENCH_SIM_BASE=<checkout>` it imports that checkout's built
 * packages instead (`<checkout>/packages/*\/dist`): a before/after of two builds in one bench run.
 *
 * usage: node bench/simCell.mjs TRACE RATE ENGINE POLICY FRONT_ENDS REPS MODEL GPU DP
 */
import { readFileSync } from "node:fs"
import { load } from "./loadBuild.mjs"

const { findPolicy } = await load("policies")
const { isTraceError, kvPoolTokensFor, parseTrace, scaleTrace, simulate, stepModelFor } = await load("sim")
const { gpus, models } = await load("step-time")

const [tracePath, rate, engine, policy, frontEnds, reps, modelName, gpuName, dp] = process.argv.slice(2)
const parsed = parseTrace(readFileSync(tracePath, "utf8"))
if (isTraceError(parsed)) throw new Error(parsed.message)
const trace = scaleTrace(parsed, { rateScale: Number(rate) })
const model = models[modelName ?? "glm-5.3"]
const gpu = gpus[gpuName ?? "h200"]
if (model === undefined || gpu === undefined) throw new Error(`unknown model ${modelName} or GPU ${gpuName}`)
const config = {
  dpSize: Number(dp ?? 8),
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
