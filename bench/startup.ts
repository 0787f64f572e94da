// Start-up of the built CLI (issue #28 item 3): whole-process wall time of `loadledger --version`,
// `--help` and a one-policy replay of the first 1,000 Mooncake requests, each the median of RUNS
// runs after one warm-up. Targets: 150 ms, 150 ms, 300 ms. Run `pnpm build` first.
import { spawnSync } from "node:child_process"
import { performance } from "node:perf_hooks"

const RUNS = 7
const bin = new URL("../packages/cli/dist/bin.js", import.meta.url).pathname
const trace = new URL("../examples/traces/mooncake/conversation_trace.jsonl", import.meta.url).pathname
const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>, number]> = [
  ["--version", ["--version"], 150],
  ["--help", ["--help"], 150],
  [
    "simulate 1 policy x 1,000 requests",
    ["simulate", "--trace", trace, "--policies", "total-tokens", "--limit", "1000"],
    300
  ]
]
const median = (xs: Array<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)] ?? Number.NaN
}
for (const [label, args, target] of cases) {
  const walls: Array<number> = []
  for (let i = 0; i <= RUNS; i++) {
    const t0 = performance.now()
    const r = spawnSync("node", [bin, ...args], { stdio: "ignore" })
    if (r.status !== 0) throw new Error(`${label}: exit ${r.status}`)
    if (i > 0) walls.push(performance.now() - t0)
  }
  const m = median(walls)
  console.log(
    `${label.padEnd(38)} median ${m.toFixed(0).padStart(5)} ms wall (target ${target} ms: ${m <= target ? "met" : "missed"})`
  )
}
