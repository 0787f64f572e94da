/**
 * `pnpm fuzz [--count N] [--seed S]`: the fuzz suite over every public decoder; prints the
 * figures and exits 1 unless throws, hangs, accepted negatives and leaked keys are all 0.
 */
import { parseArgs } from "node:util"
import { fuzzTargets, runFuzz } from "./run.js"

const { values } = parseArgs({
  options: { count: { type: "string", default: "1000000" }, seed: { type: "string", default: "1" } }
})
const count = Number(values.count)
const seed = Number(values.seed)
if (!Number.isSafeInteger(count) || count < 1 || !Number.isSafeInteger(seed)) {
  process.stderr.write("usage: pnpm fuzz [--count N] [--seed S]\n")
  process.exit(2)
}
const t0 = performance.now()
const r = runFuzz({
  count,
  seed,
  onProgress: (done) =>
    process.stderr.write(`${done} inputs, ${((performance.now() - t0) / 1000).toFixed(1)} s\n`)
})
const s = (performance.now() - t0) / 1000
process.stdout.write(
  [
    `fuzz: ${r.inputs} inputs over ${fuzzTargets.length} decoders, seed ${seed}, ${s.toFixed(1)} s (${((s / r.inputs) * 1e6).toFixed(1)} us/input)`,
    `throws: ${r.throws}`,
    `hangs (> 250 ms): ${r.hangs}`,
    `accepted-negatives: ${r.acceptedNegatives}`,
    `leaked-keys: ${r.leakedKeys}`,
    `slowest call: ${r.slowestMs.toFixed(1)} ms (${r.slowestDecoder})`,
    ...r.examples.map((e) => `  ${e}`)
  ].join("\n") + "\n"
)
process.exitCode = r.throws + r.hangs + r.acceptedNegatives + r.leakedKeys === 0 ? 0 : 1
