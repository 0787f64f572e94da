/**
 * Run a sweep's cells on worker threads, keep each finished cell as JSON (so a rerun resumes), and
 * merge the cells of several runs or shards.
 *
 * @since 0.2.0
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { availableParallelism } from "node:os"
import { join } from "node:path"
import { isDeepStrictEqual } from "node:util"
import { runJobs, workerEntry } from "../internal/pool.js"
import { expandCells, inShard } from "./Cells.js"
import { type GoodputCellResult, runGoodputCell } from "./goodputCells.js"
import type { CellResult } from "./runCell.js"
import { runCell } from "./runCell.js"
import type { Cell, SweepSpec } from "./SpecTypes.js"

/**
 * How to run a sweep: `workers` threads (0 runs the cells in this thread), an optional shard, and a
 * progress callback called after every finished cell.
 *
 * @category sweep
 * @since 0.2.0
 */
export interface RunOptions {
  readonly outDir: string
  readonly workers?: number | undefined
  readonly shard?: { readonly index: number; readonly count: number } | undefined
  readonly onProgress?:
    | ((p: { done: number; total: number; skipped: number; cell: Cell }) => void)
    | undefined
}

/**
 * What a run did: the cells of its grid slice (`cells`), how many were already finished and kept
 * (`skipped`) and how many it ran (`ran`).
 *
 * @category sweep
 * @since 0.2.0
 */
export interface RunReport {
  readonly cells: ReadonlyArray<Cell>
  readonly skipped: number
  readonly ran: number
}

/**
 * A finished cell of either kind: a replay at one rate, or a goodput search (a spec with `goodput`).
 *
 * @category sweep
 * @since 0.5.0
 */
export type AnyCellResult = CellResult | GoodputCellResult

/**
 * Run one cell of either kind, in this thread.
 *
 * @example
 * ```ts
 * import { runAnyCell } from "./run.js"
 * const cell = {
 *   id: "demo", trace: "examples/traces/mooncake/conversation_trace.jsonl", traceName: "conversation", rate: 1,
 *   limit: 4, dp: 2, engine: "sglang" as const, frontEnds: 1, policy: "total-tokens", model: "glm-5.3", gpu: "h200", seed: 0
 * }
 * const done = runAnyCell(cell)
 * "result" in done && done.result.requests.finished // => 4
 * ```
 *
 * @category sweep
 * @since 0.5.0
 */
export const runAnyCell = (cell: Cell): AnyCellResult =>
  cell.goodput === undefined ? runCell(cell) : runGoodputCell(cell)

const cellsDir = (outDir: string) => join(outDir, "cells")
const cellFile = (outDir: string, id: string) => join(cellsDir(outDir), `${id}.json`)

/** A finished cell kept in `outDir`, when its file holds exactly this cell. */
const kept = (outDir: string, cell: Cell): AnyCellResult | undefined => {
  const f = cellFile(outDir, cell.id)
  if (!existsSync(f)) return undefined
  try {
    const r = JSON.parse(readFileSync(f, "utf8")) as AnyCellResult
    // compare as written: JSON drops undefined fields (a spec without `limit`), so the cell must too
    return isDeepStrictEqual(r.cell, JSON.parse(JSON.stringify(cell))) ? r : undefined
  } catch {
    return undefined // a torn or foreign file: run the cell again
  }
}

const writeCell = (outDir: string, r: AnyCellResult) => {
  const f = cellFile(outDir, r.cell.id)
  writeFileSync(`${f}.tmp`, JSON.stringify(r))
  renameSync(`${f}.tmp`, f)
}

/**
 * Run every cell of `spec` (or of one shard) that `outDir` does not already hold, writing
 * `outDir/spec.json` and one `outDir/cells/<id>.json` per cell as it finishes. A cell file is
 * reused only when it holds exactly the same cell, so changing the spec reruns what changed.
 *
 * @example
 * ```ts
 * import { mkdtempSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * import { runSweep } from "./run.js"
 * import { parseSpec } from "./Spec.js"
 * const spec = parseSpec("traces: [{path: examples/traces/mooncake/conversation_trace.jsonl, rates: [1]}]\nlimit: 4\ndp: [2]\npolicies: [round-robin, total-tokens]\n", "demo.yaml")
 * const outDir = mkdtempSync(join(tmpdir(), "loadledger-sweep-"))
 * const first = await runSweep(spec, { outDir, workers: 0 }) // 0 workers: run the cells in this thread
 * first.cells.map((c) => c.policy) // => ["round-robin", "total-tokens"]
 * first.ran // => 2
 * const again = await runSweep(spec, { outDir, workers: 0 })
 * again.ran // => 0
 * again.skipped // => 2
 * ```
 *
 * @category sweep
 * @since 0.2.0
 */
export const runSweep = async (spec: SweepSpec, o: RunOptions): Promise<RunReport> => {
  const all = expandCells(spec)
  const cells = o.shard === undefined ? all : all.filter((_, k) => inShard(o.shard!, k))
  mkdirSync(cellsDir(o.outDir), { recursive: true })
  writeFileSync(join(o.outDir, "spec.json"), `${JSON.stringify(spec, null, 2)}\n`)
  const todo = cells.filter((c) => kept(o.outDir, c) === undefined)
  const skipped = cells.length - todo.length
  let done = skipped
  const finished = (r: AnyCellResult) => {
    writeCell(o.outDir, r)
    done++
    o.onProgress?.({ done, total: cells.length, skipped, cell: r.cell })
  }
  await runJobs(
    {
      entry: workerEntry(import.meta.url, "sweep-worker.js"),
      threads: o.workers ?? availableParallelism(),
      inThread: runAnyCell
    },
    todo,
    finished
  )
  return { cells, skipped, ran: todo.length }
}

/**
 * Read the finished cells of `cells` from `outDir`, in grid order; cells not (yet) there are listed
 * in `missing`.
 *
 * @example
 * ```ts
 * import { mkdtempSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * import { readCells, runSweep } from "./run.js"
 * import { expandCells } from "./Cells.js"
 * import { parseSpec } from "./Spec.js"
 * const spec = parseSpec("traces: [{path: examples/traces/mooncake/conversation_trace.jsonl, rates: [1]}]\nlimit: 4\ndp: [2]\npolicies: [round-robin, total-tokens]\n", "demo.yaml")
 * const outDir = mkdtempSync(join(tmpdir(), "loadledger-sweep-"))
 * const cells = expandCells(spec)
 * readCells(outDir, cells).missing.length // => 2
 * await runSweep(spec, { outDir, workers: 0, shard: { index: 1, count: 2 } })
 * const { results, missing } = readCells(outDir, cells)
 * results.map((r) => r.cell.policy) // => ["round-robin"]
 * missing.map((c) => c.policy) // => ["total-tokens"]
 * ```
 *
 * @category sweep
 * @since 0.2.0
 */
export const readCells = <R extends AnyCellResult = CellResult>(
  outDir: string,
  cells: ReadonlyArray<Cell>
): { readonly results: ReadonlyArray<R>; readonly missing: ReadonlyArray<Cell> } => {
  const results: Array<R> = []
  const missing: Array<Cell> = []
  for (const c of cells) {
    const r = kept(outDir, c)
    if (r === undefined) missing.push(c)
    else results.push(r as R)
  }
  return { results, missing }
}

/**
 * Combine the output folders of several runs or shards of one spec into `outDir`: every folder's
 * `spec.json` must be the same spec; only cell files that hold a cell of that spec are taken (a cell
 * found in several folders is deterministic, so any copy will do). Returns
 * the spec (for the summary and report).
 *
 * @example
 * ```ts
 * import { mkdtempSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * import { mergeRuns, readCells, runSweep } from "./run.js"
 * import { expandCells } from "./Cells.js"
 * import { parseSpec } from "./Spec.js"
 * const spec = parseSpec("traces: [{path: examples/traces/mooncake/conversation_trace.jsonl, rates: [1]}]\nlimit: 4\ndp: [2]\npolicies: [round-robin, total-tokens]\n", "demo.yaml")
 * const dir = () => mkdtempSync(join(tmpdir(), "loadledger-sweep-"))
 * const [a, b, merged] = [dir(), dir(), dir()]
 * await runSweep(spec, { outDir: a, workers: 0, shard: { index: 1, count: 2 } })
 * await runSweep(spec, { outDir: b, workers: 0, shard: { index: 2, count: 2 } })
 * mergeRuns(merged, [a, b]).policies // => ["round-robin", "total-tokens"]
 * readCells(merged, expandCells(spec)).missing // => []
 * ```
 *
 * @category sweep
 * @since 0.2.0
 */
export const mergeRuns = (outDir: string, from: ReadonlyArray<string>): SweepSpec => {
  if (from.length === 0) throw new Error("sweep merge needs at least one folder to merge")
  let spec: SweepSpec | undefined
  for (const d of from) {
    const f = join(d, "spec.json")
    if (!existsSync(f)) throw new Error(`${d}: no spec.json (not a sweep output folder)`)
    const s = JSON.parse(readFileSync(f, "utf8")) as SweepSpec
    if (spec !== undefined && !isDeepStrictEqual(s, spec))
      throw new Error(`${d}: its spec.json differs from ${from[0]}'s`)
    spec = s
  }
  mkdirSync(cellsDir(outDir), { recursive: true })
  writeFileSync(join(outDir, "spec.json"), `${JSON.stringify(spec, null, 2)}\n`)
  const byId = new Map(expandCells(spec!).map((c) => [c.id, c]))
  for (const d of from) {
    if (!existsSync(cellsDir(d))) continue
    for (const name of readdirSync(cellsDir(d))) {
      if (!name.endsWith(".json")) continue
      const cell = byId.get(name.slice(0, -5))
      if (cell === undefined) continue
      const r = kept(d, cell)
      if (r !== undefined) writeCell(outDir, r)
    }
  }
  return spec!
}
