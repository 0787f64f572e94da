/**
 * `loadledger sweep SPEC`: runs the cells of a sweep specification not yet in its output folder (resumable, on worker threads) and writes their runs, summary and report.
 *
 * @since 0.1.0
 */
import { accessSync, constants, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { availableParallelism } from "node:os"
import { join } from "node:path"
import { policyEntries } from "@loadledger/policies"
import { describeSlo } from "@loadledger/sim"
import type { Command } from "commander"
import { fail, nonNegativeInt, positiveInt } from "../internal/args.js"
import { examplesHelp } from "../internal/examples.js"
import { readTraceFile } from "../internal/simSetup.js"
import { CONFIRM_SECONDS, estimateLine, estimateSweep, humanDuration } from "../sweep/estimate.js"
import { type GoodputCellResult, goodputBlocks, goodputJson, goodputMarkdown } from "../sweep/goodputCells.js"
import { sweepReport } from "../sweep/report.js"
import { mergeRuns, readCells, runSweep } from "../sweep/run.js"
import { expandCells, type GoodputCells, parseShard, parseSpec, type SweepSpec } from "../sweep/Spec.js"
import { markdownTable, summaryRows } from "../sweep/Summary.js"
import { fieldWins, verdictMarkdown, verdictRows } from "../sweep/Verdict.js"
import { progressMode, startProgress } from "./progress.js"
import { renderReport } from "./simulateReport.js"

/**
 * Options of `loadledger sweep`, as parsed.
 *
 * @category sweep
 * @since 0.2.0
 */
export interface SweepOptions {
  readonly out?: string | undefined
  /** Cells at a time, on worker threads (default: one per core; 1 runs them in this thread). */
  readonly jobs?: number | undefined
  /** The older spelling of `jobs`, counting threads: 0 runs the cells in this thread, 1 on one thread. */
  readonly workers?: number | undefined
  readonly shard?: string | undefined
  readonly quiet?: boolean | undefined
  /** Progress lines on a non-terminal stderr (a terminal always gets the bar unless `quiet`). */
  readonly progress?: boolean | undefined
  readonly json?: boolean | undefined
  /** Print the cell count and the estimate, run nothing, write nothing. */
  readonly dryRun?: boolean | undefined
  /** Start a sweep above `CONFIRM_SECONDS` on a terminal without asking. */
  readonly yes?: boolean | undefined
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

const missingNote = (n: number) =>
  n > 0 ? `${n} cells not run yet (other shards?): merge them with \`loadledger sweep merge\`\n` : ""

/** A goodput sweep's summary: a ranked board per (trace, DP, front end) block. */
const writeGoodputSummary = async (outDir: string, spec: SweepSpec, g: GoodputCells, json: boolean) => {
  const { results, missing } = readCells<GoodputCellResult>(outDir, expandCells(spec))
  const blocks = goodputBlocks(results, g)
  const table = goodputMarkdown(blocks, g)
  const { renderGoodputReport } = await import("../goodput/report.js")
  const { boardHtmlTable } = await import("../goodput/table.js")
  writeFileSync(
    join(outDir, "report.html"),
    await renderGoodputReport({
      title: `loadledger sweep: ${spec.name} (goodput)`,
      context: [
        `${results.length} cells; ${spec.model} on ${spec.gpu}; SLO: ${describeSlo(g.slo)}`,
        ...blocks.map((b, i) => `Table ${i + 1}: ${b.trace}, DP ${b.dp}, ${b.frontEnd}`)
      ],
      table: blocks.map((b, i) => boardHtmlTable([b.board], `summary-${i + 1}`)).join("\n"),
      charts: []
    })
  )
  const rows = goodputJson(blocks)
  writeFileSync(
    join(outDir, "summary.json"),
    `${JSON.stringify({ spec, slo: { ...g.slo, description: describeSlo(g.slo) }, blocks: rows, missing: missing.map((c) => c.id) }, null, 2)}\n`
  )
  writeFileSync(join(outDir, "summary.md"), `${table}\n`)
  if (json) process.stdout.write(`${JSON.stringify({ blocks: rows, missing: missing.map((c) => c.id) })}\n`)
  else process.stdout.write(`${table}\n${missingNote(missing.length)}results in ${outDir}\n`)
}

/** Where a sweep of fixed-rate cells points for a verdict. */
const SWEEP_HINT =
  "single-run percentiles at fixed rates can flip between nearby rates: for a verdict with confidence, give the spec `goodput: {slo: ...}` (see examples/sweeps/goodput.yaml) or run loadledger goodput"

const writeSummary = async (outDir: string, spec: SweepSpec, json: boolean) => {
  if (spec.goodput !== undefined) return writeGoodputSummary(outDir, spec, spec.goodput, json)
  const { results, missing } = readCells(outDir, expandCells(spec))
  const rows = summaryRows(results)
  // loadledger's own policies (not reproducing upstream) against the best of the rest, per block
  const reference = new Set(
    policyEntries()
      .filter((e) => e.reference)
      .map((e) => e.name)
  )
  const isOurs = (p: string) => !reference.has(p)
  const verdict = verdictRows(rows, isOurs)
  const field = fieldWins(rows, isOurs)
  const table = `${markdownTable(rows)}${verdict.length > 0 ? `\n${verdictMarkdown(verdict, field)}` : ""}`
  writeFileSync(join(outDir, "report.html"), await renderReport(sweepReport(spec, results)))
  writeFileSync(
    join(outDir, "summary.json"),
    `${JSON.stringify({ spec, rows, verdict, fieldWins: field, missing: missing.map((c) => c.id) }, null, 2)}\n`
  )
  writeFileSync(join(outDir, "summary.md"), `${table}\n`)
  if (json) process.stdout.write(`${JSON.stringify({ rows, missing: missing.map((c) => c.id) })}\n`)
  else process.stdout.write(`${table}\n${missingNote(missing.length)}results in ${outDir}\n${SWEEP_HINT}\n`)
}

/**
 * Run a sweep from its spec file: check everything first (spec, shard, output folder), then run the
 * cells on worker threads with progress on stderr, keep each cell's JSON, and write
 * `summary.json`, `summary.md` (printed) and the interactive `report.html` for the cells present.
 *
 * @example
 * ```ts
 * import { runSweepCommand } from "./sweep.js"
 * await runSweepCommand("no-such-spec.yaml", {}).catch((e: Error) => e.message)
 * // => "spec file not found: no-such-spec.yaml"
 * ```
 *
 * @category sweep
 * @since 0.2.0
 */
export const runSweepCommand = async (specFile: string, o: SweepOptions): Promise<void> => {
  if (o.jobs !== undefined && o.workers !== undefined)
    return fail("--jobs and --workers both set how many cells run at a time: give one (--jobs)")
  const workers = o.jobs === undefined ? o.workers : o.jobs <= 1 ? 0 : o.jobs
  const spec = readSpec(specFile)
  const shard = o.shard === undefined ? undefined : parseShard(o.shard)
  const outDir = o.out ?? join("sweep-results", spec.name)
  const cells = expandCells(spec).filter((_, k) => shard === undefined || k % shard.count === shard.index - 1)
  // every trace is read and checked before the output folder is made: a missing or bad trace
  // leaves nothing behind
  for (const t of new Set(cells.map((c) => `${c.limit ?? ""}\u0000${c.trace}`))) {
    const [limit, trace] = t.split("\u0000") as [string, string]
    readTraceFile(trace, undefined, trace, limit === "" ? undefined : Number(limit))
  }
  const threads = workers === undefined ? availableParallelism() : Math.max(1, workers)
  const estimate = estimateSweep(cells, outDir, threads)
  process.stderr.write(`sweep ${spec.name}: ${estimateLine(estimate, threads)}\n`)
  if (o.dryRun === true) return
  if (estimate.seconds > CONFIRM_SECONDS && o.yes !== true) {
    if (process.stdin.isTTY === true && process.stderr.isTTY === true)
      return fail(
        `this sweep would take about ${humanDuration(estimate.seconds)}: add --yes to start it (or --dry-run to size it, a spec with limit: N to shorten it)`
      )
    process.stderr.write("not a terminal: starting without --yes\n")
  }
  writableDir(outDir)
  const total = cells.length
  const started = performance.now()
  const bar = await startProgress({
    total,
    unit: "cells",
    mode: progressMode({
      quiet: o.quiet === true,
      isTTY: process.stderr.isTTY === true,
      progress: o.progress
    }),
    stream: process.stderr,
    now: () => (performance.now() - started) / 1000
  })
  let done = 0
  // cells run on worker threads, so this thread is free to say where the sweep stands every 2 s
  const ticker = setInterval(() => bar.update(done), 2000)
  try {
    await runSweep(spec, {
      outDir,
      workers,
      shard,
      onProgress: (p) => {
        done = p.done
        bar.update(p.done, `${p.skipped > 0 ? `${p.skipped} kept, ` : ""}last ${p.cell.id}`)
      }
    })
  } finally {
    clearInterval(ticker)
    bar.stop()
  }
  await writeSummary(outDir, spec, o.json === true)
}

/**
 * Registers `loadledger sweep SPEC [--out DIR] [--jobs N] [--shard i/n] [--quiet] [--json]` and
 * `loadledger sweep merge OUT DIR...`.
 *
 * @example
 * ```ts
 * import { Command } from "commander"
 * import { register } from "./sweep.js"
 * const program = new Command()
 * register(program)
 * const sweep = program.commands[0]!
 * sweep.name() // => "sweep"
 * sweep.commands.map((c) => c.name()) // => ["run", "merge"]
 * ```
 *
 * @since 0.2.0
 */
export const register = (program: Command): void => {
  const sweep = program
    .command("sweep")
    .description(
      "run a grid of simulations (traces x rates x DP sizes x front ends x policies) from a YAML/JSON spec"
    )
    .addHelpText("after", examplesHelp("sweep"))
  sweep
    .command("run <spec>", { isDefault: true })
    .description("run the cells of SPEC not yet in the output folder (resumable), on worker threads")
    .option("--out <dir>", "output folder (default: sweep-results/<spec name>)")
    .option(
      "--jobs <n>",
      "cells at a time on worker threads (default: one per core; 1 = in this thread); the same results for any n",
      positiveInt("--jobs")
    )
    .option(
      "--workers <n>",
      "the older spelling of --jobs, in threads (0 = run in this thread)",
      nonNegativeInt("--workers")
    )
    .option("--shard <i/n>", "run only shard i of n (cells k with k % n == i-1); combine with `sweep merge`")
    .option("--quiet", "no progress on stderr")
    .option("--progress", "progress on a non-terminal stderr too (a line every 2 s; a terminal gets a bar)")
    .option("--json", "print the summary rows as JSON")
    .option("--dry-run", "print the cell count and the time estimate; run and write nothing")
    .option(
      "--yes",
      `start without asking when the estimate is above ${CONFIRM_SECONDS / 60} min on a terminal (off a terminal a sweep starts anyway, and says so)`
    )
    .addHelpText("after", examplesHelp("sweep"))
    .action(async (spec: string, opts: SweepOptions) => {
      await runSweepCommand(spec, opts)
    })
  sweep
    .command("merge <out> <dirs...>")
    .description("combine the output folders of several shards or runs of one spec into OUT")
    .option("--json", "print the summary rows as JSON")
    .action(async (out: string, dirs: Array<string>, opts: { json?: boolean }) => {
      writableDir(out)
      const spec = mergeRuns(out, dirs)
      await writeSummary(out, spec, opts.json === true)
    })
}
