/**
 * Issue 32's exposition figures (`pnpm bench:expfmt`): lines per CPU second and memory for a
 * 1-million-series gateway page, read by the **built** `@loadledger/schema` (`dist`, what users
 * run: `decodeLedgerReport`, kind `sglang-metrics`) and, beside it, by the sources under tsx (the
 * same decode; the parser alone with only the modelled series kept; the full parse that
 * materialises every sample, what the parser did before it kept only the modelled ones).
 *
 * Each row runs in a process of its own (`bench/expfmtCell.mjs`), so its peak RSS is its own. The
 * page: a model gateway in front of `BENCH_EXPFMT_WORKERS` SGLang workers (default 16) of 8 DP
 * ranks each: per (worker, rank) the scheduler gauges (`sglang:num_running_reqs`, ...) and, filling
 * the page to `BENCH_EXPFMT_LINES` (default 1,000,000) lines, request-latency histograms with their
 * buckets, all with `worker` and `dp_rank` labels. Rates are per CPU second (user + system; wall
 * time beside), the best of `BENCH_EXPFMT_REPS` runs (default 3; the first pays JIT warm-up).
 * Memory: the process's peak RSS above its RSS once the page was built (the page string excluded),
 * per modelled series, and the heap the result keeps per modelled series. Target (issue 32):
 * >= 1M lines per CPU second, memory bounded by the modelled series; aim: >= 1.5M, clearly above.
 *
 * @since 0.6.0
 */
import { execFileSync } from "node:child_process"
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"

interface Cell {
  readonly variant: string
  readonly lines: number
  readonly modelled: number
  readonly pageBytes: number
  readonly cpuSeconds: number
  readonly wallSeconds: number
  readonly keptBytes: number | null
  readonly peakRssBytes: number
  readonly baselineRssBytes: number
}

const root = new URL("..", import.meta.url)
const cell = fileURLToPath(new URL("./expfmtCell.mjs", import.meta.url))
const tsx = ["--import", "tsx", "--conditions=@loadledger/source"]
const run = (nodeArgs: ReadonlyArray<string>, variant: string): Cell =>
  JSON.parse(
    execFileSync(process.execPath, ["--expose-gc", ...nodeArgs, cell, variant], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
      cwd: fileURLToPath(root)
    }).trim()
  ) as Cell

const mb = (b: number): string => `${(b / 2 ** 20).toFixed(1)} MB`
const row = (label: string, c: Cell): number => {
  const rate = c.lines / c.cpuSeconds
  const peak = (c.peakRssBytes - c.baselineRssBytes) / c.modelled
  const kept = c.keptBytes === null ? "n/a" : `${Math.round(c.keptBytes / c.modelled)} B`
  console.log(
    `${label.padEnd(40)} ${(rate / 1e6).toFixed(2).padStart(5)} M lines/CPU-s ${(c.cpuSeconds * 1000).toFixed(0).padStart(6)} ms CPU ${(c.wallSeconds * 1000).toFixed(0).padStart(6)} ms wall  peak ${mb(c.peakRssBytes - c.baselineRssBytes).padStart(9)} = ${(peak / 1024).toFixed(1).padStart(6)} KB/series  result keeps ${kept.padStart(7)}/series`
  )
  return rate
}

const built = existsSync(new URL("../packages/schema/dist/index.js", import.meta.url))
const first = built ? run([], "decode") : run(tsx, "decode")
console.log(
  `page: ${first.lines.toLocaleString("en")} lines, ${mb(first.pageBytes)}, ${first.modelled} modelled series`
)
let distRate: number | undefined
if (built) distRate = row("built (dist) decodeLedgerReport", first)
else console.log("built (dist): packages/schema/dist is missing, run `pnpm build` (pnpm bench:expfmt does)")
row("source (tsx) decodeLedgerReport", built ? run(tsx, "decode") : first)
row("source (tsx) parse, modelled series kept", run(tsx, "parse-modelled"))
row("source (tsx) parse, every sample kept", run(tsx, "parse-all"))
if (distRate !== undefined)
  console.log(
    `target >= 1.00 M lines/CPU-s for the built decode: ${distRate >= 1e6 ? "met" : "NOT met"}, clearly above it (>= 1.50 M): ${distRate >= 1.5e6 ? "yes" : "no"} (${(distRate / 1e6).toFixed(2)} M)`
  )
