/**
 * The policies behind four vLLM front ends on the rows vLLM publishes, against the simulator's
 * extended rows: runs the sweep `examples/sweeps/honest-rows.yaml` (compare.yaml's vLLM blocks, every
 * registered policy, each front end handed `extended`, `vllm` or `vllm-counts` rows; resumable, 2
 * workers; results in `sweep-results/honest-rows/`), then prints, per block, TTFT p99, ITL p99 and
 * the sync-wait share of every policy under each kind of row, the best upstream policy and
 * `step-time-aware` per block and row kind, and issue 16's verdict per row kind.
 *
 *   pnpm exec tsx --conditions=@loadledger/source bench/honestRows.ts [--no-run] [--out DIR] [--policies a,b]
 *
 * `--no-run` only reads the results already there; `--policies` limits the per-block table (the
 * summary lines use every policy). Not part of `pnpm bench`: it measures routing quality, not speed
 * (about an hour on a 2-core machine).
 *
 * @since 0.4.0
 */
import { execFileSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

interface Row {
  readonly trace: string
  readonly rate: number
  readonly frontEnd: string
  readonly policy: string
  readonly finished: number
  readonly total: number
  readonly keptUp?: boolean | undefined
  readonly ttftP99Seconds?: number | undefined
  readonly itlP99Ms?: number | undefined
  readonly syncWaitShare: number
}
interface Verdict {
  readonly block: string
  readonly win: boolean
  readonly ours: {
    readonly policy: string
    readonly ttftGap: number
    readonly itlGap: number
    readonly syncGap: number
  }
}
interface Summary {
  readonly rows: ReadonlyArray<Row>
  readonly verdict: ReadonlyArray<Verdict>
  readonly missing: ReadonlyArray<string>
}

const root = fileURLToPath(new URL("../", import.meta.url))
const spec = join(root, "examples/sweeps/honest-rows.yaml")
const args = process.argv.slice(2)
const opt = (name: string) => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1] : undefined
}
const out = opt("--out") ?? join(root, "sweep-results/honest-rows")
const only = opt("--policies")?.split(",")

if (!args.includes("--no-run"))
  execFileSync("pnpm", ["loadledger", "sweep", "run", spec, "--out", out, "--workers", "2"], {
    cwd: root,
    // progress on stderr; the sweep's own tables are in <out>/summary.md
    stdio: ["ignore", "ignore", "inherit"]
  })
const file = join(out, "summary.json")
if (!existsSync(file)) {
  process.stderr.write(`no ${file}: run without --no-run first\n`)
  process.exit(2)
}
const summary = JSON.parse(readFileSync(file, "utf8")) as Summary
const reference = new Set(
  (await import("@loadledger/policies")).policyEntries().flatMap((e) => (e.reference ? [e.name] : []))
)

const kinds = [
  ["extended", ""],
  ["vllm", ", vllm rows"],
  ["vllm-counts", ", vllm-counts rows"]
] as const
const blockOf = (r: Row) => `${r.trace} at ${r.rate}x`
const kindOf = (r: Row) => kinds.find(([, suffix]) => r.frontEnd === `vllm x4${suffix}`)?.[0]
const ok = (r: Row | undefined): r is Row & { ttftP99Seconds: number; itlP99Ms: number } =>
  r !== undefined &&
  r.finished === r.total &&
  r.keptUp !== false &&
  r.ttftP99Seconds !== undefined &&
  r.itlP99Ms !== undefined
const f3 = (v: number) => Number(v.toPrecision(3)).toString()
const pct = (v: number) => `${(v * 100).toFixed(1)}%`
const change = (a: number, b: number) => `${b >= a ? "+" : ""}${((b / a - 1) * 100).toFixed(0)}%`

const blocks = new Map<string, Map<string, Map<string, Row>>>()
for (const r of summary.rows) {
  const kind = kindOf(r)
  if (kind === undefined) continue
  const b = blocks.get(blockOf(r)) ?? new Map<string, Map<string, Row>>()
  const p = b.get(r.policy) ?? new Map<string, Row>()
  p.set(kind, r)
  b.set(r.policy, p)
  blocks.set(blockOf(r), b)
}

const cell = (
  rs: Map<string, Row>,
  v: (r: Row & { ttftP99Seconds: number; itlP99Ms: number }) => number,
  show: (x: number) => string
) => {
  const base = rs.get("extended")
  return kinds
    .map(([k]) => {
      const r = rs.get(k)
      if (!ok(r)) return r === undefined ? "-" : "behind"
      return k === "extended" || !ok(base) ? show(v(r)) : `${show(v(r))} (${change(v(base), v(r))})`
    })
    .join(" / ")
}

const lines: Array<string> = []
lines.push("# Behind four vLLM front ends: extended / vllm / vllm-counts rows", "")
if (summary.missing.length > 0) lines.push(`(${summary.missing.length} cells not run yet)`, "")
for (const [block, policies] of blocks) {
  lines.push(`## ${block}`, "")
  lines.push("| policy | TTFT p99 s | ITL p99 ms | sync wait |", "|---|---|---|---|")
  for (const [policy, rs] of policies) {
    if (only !== undefined && !only.includes(policy)) continue
    lines.push(
      `| ${policy}${reference.has(policy) ? "" : " (ours)"} | ${cell(rs, (r) => r.ttftP99Seconds, f3)} | ${cell(rs, (r) => r.itlP99Ms, f3)} | ${cell(rs, (r) => r.syncWaitShare, pct)} |`
    )
  }
  lines.push("")
}

// per block and kind: the best upstream value of each metric, and step-time-aware's
lines.push("## Best upstream policy and step-time-aware, per block and kind of row", "")
lines.push(
  "| block | rows | best upstream TTFT p99 s | best upstream ITL p99 ms | best upstream sync | step-time-aware TTFT / ITL / sync |",
  "|---|---|---|---|---|---|"
)
for (const [block, policies] of blocks)
  for (const [k] of kinds) {
    const rs = [...policies.values()].map((m) => m.get(k)).filter(ok)
    const up = rs.filter((r) => reference.has(r.policy))
    if (up.length === 0) continue
    const best = (v: (r: (typeof up)[number]) => number) => up.reduce((a, b) => (v(b) < v(a) ? b : a))
    const t = best((r) => r.ttftP99Seconds)
    const i = best((r) => r.itlP99Ms)
    const s = best((r) => r.syncWaitShare)
    const sta = rs.find((r) => r.policy === "step-time-aware")
    lines.push(
      `| ${block} | ${k} | ${f3(t.ttftP99Seconds)} (${t.policy}) | ${f3(i.itlP99Ms)} (${i.policy}) | ${pct(s.syncWaitShare)} (${s.policy}) | ${sta === undefined ? "incomplete or behind" : `${f3(sta.ttftP99Seconds)} (${change(t.ttftP99Seconds, sta.ttftP99Seconds)}) / ${f3(sta.itlP99Ms)} (${change(i.itlP99Ms, sta.itlP99Ms)}) / ${pct(sta.syncWaitShare)}`} |`
    )
  }
lines.push("")

lines.push("## Issue 16's verdict per kind of row (the sweep's rule)", "")
for (const [k, suffix] of kinds) {
  const vs = summary.verdict.filter((v) => v.block.endsWith(`vllm x4${suffix}`))
  const won = vs.filter((v) => v.win)
  lines.push(
    `- ${k}: ${won.length} of ${vs.length} blocks won${won.length > 0 ? ` (${won.map((v) => `${v.block.split(",")[0]} by ${v.ours.policy}`).join("; ")})` : ""}`
  )
}
lines.push("")
process.stdout.write(`${lines.join("\n")}\n`)
