/**
 * Issue 14's "fast cells": simulated seconds per wall second of every cell of the default sweep,
 * on the built packages (`dist`, plain `node`: what users run) and on the sources under tsx.
 * The cells are read from the default sweep spec, `examples/sweeps/compare.yaml` (every trace at
 * every rate, DP 8, its model and GPU), each behind one SGLang controller (total-tokens) and
 * behind 4 vLLM front ends (vllm-kv-pressure): one policy per front-end kind stands for the sweep's
 * policies (their own route and observe costs differ; this bench tracks the simulator's part).
 *
 * Each cell runs in a fresh process: `cold` is its first run (JIT warm-up included, as a one-cell
 * CLI call pays it), `warm` the best of the following runs (as in a sweep worker that has run
 * cells before). The target is >= 5,000x on the warm built figure. The machine's load average is
 * printed with the table: on a shared machine, wall figures fall with load; the CPU-time figure
 * (simulated seconds per CPU second) moves less. Environment variables: see `simCellsBench`.
 *
 * @since 0.3.0
 */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { loadavg } from "node:os"
import { fileURLToPath } from "node:url"
import { parse } from "yaml"
import type { Benchmark } from "./harness.js"

const root = new URL("../", import.meta.url)
const specUrl = new URL("../examples/sweeps/compare.yaml", import.meta.url)

interface SweepSpec {
  readonly model: string
  readonly gpu: string
  readonly dp: ReadonlyArray<number>
  readonly traces: ReadonlyArray<{ readonly path: string; readonly rates: ReadonlyArray<number> }>
}

/** `[trace path (absolute), rate]` for every trace and rate of the default sweep, and its group. */
const sweepCells = () => {
  const spec = parse(readFileSync(specUrl, "utf8")) as SweepSpec
  const cells = spec.traces.flatMap((t) =>
    t.rates.map((rate) => [fileURLToPath(new URL(t.path, specUrl)), rate] as const)
  )
  return { cells, model: spec.model, gpu: spec.gpu, dp: spec.dp }
}
const frontEnds = [
  { label: "sglang x1", engine: "sglang", policy: "total-tokens", count: 1 },
  { label: "vllm x4", engine: "vllm", policy: "vllm-kv-pressure", count: 4 }
] as const

const TARGET = 5000

interface Run {
  readonly wallSeconds: number
  readonly cpuSeconds: number
  readonly simulatedSeconds: number
}

interface Cell {
  readonly trace: string
  readonly rate: number
  readonly fe: (typeof frontEnds)[number]
  readonly model: string
  readonly gpu: string
  readonly dp: number
}

/** Simulated seconds per wall second of the cold run and of the best warm run, and the best warm run's per CPU second. */
const measure = (
  nodeArgs: ReadonlyArray<string>,
  cell: Cell,
  reps: number,
  base?: string
): { cold: number; warm: number; warmCpu: number } => {
  const env = { ...process.env }
  if (base === undefined) delete env.BENCH_SIM_BASE
  else env.BENCH_SIM_BASE = base
  const out = execFileSync(
    process.execPath,
    [
      ...nodeArgs,
      fileURLToPath(new URL("./simCell.mjs", import.meta.url)),
      cell.trace,
      String(cell.rate),
      cell.fe.engine,
      cell.fe.policy,
      String(cell.fe.count),
      String(reps),
      cell.model,
      cell.gpu,
      String(cell.dp)
    ],
    { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], cwd: fileURLToPath(root), env }
  )
  const runs = out
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Run)
  const speed = (r: Run) => r.simulatedSeconds / r.wallSeconds
  const warmRuns = runs.length > 1 ? runs.slice(1) : runs
  const best = warmRuns.reduce((a, b) => (speed(b) > speed(a) ? b : a))
  const cpuSpeed = (r: Run) => r.simulatedSeconds / r.cpuSeconds
  return { cold: speed(runs[0]!), warm: speed(best), warmCpu: Math.max(...warmRuns.map(cpuSpeed)) }
}

const fmt = (x: number) => `${Math.round(x).toLocaleString("en-US")}x`
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(" ")

/**
 * Environment: `BENCH_SIM_REPS` (default 3) runs per cell; `BENCH_SIM_TSX=0` skips the tsx column;
 * `BENCH_SIM_BASE=<checkout>` adds a "base" column from another checkout's built packages (a
 * before/after in one run; build it first); `BENCH_SIM_ONLY=<text>` runs only the cells whose
 * row (trace file, rate, front ends) contains the text.
 */
export const simCellsBench: Benchmark = {
  name: "sim: fast cells (default sweep cells, built packages and tsx, target >= 5,000x)",
  run: () => {
    const reps = Math.max(2, Number(process.env.BENCH_SIM_REPS ?? 3))
    const withTsx = process.env.BENCH_SIM_TSX !== "0"
    const base = process.env.BENCH_SIM_BASE
    const only = process.env.BENCH_SIM_ONLY
    const spec = sweepCells()
    process.stdout.write(
      `cells of examples/sweeps/compare.yaml: ${spec.model} / ${spec.gpu} / DP ${spec.dp.join(",")}\n`
    )
    process.stdout.write(`load average at start: ${load()}\n`)
    process.stdout.write(
      `| trace | rate | front ends |${base ? " base built warm | base warm / CPU s |" : ""} built cold | built warm | built warm / CPU s |${base ? " built / base (wall, CPU) |" : ""} tsx warm | >= 5,000x (built warm) |\n|---|---|---|${base ? "---|---|" : ""}---|---|---|${base ? "---|" : ""}---|---|\n`
    )
    let met = 0
    let total = 0
    for (const dp of spec.dp)
      for (const [trace, rate] of spec.cells)
        for (const fe of frontEnds) {
          const row = `${trace.split("/").pop()} ${rate}x ${fe.label}`
          if (only !== undefined && !row.includes(only)) continue
          const cell: Cell = { trace, rate, fe, model: spec.model, gpu: spec.gpu, dp }
          const before = base === undefined ? undefined : measure([], cell, reps, base)
          const built = measure([], cell, reps)
          const tsx = withTsx
            ? measure(["--import", "tsx", "--conditions=@loadledger/source"], cell, reps)
            : undefined
          const ok = built.warm >= TARGET
          total++
          if (ok) met++
          process.stdout.write(
            `| ${trace.split("/").pop()} | ${rate}x | ${fe.label} |${before ? ` ${fmt(before.warm)} | ${fmt(before.warmCpu)} |` : ""} ${fmt(built.cold)} | ${fmt(built.warm)} | ${fmt(built.warmCpu)} |${before ? ` ${(built.warm / before.warm).toFixed(2)}, ${(built.warmCpu / before.warmCpu).toFixed(2)} |` : ""} ${tsx ? fmt(tsx.warm) : "-"} | ${ok ? "yes" : "no"} |\n`
          )
        }
    process.stdout.write(
      `${met} of ${total} cells >= ${TARGET}x (built, warm); load average at end: ${load()}\n`
    )
  }
}
