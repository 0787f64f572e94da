/**
 * Try a change to one policy against the compare grid in seconds: runs that policy's 12 cells of
 * `examples/sweeps/compare.yaml` in this process, from source (edit, then rerun; no build), and
 * prints issue 16's verdict for it alone against the upstream policies' results already in
 * `sweep-results/compare/` (run `pnpm compare:sweep` once first). Writes nothing.
 *
 *   pnpm exec tsx --conditions=@loadledger/source bench/tryPolicy.ts [policy] [--only TEXT]
 *
 * `policy` defaults to `step-time-aware`; `--only` keeps the blocks whose name contains TEXT (e.g.
 * `vllm`, `Azure`). About 10 s for the whole grid on a 2-core machine; `pnpm compare:sweep` re-running the
 * same 12 cells takes minutes (workers, the report). Not part of `pnpm bench`.
 *
 * @since 0.4.0
 */
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { findPolicy, policyEntries } from "@loadledger/policies"
import { expandCells } from "../packages/cli/src/sweep/Cells.js"
import { runCell } from "../packages/cli/src/sweep/runCell.js"
import { parseSpec } from "../packages/cli/src/sweep/Spec.js"
import { type SummaryRow, summaryRows } from "../packages/cli/src/sweep/Summary.js"
import { verdictRows } from "../packages/cli/src/sweep/Verdict.js"

const root = fileURLToPath(new URL("../", import.meta.url))
const fail = (message: string): never => {
  process.stderr.write(`${message}\n`)
  process.exit(2)
}
const parsed = (() => {
  try {
    return parseArgs({
      options: { only: { type: "string" }, help: { type: "boolean" } },
      allowPositionals: true
    })
  } catch (e) {
    return fail(
      `${e instanceof Error ? e.message : String(e)}\nusage: bench/tryPolicy.ts [policy] [--only TEXT]`
    )
  }
})()
if (parsed.values.help === true) {
  process.stdout.write(
    "usage: bench/tryPolicy.ts [policy] [--only TEXT] (see the docstring at the top of the file)\n"
  )
  process.exit(0)
}
if (parsed.positionals.length > 1) fail(`one policy at a time, got ${parsed.positionals.join(", ")}`)
const policy = parsed.positionals[0] ?? "step-time-aware"
const only = parsed.values.only
if (findPolicy(policy) === undefined)
  fail(
    `unknown policy "${policy}"; registered: ${policyEntries()
      .map((e) => e.name)
      .join(", ")}`
  )
const file = join(root, "sweep-results/compare/summary.json")
if (!existsSync(file)) fail(`no ${file}: run \`pnpm compare:sweep\` once first`)
const reference = new Set(policyEntries().flatMap((e) => (e.reference ? [e.name] : [])))
const upstream = (JSON.parse(readFileSync(file, "utf8")) as { rows: ReadonlyArray<SummaryRow> }).rows.filter(
  (r) => reference.has(r.policy) && r.policy !== policy
)
const specFile = join(root, "examples/sweeps/compare.yaml")
const cells = expandCells(parseSpec(readFileSync(specFile, "utf8"), specFile)).filter(
  (c) =>
    c.policy === policy && (only === undefined || `${c.traceName} at ${c.rate}x ${c.engine}`.includes(only))
)
if (cells.length === 0)
  fail(
    `--only ${only}: no compare block of ${policy} matches (blocks are named like "AzureLLMInferenceTrace_conv at 2.15x vllm")`
  )
const started = performance.now()
const ours = summaryRows(cells.map(runCell))
const signed = (g: number) => `${g >= 0 ? "+" : ""}${(g * 100).toFixed(1)}%`
let won = 0
for (const v of verdictRows([...upstream, ...ours], (p) => p === policy)) {
  if (v.win) won++
  const o = v.ours
  process.stdout.write(
    `${v.win ? "win " : "miss"}  ${v.block.padEnd(54)} TTFT p99 ${signed(o.ttftSeconds / v.bestTtft.seconds - 1).padStart(7)}  ITL p99 ${signed(o.itlMs / v.bestItl.ms - 1).padStart(7)}  sync ${signed(o.syncGap).padStart(7)}  (worst gap to the bar ${signed(Math.max(o.ttftGap, o.itlGap, o.syncGap))})\n`
  )
}
const behind = ours.filter((r) => r.finished !== r.total || r.keptUp === false).map((r) => r.id)
process.stdout.write(
  `${policy}: ${won} of ${ours.length - behind.length} blocks won${behind.length > 0 ? `; not judged (unfinished or behind): ${behind.join(", ")}` : ""} (${((performance.now() - started) / 1000).toFixed(1)} s)\n`
)
