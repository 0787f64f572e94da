/**
 * Start-up of the built CLI (issue #28 item 3): whole-process wall time of `loadledger --version`,
 * `--help` and a one-policy replay of the first 1,000 Mooncake requests, each the median of `runs`
 * runs after one warm-up. Targets: 150 ms, 150 ms, 300 ms. Run `pnpm build` first.
 *
 * Beside the wall time: the child's CPU time (user + system, from /proc/self/stat's cutime and
 * cstime, 10 ms ticks; Linux only, NaN elsewhere) and, first, the same figures for `node -e 0`:
 * on a shared machine the wall time of a bare node start moves with the load, and what the CLI
 * adds is the difference. Used by `bench/startup.ts` (`pnpm bench:start`) and `bench/simScale.ts`.
 *
 * @since 0.6.0
 */
import { spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { performance } from "node:perf_hooks"

const bin = new URL("../packages/cli/dist/bin.js", import.meta.url).pathname
const trace = new URL("../examples/traces/mooncake/conversation_trace.jsonl", import.meta.url).pathname
const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>, number | undefined]> = [
  ["node -e 0 (reference, no target)", ["-e", "0"], undefined],
  ["--version", [bin, "--version"], 150],
  ["--help", [bin, "--help"], 150],
  [
    "simulate 1 policy x 1,000 requests",
    [bin, "simulate", "--trace", trace, "--policies", "total-tokens", "--limit", "1000"],
    300
  ]
]

const median = (xs: Array<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)] ?? Number.NaN
}

/** CPU milliseconds of this process's waited-for children so far, or NaN off Linux. */
const childCpuMs = (): number => {
  try {
    const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1]!.split(" ")
    return (Number(fields[13]) + Number(fields[14])) * 10
  } catch {
    return Number.NaN
  }
}

export interface StartupRow {
  readonly label: string
  readonly wallMs: number
  readonly cpuMs: number
  readonly targetMs: number | undefined
}

/** Each case's median wall and CPU milliseconds over `runs` runs after a warm-up. */
export const measureStartup = (runs = 7): Array<StartupRow> =>
  cases.map(([label, args, targetMs]) => {
    const walls: Array<number> = []
    const cpus: Array<number> = []
    for (let i = 0; i <= runs; i++) {
      const c0 = childCpuMs()
      const t0 = performance.now()
      const r = spawnSync("node", args, { stdio: "ignore" })
      if (r.status !== 0) throw new Error(`${label}: exit ${r.status}`)
      if (i > 0) {
        walls.push(performance.now() - t0)
        cpus.push(childCpuMs() - c0)
      }
    }
    return { label, wallMs: median(walls), cpuMs: median(cpus), targetMs }
  })
