/**
 * How much of the compare sweep's verdict is the rate it happens to run at: runs the sweep
 * `examples/sweeps/compare-nearby.yaml` (compare.yaml's grid at 0.98, 0.99, 1.01 and 1.02 times each
 * of its rates, every registered policy; resumable, 2 workers; results in
 * `sweep-results/compare-nearby/`), reads the compare sweep's own results for 1.0x
 * (`sweep-results/compare/`, from `pnpm compare:sweep`), then prints, per compare block and rate,
 * `step-time-aware` against the best upstream policy on TTFT p99, ITL p99 and sync wait (issue 16's
 * rule, `packages/cli/src/sweep/Verdict.ts`), how many of the five rates it wins, and the same rule
 * turned on the field (each upstream policy against the best of the others) over all of them.
 *
 *   pnpm exec tsx --conditions=@loadledger/source bench/nearbyRates.ts [--no-run]
 *
 * `--no-run` only reads the results already there. Not part of `pnpm bench`: it measures routing
 * quality, not speed (about 15 minutes on a 2-core machine: 14 min 48 s here beside other work).
 *
 * @since 0.4.0
 */
import { execFileSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { policyEntries } from "@loadledger/policies"
import type { SummaryRow } from "../packages/cli/src/sweep/Summary.js"
import { fieldWins, verdictRows } from "../packages/cli/src/sweep/Verdict.js"

const root = fileURLToPath(new URL("../", import.meta.url))
const out = join(root, "sweep-results/compare-nearby")
const ours = "step-time-aware"

if (!process.argv.includes("--no-run"))
  execFileSync(
    "pnpm",
    [
      "loadledger",
      "sweep",
      "run",
      join(root, "examples/sweeps/compare-nearby.yaml"),
      "--out",
      out,
      "--workers",
      "2"
    ],
    // progress on stderr; the sweep's own tables are in <out>/summary.md
    { cwd: root, stdio: ["ignore", "ignore", "inherit"] }
  )
const read = (dir: string): ReadonlyArray<SummaryRow> => {
  const file = join(root, dir, "summary.json")
  if (!existsSync(file)) {
    process.stderr.write(
      `no ${file}: run ${dir.endsWith("compare") ? "`pnpm compare:sweep`" : "without --no-run"} first\n`
    )
    process.exit(2)
  }
  return (JSON.parse(readFileSync(file, "utf8")) as { rows: ReadonlyArray<SummaryRow> }).rows
}
const base = read("sweep-results/compare")
const rows = [...base, ...read("sweep-results/compare-nearby")]
const reference = new Set(policyEntries().flatMap((e) => (e.reference ? [e.name] : [])))
// the bar: upstream policies only; judged: step-time-aware only (one configuration of one policy)
const verdicts = verdictRows(
  rows.filter((r) => reference.has(r.policy) || r.policy === ours),
  (p) => p === ours
)

// each compare block: its trace, its rate (the compare sweep's) and front end; a nearby rate
// belongs to the compare rate of its trace it is closest to
const baseRates = new Map<string, Array<number>>()
for (const r of base) baseRates.set(r.trace, [...new Set([...(baseRates.get(r.trace) ?? []), r.rate])])
const muls = [0.98, 0.99, 1, 1.01, 1.02]
const signed = (g: number) => `${g >= 0 ? "+" : ""}${(g * 100).toFixed(1)}`
const table = new Map<string, Map<number, string>>()
let judged = 0
let wonAll = 0
for (const v of verdicts) {
  const [head, dp, frontEnd] = v.block.split(", ")
  const at = head!.lastIndexOf(" at ")
  const trace = head!.slice(0, at)
  const rate = Number(head!.slice(at + 4, -1))
  const home = (baseRates.get(trace) ?? []).reduce((a, b) =>
    Math.abs(b - rate) < Math.abs(a - rate) ? b : a
  )
  const key = `${trace} at ${home}x, ${dp}, ${frontEnd}`
  const mul = muls.reduce((a, b) => (Math.abs(b * home - rate) < Math.abs(a * home - rate) ? b : a))
  const o = v.ours
  const cell = `${signed(o.ttftSeconds / v.bestTtft.seconds - 1)} / ${signed(o.itlMs / v.bestItl.ms - 1)} / ${signed(o.syncGap)}${v.win ? " **win**" : ""}`
  table.set(key, (table.get(key) ?? new Map()).set(mul, cell))
  judged++
  if (v.win) wonAll++
}

const lines: Array<string> = []
lines.push(
  `# ${ours} against the best upstream policy at the compare rates and next to them`,
  "",
  "Per cell: TTFT p99 / ITL p99 / sync-wait share, % against the best upstream policy's (negative =",
  "lower); **win** where issue 16's rule is met (>= 2% lower on a p99 whose upstream values spread by",
  "more than 5%, and a lower sync-wait share).",
  "",
  `| block (compare rate) | ${muls.map((m) => `${m}x`).join(" | ")} | won |`,
  `|---|${muls.map(() => "---|").join("")}---|`
)
for (const [key, cells] of table) {
  const won = [...cells.values()].filter((c) => c.endsWith("**win**")).length
  lines.push(`| ${key} | ${muls.map((m) => cells.get(m) ?? "-").join(" | ")} | ${won} of ${cells.size} |`)
}
lines.push("", `${ours} wins ${wonAll} of ${judged} blocks.`)
const field = fieldWins(
  rows.filter((r) => reference.has(r.policy)),
  () => false
)
const judgedIn = field.map((f) => f.blocks)
lines.push(
  `The same rule turned on the field (each upstream policy against the best of the other upstream policies), over the same blocks: ${
    field[0] === undefined || field[0].won === 0
      ? `none of the ${field.length} wins a block (each judged in ${Math.min(...judgedIn)}-${Math.max(...judgedIn)} of them).`
      : field
          .filter((f) => f.won > 0)
          .map((f) => `${f.policy} wins ${f.won} of ${f.blocks}`)
          .join(", ")
  }`,
  ""
)
process.stdout.write(`${lines.join("\n")}\n`)
