import { accessSync, constants, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import type { Command } from "commander"
import { mergeRuns, readCells, runSweep } from "../sweep/run.js"
import { expandCells, parseShard, parseSpec, type SweepSpec } from "../sweep/Spec.js"
import { markdownTable, summaryRows } from "../sweep/Summary.js"

/**
 * Options of `loadledger sweep`, as parsed.
 *
 * @category sweep
 * @since 0.2.0
 */
export interface SweepOptions {
  readonly out?: string | undefined
  readonly workers?: number | undefined
  readonly shard?: string | undefined
  readonly quiet?: boolean | undefined
  readonly json?: boolean | undefined
}

const fail = (message: string): never => {
  throw new Error(message)
}

const readSpec = (file: string): SweepSpec => {
  let text: string
  try {
    text = readFileSync(file, "utf8")
  } catch (e) {
    const code = (e as { code?: string }).code
    return fail(code === "ENOENT" ? `spec file not found: ${file}` : `cannot read spec ${file}: ${code ?? e}`)
  }
  try {
    return parseSpec(text, file)
  } catch (e) {
    return fail(`${file}: ${e instanceof Error ? e.message : String(e)}`)
  }
}

const writableDir = (dir: string) => {
  try {
    mkdirSync(dir, { recursive: true })
    accessSync(dir, constants.W_OK)
  } catch (e) {
    fail(`cannot write to ${dir}: ${(e as { code?: string }).code ?? e}`)
  }
}

const clock = (s: number) => {
  const t = Math.round(s)
  return t >= 3600
    ? `${Math.floor(t / 3600)}h${String(Math.floor((t % 3600) / 60)).padStart(2, "0")}m`
    : `${Math.floor(t / 60)}m${String(t % 60).padStart(2, "0")}s`
}

/**
 * One progress line for a sweep: cells done of total (kept from an earlier run in brackets), elapsed,
 * and an ETA from the cells this run finished.
 *
 * @example
 * ```ts
 * import { progressLine } from "./sweep.js"
 * progressLine({ done: 6, total: 10, skipped: 2, elapsedSeconds: 40 })
 * // => "sweep: 6/10 cells (2 kept) 0m40s elapsed, ETA 0m40s"
 * ```
 *
 * @category sweep
 * @since 0.2.0
 */
export const progressLine = (p: {
  done: number
  total: number
  skipped: number
  elapsedSeconds: number
}): string => {
  const ran = p.done - p.skipped
  const eta = ran > 0 ? `, ETA ${clock(((p.total - p.done) * p.elapsedSeconds) / ran)}` : ""
  return `sweep: ${p.done}/${p.total} cells${p.skipped > 0 ? ` (${p.skipped} kept)` : ""} ${clock(p.elapsedSeconds)} elapsed${eta}`
}

type Progress = (p: { done: number; total: number; skipped: number }) => void

const progress = async (quiet: boolean, total: number): Promise<{ tick: Progress; stop: () => void }> => {
  if (quiet) return { tick: () => {}, stop: () => {} }
  const started = performance.now()
  if (process.stderr.isTTY === true) {
    const { SingleBar, Presets } = await import("cli-progress")
    const bar = new SingleBar(
      {
        format: "sweep {bar} {value}/{total} cells | {duration_formatted} elapsed | ETA {eta_formatted}",
        stream: process.stderr
      },
      Presets.shades_classic
    )
    bar.start(total, 0)
    return { tick: (p) => bar.update(p.done), stop: () => bar.stop() }
  }
  let last: { done: number; total: number; skipped: number } = { done: 0, total, skipped: 0 }
  const say = () =>
    process.stderr.write(
      `${progressLine({ ...last, elapsedSeconds: (performance.now() - started) / 1000 })}\n`
    )
  const timer = setInterval(say, 2000)
  timer.unref()
  say()
  return {
    tick: (p) => {
      last = p
    },
    stop: () => {
      clearInterval(timer)
      say()
    }
  }
}

const writeSummary = (outDir: string, spec: SweepSpec, json: boolean) => {
  const { results, missing } = readCells(outDir, expandCells(spec))
  const rows = summaryRows(results)
  const table = markdownTable(rows)
  writeFileSync(
    join(outDir, "summary.json"),
    `${JSON.stringify({ spec, rows, missing: missing.map((c) => c.id) }, null, 2)}\n`
  )
  writeFileSync(join(outDir, "summary.md"), `${table}\n`)
  if (json) process.stdout.write(`${JSON.stringify({ rows, missing: missing.map((c) => c.id) })}\n`)
  else
    process.stdout.write(
      `${table}\n${missing.length > 0 ? `${missing.length} cells not run yet (other shards?): merge them with \`loadledger sweep merge\`\n` : ""}results in ${outDir}\n`
    )
}

/**
 * Run a sweep from its spec file: check everything first (spec, shard, output folder), then run the
 * cells on worker threads with progress on stderr, keep each cell's JSON, and write
 * `summary.json`, `summary.md` (printed) for the cells present.
 *
 * @category sweep
 * @since 0.2.0
 */
export const runSweepCommand = async (specFile: string, o: SweepOptions): Promise<void> => {
  const spec = readSpec(specFile)
  const shard = o.shard === undefined ? undefined : parseShard(o.shard)
  const outDir = o.out ?? join("sweep-results", spec.name)
  writableDir(outDir)
  const total = expandCells(spec).filter(
    (_, k) => shard === undefined || k % shard.count === shard.index - 1
  ).length
  const bar = await progress(o.quiet === true, total)
  try {
    await runSweep(spec, { outDir, workers: o.workers, shard, onProgress: bar.tick })
  } finally {
    bar.stop()
  }
  writeSummary(outDir, spec, o.json === true)
}

const count = (name: string) => (v: string) => {
  const n = Number(v)
  return Number.isInteger(n) && n >= 0 ? n : fail(`${name} must be a non-negative integer, got "${v}"`)
}

/**
 * Registers `loadledger sweep SPEC [--out DIR] [--workers N] [--shard i/n] [--quiet] [--json]` and
 * `loadledger sweep merge OUT DIR...`.
 *
 * @since 0.2.0
 */
export const register = (program: Command): void => {
  const sweep = program
    .command("sweep")
    .description(
      "run a grid of simulations (traces x rates x DP sizes x front ends x policies) from a YAML/JSON spec"
    )
  sweep
    .command("run <spec>", { isDefault: true })
    .description("run the cells of SPEC not yet in the output folder (resumable), on worker threads")
    .option("--out <dir>", "output folder (default: sweep-results/<spec name>)")
    .option(
      "--workers <n>",
      "worker threads (default: one per core; 0 = run in this thread)",
      count("--workers")
    )
    .option("--shard <i/n>", "run only shard i of n (cells k with k % n == i-1); combine with `sweep merge`")
    .option("--quiet", "no progress on stderr")
    .option("--json", "print the summary rows as JSON")
    .action(async (spec: string, opts: SweepOptions) => {
      await runSweepCommand(spec, opts)
    })
  sweep
    .command("merge <out> <dirs...>")
    .description("combine the output folders of several shards or runs of one spec into OUT")
    .option("--json", "print the summary rows as JSON")
    .action((out: string, dirs: Array<string>, opts: { json?: boolean }) => {
      writableDir(out)
      const spec = mergeRuns(out, dirs)
      writeSummary(out, spec, opts.json === true)
    })
}
