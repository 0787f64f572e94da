/**
 * `pnpm compare` (issue 30 item 3): the proof that our policy wins on goodput where routing can
 * still win, rerun by one command. Blocks = the shared traces (Mooncake conversation, Mooncake
 * synthetic, Azure 2023 conversation) x {one SGLang controller, four vLLM front ends} x {a relaxed
 * and a strict SLO preset}, each judged within one engine model (`bench/compareBlocks.ts`). Per
 * block, on the half of the trace the tuning did not see: the best upstream policy's goodput with
 * its 95% interval, ours (the shipped default, and the default tuned on the first half), the paired
 * difference to the best upstream with its interval, the clairvoyant reference (a placement that
 * knows every request's output length, which no online router does) with its paired difference and
 * gap closed, the balance bound, and each as a share of it. Then the headroom table (is half the
 * gap to the bound within reach of any placement?) and every own policy across the blocks (how the
 * default was chosen).
 *
 * Flags: `--quick` (the first 1,200 requests of each trace, Azure's 3,600, 3 windows per half, 5% bisection,
 * budget 6), `--limit N`, `--windows N` (per half), `--budget N`, `--precision X`, `--jobs N`
 * (worker threads, default 2), `--from NAME` (the default's configuration, default
 * `loadledger-default`), `--only TEXT` (blocks whose label contains it), `--json FILE`.
 *
 * @since 0.6.0
 */
import { writeFileSync } from "node:fs"
import { defaultPolicyConfig, ownPolicyConfigs } from "@loadledger/policies"
import { parseSlo, SLO_PRESETS } from "@loadledger/sim"
import { benchArgs } from "./args.js"
import { type BlockResult, runBlock, type Scored, selectBlock } from "./compareBlocks.js"

const { flag, has, quick, num } = benchArgs()
const limitFlag = flag("limit")
/** Requests read per trace: `--limit`, or with `--quick` 1,200 (Azure: 3,600; its short prompts meet both SLOs at every rate on 200-request windows). */
const limitOf = (path: string): number | undefined =>
  limitFlag !== undefined ? Number(limitFlag) : quick ? (path.includes("azure") ? 3600 : 1200) : undefined
const windows = num("windows", 5, 3)
const budget = num("budget", 16, 6)
const precision = num("precision", 0.02, 0.05)
const jobs = num("jobs", 2, 2)
const fromName =
  flag("from") ?? ("loadledger-default" in ownPolicyConfigs ? "loadledger-default" : "step-time-aware")
const from = ownPolicyConfigs[fromName]
if (from === undefined) throw new Error(`--from: no own configuration "${fromName}"`)

const TRACES = [
  { label: "Mooncake conversation", path: "examples/traces/mooncake/conversation_trace.jsonl" },
  { label: "Mooncake synthetic", path: "examples/traces/mooncake/synthetic_trace.jsonl" },
  { label: "Azure 2023 conversation", path: "fixtures/traces/azure2023/AzureLLMInferenceTrace_conv.csv" }
]
const FRONTS = [
  { label: "SGLang, 1 controller", engine: "sglang" as const, frontEnds: 1 },
  { label: "vLLM, 4 front ends", engine: "vllm" as const, frontEnds: 4 }
]
const SLOS = [
  { label: "relaxed", name: "distserve-summarization-opt-66b" },
  { label: "strict", name: "distserve-chatbot-opt-175b" }
].map((s) => {
  const p = parseSlo(s.name)
  if (p._tag === "SloError" || SLO_PRESETS[s.name] === undefined) throw new Error(`SLO preset ${s.name}`)
  return { ...s, slo: p.slo }
})

const f = (x: number, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : "-")
const pct = (x: number | undefined) =>
  x !== undefined && Number.isFinite(x) ? `${(x * 100).toFixed(0)}%` : "-"
const signed = (r: number) => `${r >= 1 ? "+" : ""}${((r - 1) * 100).toFixed(1)}%`
const g = (s: Scored) =>
  `${f(s.estimate.requestsPerSecond)} [${f(s.estimate.ci[0])}, ${f(s.estimate.ci[1])}] (${pct(s.share)})`
const vs = (s: Scored) => {
  const c = s.vsBest
  if (c === undefined) return "-"
  if (c.verdict === "not comparable") return "n/c"
  const mark = c.verdict === "better" ? " **better**" : c.verdict === "worse" ? " worse" : ""
  return `${signed(c.ratio)} [${signed(c.ci[0])}, ${signed(c.ci[1])}]${mark}`
}

const only = flag("only")
const blocks = TRACES.flatMap((trace) =>
  FRONTS.flatMap((front) =>
    SLOS.map((slo) => ({
      trace,
      front,
      slo,
      limit: limitOf(trace.path),
      windows,
      precision,
      budget,
      jobs,
      from
    }))
  )
).filter((b) => only === undefined || `${b.trace.label} ${b.front.label} ${b.slo.label}`.includes(only))

const t0 = performance.now()
if (has("select")) {
  // the selection pass: own policies and the bound only, per block, then the mean share of the bound
  const shares = new Map<string, Array<number>>()
  for (const [i, b] of blocks.entries()) {
    process.stderr.write(
      `select ${i + 1}/${blocks.length}: ${b.trace.label}, ${b.front.label}, ${b.slo.label} ...`
    )
    try {
      const xs = await selectBlock(b)
      for (const x of xs) shares.set(x.name, [...(shares.get(x.name) ?? []), x.share])
      process.stderr.write(` ${xs.map((x) => `${x.name} ${pct(x.share)}`).join(", ")}\n`)
    } catch (e) {
      process.stderr.write(` no verdict: ${e instanceof Error ? e.message : String(e)}\n`)
    }
  }
  const ranked = [...shares].map(([name, xs]) => ({
    name,
    mean: xs.reduce((a, x) => a + x, 0) / xs.length,
    min: Math.min(...xs),
    blocks: xs.length
  }))
  ranked.sort((a, b) => b.mean - a.mean)
  process.stdout.write(
    `| own policy | mean share of bound | min share | blocks |\n|---|---|---|---|\n${ranked.map((r) => `| ${r.name} | ${pct(r.mean)} | ${pct(r.min)} | ${r.blocks} |`).join("\n")}\n(${((performance.now() - t0) / 1000).toFixed(0)} s)\n`
  )
  process.exit(0)
}
const results: Array<BlockResult> = []
const failed: Array<{ label: string; message: string }> = []
for (const [i, b] of blocks.entries()) {
  process.stderr.write(
    `block ${i + 1}/${blocks.length}: ${b.trace.label}, ${b.front.label}, ${b.slo.label} ...`
  )
  try {
    const r = await runBlock(b)
    results.push(r)
    process.stderr.write(` ${r.seconds.toFixed(0)} s\n`)
  } catch (e) {
    // e.g. an SLO met at every rate probed on windows this short: no goodput to rank by
    const message = e instanceof Error ? e.message : String(e)
    failed.push({ label: `${b.trace.label} | ${b.front.label} | ${b.slo.label}`, message })
    process.stderr.write(` no verdict: ${message}\n`)
  }
}

const head = [
  "| trace | front end | SLO | best upstream | ours (default) | default vs best | gap closed | ours (tuned on 1st half) | tuned vs best | clairvoyant (reference) | clairvoyant vs best | clairvoyant gap closed | balance bound |",
  "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
]
const rows = results.map((r) =>
  [
    r.spec.trace.label,
    r.spec.front.label,
    r.spec.slo.label,
    `${r.bestUpstream.name}: ${g(r.bestUpstream)}`,
    g(r.default),
    vs(r.default),
    pct(r.default.gapClosed),
    g(r.tuned),
    vs(r.tuned),
    g(r.clairvoyant),
    vs(r.clairvoyant),
    pct(r.clairvoyant.gapClosed),
    `${f(r.bound.requestsPerSecond)} [${f(r.bound.ci[0])}, ${f(r.bound.ci[1])}]`
  ].join(" | ")
)
// the headroom: the share of the bound the target asks of ours (the best upstream's share plus half
// its gap) next to what ours and the clairvoyant reference reach
const headroom = results.map((r) =>
  [
    `${r.spec.trace.label}, ${r.spec.front.label}, ${r.spec.slo.label}`,
    pct(r.bestUpstream.share),
    r.bestUpstream.share < 0.95 ? pct((r.bestUpstream.share + 1) / 2) : "(>= 95%: not behind)",
    `${pct(r.default.share)} (${pct(r.default.gapClosed)})`,
    `${pct(r.clairvoyant.share)} (${pct(r.clairvoyant.gapClosed)})`,
    vs(r.clairvoyant),
    r.bestUpstream.share >= 0.95 ? "-" : (r.clairvoyant.gapClosed ?? 0) >= 0.5 ? "yes" : "no"
  ].join(" | ")
)
// every own policy across the blocks: the leaderboard the default is chosen by
const ownNames = results[0]?.own.map((o) => o.name) ?? []
const ownRows = ownNames
  .map((name) => {
    const xs = results.map((r) => r.own.find((o) => o.name === name)!)
    const meanShare = xs.reduce((a, x) => a + x.share, 0) / xs.length
    const wins = xs.filter((x) => x.vsBest?.verdict === "better").length
    const losses = xs.filter((x) => x.vsBest?.verdict === "worse").length
    return { name, meanShare, minShare: Math.min(...xs.map((x) => x.share)), wins, losses }
  })
  .sort((a, b) => b.meanShare - a.meanShare)
const method = `held-out half of each trace (${windows} windows of consecutive requests${quick || limitFlag !== undefined ? ` from its first ${limitFlag ?? "1,200 (Azure: 3,600)"} requests` : ""}), GLM-5.3 on H200, DP 8; goodput = the largest arrival rate at which the SLO is met, bisection to ${precision * 100}%; mean over windows, Student t 95% interval; "vs best": paired t interval of the per-window log ratios; tuned: ${budget} evaluations of Nelder-Mead on the first half, from ${fromName}`
const out = [
  `goodput (req/s [95% CI] (share of the balance bound)); ${method}`,
  `SLOs: relaxed = ${SLOS[0]!.name}, strict = ${SLOS[1]!.name}`,
  "",
  ...head,
  ...rows.map((r) => `| ${r} |`),
  ...failed.map((x) => `| ${x.label} | no verdict: ${x.message} ||||||||||`),
  "",
  "headroom (shares of the balance bound; in brackets the share of the best upstream's gap to the bound closed):",
  "| block | best upstream | the target asks of ours | ours (default) | clairvoyant (reference) | clairvoyant vs best | clairvoyant closes half? |",
  "|---|---|---|---|---|---|---|",
  ...headroom.map((r) => `| ${r} |`),
  "",
  "own policies across the blocks (held-out goodput as a share of the bound; paired verdicts vs each block's best upstream):",
  "| own policy | mean share of bound | min share | better than best upstream | worse |",
  "|---|---|---|---|---|",
  ...ownRows.map(
    (o) =>
      `| ${o.name} | ${pct(o.meanShare)} | ${pct(o.minShare)} | ${o.wins} of ${results.length} | ${o.losses} |`
  ),
  "",
  `${results.length} blocks in ${((performance.now() - t0) / 1000).toFixed(0)} s (${jobs} worker threads)`
]
process.stdout.write(`${out.join("\n")}\n`)
const json = flag("json")
if (json !== undefined)
  writeFileSync(
    json,
    JSON.stringify(
      results.map((r) => ({ ...r, spec: { ...r.spec, slo: r.spec.slo.name } })),
      null,
      1
    )
  )
