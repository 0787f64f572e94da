/**
 * `pnpm bench:slow-rank` (issue 33 item 3): route around a slow GPU, judged by goodput. On each
 * shared trace (Mooncake conversation, Mooncake synthetic, Azure 2023 conversation), DP 8 glm-5.3
 * on H200 behind one SGLang controller, with rank 3 at 0.7 of nominal compute and HBM throughout
 * (`simulate --slow-rank 3:0.7`), under an SLO (Mooncake: `distserve-summarization-opt-66b`, its
 * long prompts meet no strict one on the slowed group; Azure: `distserve-chatbot-opt-175b`): the goodput of `speed-aware` and of every upstream
 * policy registered for that engine (SGLang's references and the peers' routers: engine `sglang` or
 * `any`, none of which sees a rank's speed), on the same disjoint windows of the trace (the
 * verdict's own replication: `traceWindows`, a bisection per window, `estimateGoodput`'s t interval),
 * each upstream policy's paired difference to `speed-aware` (`compareGoodput`: ratio and its 95%
 * interval), and the balance bound of the group's nominal hardware (the slow rank's fault is not
 * pooled: a ceiling no placement on the slowed group reaches).
 *
 * Done when `speed-aware` beats every upstream policy with the paired interval above zero on every
 * block. Flags: `--quick` (the first 1,200 requests of each trace, Azure's 2,400; 4 windows; 5%
 * bisection; the full run: Mooncake conversation's first 3,600, 6 windows, 2%), `--windows N`, `--limit N`, `--precision X`, `--jobs N` (worker threads, default 2),
 * `--speed S` (default 0.7), `--slo NAME` (every trace under this SLO), `--only TEXT`
 * (traces whose label contains it), `--json FILE`, `--ours BASE+speed` (judge the speed term around
 * another own configuration instead, e.g. `ledger-balanced+speed`: `speed-aware` before 0.8.0).
 * Where a window is unattainable for one policy only, no ratio exists: the paired difference in
 * req/s (a t interval over the windows either attains) judges it, and says so.
 *
 * @since 0.8.0
 */
import { writeFileSync } from "node:fs"
import { ownPolicyConfigs, policyEntries } from "@loadledger/policies"
import { compareGoodput, estimateGoodput, meanArrivalRate, parseSlo } from "@loadledger/sim"
import { policySource } from "../packages/cli/src/commands/list.js"
import {
  type GoodputJob,
  type GoodputJobResult,
  type GoodputSetup,
  runGoodputJob,
  traceRateOf,
  windowsOf
} from "../packages/cli/src/goodput/jobs.js"
import { runJobs, workerEntry } from "../packages/cli/src/internal/pool.js"
import { benchArgs } from "./args.js"

const { flag, quick, num } = benchArgs()
const windows = num("windows", 6, 4)
const precision = num("precision", 0.02, 0.05)
const jobs = num("jobs", 2, 2)
const speed = num("speed", 0.7, 0.7)
const sloOf = (name: string) => {
  const p = parseSlo(name)
  if (p._tag === "SloError") throw new Error(`--slo: ${p.message}`)
  return p.slo
}
// `--ours BASE+speed`: the speed term around another registered own configuration (e.g.
// `ledger-balanced+speed`, the registry's `speed-aware` before 0.8.0), for a same-setup baseline
const OURS = flag("ours") ?? "speed-aware"
const oursBase = OURS.endsWith("+speed") ? ownPolicyConfigs[OURS.slice(0, -"+speed".length)] : undefined
const oursSubject: GoodputJob["subject"] =
  oursBase === undefined
    ? { kind: "policy", name: OURS }
    : { kind: "policy", name: OURS, config: { ...oursBase, name: OURS, wrappers: ["speed"] } }
const TRACES = [
  // Mooncake's long prompts meet no strict SLO on a slowed group at any rate: the relaxed preset there
  {
    label: "Mooncake conversation",
    path: "/work/shared/traces/mooncake/conversation_trace.jsonl",
    quick: 1200,
    full: 3600,
    slo: "distserve-summarization-opt-66b"
  },
  {
    label: "Mooncake synthetic",
    path: "/work/shared/traces/mooncake/synthetic_trace.jsonl",
    quick: 1200,
    full: 3993,
    slo: "distserve-summarization-opt-66b"
  },
  {
    label: "Azure 2023 conversation",
    path: "/work/shared/traces/azure2023/AzureLLMInferenceTrace_conv.csv",
    quick: 2400,
    full: 9600,
    slo: "distserve-chatbot-opt-175b"
  }
]
  .map((t) => ({ ...t, slo: flag("slo") ?? t.slo }))
  .filter((t) => t.label.includes(flag("only") ?? ""))
const limitFlag = flag("limit")

const upstream = policyEntries()
  .filter((e) => policySource(e) !== "loadledger" && (e.engine === "sglang" || e.engine === "any"))
  .map((e) => e.name)

const search = (r: GoodputJobResult, what: string): number => {
  if (r.kind !== "search") throw new Error(`${what}: ${r.kind === "error" ? r.message : "no search"}`)
  return r.requestsPerSecond
}

const pool = {
  entry: workerEntry(
    new URL("../packages/cli/src/goodput/run.ts", import.meta.url).href,
    "goodput-worker.js"
  ),
  threads: jobs <= 1 ? 0 : jobs,
  inThread: runGoodputJob
}

const pct = (r: number) => `${r >= 1 ? "+" : ""}${((r - 1) * 100).toFixed(1)}%`
const f = (x: number) => x.toFixed(3)

interface Row {
  readonly policy: string
  readonly goodput: number
  readonly ci: readonly [number, number]
  readonly ratio?: number
  readonly ratioCi?: readonly [number, number]
  /** Where no ratio exists (a window unattainable for one only): the paired difference, req/s. */
  readonly diff?: number
  readonly diffCi?: readonly [number, number]
  readonly beaten?: boolean
}

/** Student t, two-sided 95%, by degrees of freedom (1..30; beyond, 1.96). */
const T95 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131,
  2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042
]

/**
 * The paired difference `a - b` (req/s) over the windows where either attains the SLO (as
 * `compareGoodput` keeps them) and its 95% t interval: the judge where a window's goodput is 0 for
 * one policy only, so no ratio exists. Undefined with fewer than 2 such windows.
 */
const pairedDifference = (
  a: ReadonlyArray<number>,
  b: ReadonlyArray<number>
): { mean: number; ci: readonly [number, number] } | undefined => {
  const d = a.flatMap((x, k) => (x > 0 || b[k]! > 0 ? [x - b[k]!] : []))
  if (d.length < 2) return undefined
  const mean = d.reduce((x, y) => x + y, 0) / d.length
  const sd = Math.sqrt(d.reduce((x, y) => x + (y - mean) ** 2, 0) / (d.length - 1))
  const half = (T95[d.length - 2] ?? 1.96) * (sd / Math.sqrt(d.length))
  return { mean, ci: [mean - half, mean + half] }
}

const runTrace = async (t: (typeof TRACES)[number]) => {
  const t0 = performance.now()
  const setup: GoodputSetup = {
    trace: t.path,
    limit: limitFlag !== undefined ? Number(limitFlag) : quick ? t.quick : t.full,
    windows,
    model: "glm-5.3",
    gpu: "h200",
    dp: 8,
    frontEnds: 1,
    seed: 0,
    slo: sloOf(t.slo),
    start: 1,
    precision,
    rankFaults: [{ dpRank: 3, speed }]
  }
  const rate = traceRateOf(setup)!
  const ks = Array.from({ length: windows }, (_, k) => k)
  const job = (subject: GoodputJob["subject"], k: number, mode: GoodputJob["mode"]): GoodputJob => ({
    setup,
    engine: "sglang",
    subject,
    window: k,
    mode
  })
  // ours first, from the setup's start; every other subject warm-started from ours on the same window
  const pilot = ks.map((k) => search(runGoodputJob(job(oursSubject, k, { kind: "search" })), OURS))
  const warm = (k: number): GoodputJob["mode"] => {
    const base = meanArrivalRate(windowsOf(setup)[k]!)!
    return pilot[k]! > 0 ? { kind: "search", start: pilot[k]! / base, step: 1.05 } : { kind: "search" }
  }
  const subjects: Array<GoodputJob["subject"]> = [
    ...upstream.map((name) => ({ kind: "policy" as const, name })),
    { kind: "bound" }
  ]
  const rest = subjects.flatMap((s) => ks.map((k) => job(s, k, warm(k))))
  const answers = [...(await runJobs(pool, rest))]
  for (let i = 0; i < rest.length; i++)
    if (answers[i]!.kind === "error") answers[i] = runGoodputJob({ ...rest[i]!, mode: { kind: "search" } })
  const per = (n: number) => ks.map((_, i) => search(answers[n * windows + i]!, String(n)))
  const est = (xs: ReadonlyArray<number>) => {
    const e = estimateGoodput(xs, rate)
    if (e._tag === "GoodputError") throw new Error(e.message)
    return e
  }
  const ours = est(pilot)
  const bound = est(per(upstream.length))
  const rows: Array<Row> = upstream.map((name, n) => {
    const e = est(per(n))
    const c = compareGoodput(ours.windows, e.windows)
    return c._tag === "GoodputComparison" && Number.isFinite(c.ratio)
      ? {
          policy: name,
          goodput: e.requestsPerSecond,
          ci: e.ci,
          ratio: c.ratio,
          ratioCi: c.ci,
          beaten: c.ci[0] > 1
        }
      : (() => {
          const d = pairedDifference(ours.windows, e.windows)
          return d === undefined
            ? { policy: name, goodput: e.requestsPerSecond, ci: e.ci }
            : {
                policy: name,
                goodput: e.requestsPerSecond,
                ci: e.ci,
                diff: d.mean,
                diffCi: d.ci,
                beaten: d.ci[0] > 0
              }
        })()
  })
  rows.sort((a, b) => b.goodput - a.goodput)
  return {
    label: t.label,
    slo: t.slo,
    requests: setup.limit,
    ours,
    bound,
    rows,
    seconds: (performance.now() - t0) / 1000
  }
}

console.log(
  `slow rank: rank 3 at ${speed} of nominal; DP 8 glm-5.3 on H200, one SGLang controller; ` +
    `${windows} windows, bisection within ${precision * 100}%; ${upstream.length} upstream policies${quick ? " (--quick)" : ""}`
)
const out = []
let missed = 0
for (const t of TRACES) {
  const r = await runTrace(t)
  out.push(r)
  console.log(`\n## ${r.label}, SLO ${r.slo} (${r.requests} requests, ${r.seconds.toFixed(0)} s)`)
  console.log(
    `${OURS}: ${f(r.ours.requestsPerSecond)} req/s [${f(r.ours.ci[0])}, ${f(r.ours.ci[1])}] ` +
      `(${((r.ours.requestsPerSecond / r.bound.requestsPerSecond) * 100).toFixed(0)}% of the bound); ` +
      `balance bound (nominal hardware) ${f(r.bound.requestsPerSecond)} [${f(r.bound.ci[0])}, ${f(r.bound.ci[1])}]`
  )
  console.log(`policy | goodput req/s [95%] | ${OURS} vs it, paired [95%] | beaten`)
  for (const x of r.rows) {
    const sign = (v: number) => `${v >= 0 ? "+" : ""}${v.toFixed(3)}`
    const vs =
      x.ratio !== undefined
        ? `${pct(x.ratio)} [${pct(x.ratioCi![0])}, ${pct(x.ratioCi![1])}]`
        : x.diff !== undefined
          ? `no ratio (a window it cannot serve): ${sign(x.diff)} req/s [${sign(x.diffCi![0])}, ${sign(x.diffCi![1])}]`
          : "n/c"
    if (x.beaten !== true) missed++
    console.log(
      `${x.policy} | ${f(x.goodput)} [${f(x.ci[0])}, ${f(x.ci[1])}] | ${vs} | ${x.beaten === true ? "yes" : "NO"}`
    )
  }
  const ratios = r.rows.filter((x) => x.ratioCi !== undefined)
  const beatenRatio = ratios.filter((x) => x.beaten === true).length
  const diffs = r.rows.filter((x) => x.diffCi !== undefined)
  const beatenDiff = diffs.filter((x) => x.beaten === true).length
  const sorted = ratios.map((x) => x.ratio!).sort((a, b) => a - b)
  console.log(
    `beaten, interval above zero: ${beatenRatio} of ${ratios.length} by the paired ratio ` +
      (sorted.length > 0
        ? `(${pct(sorted[0]!)} to ${pct(sorted[sorted.length - 1]!)}, median ${pct(sorted[sorted.length >> 1]!)}), `
        : "") +
      `${beatenDiff} of ${diffs.length} by the paired difference (no ratio: a window one of them cannot serve); ` +
      `${r.rows.length - ratios.length - diffs.length} not comparable; ` +
      `lost with the interval below zero: ${r.rows.filter((x) => (x.ratioCi?.[1] ?? 2) < 1 || (x.diffCi?.[1] ?? 1) < 0).length}`
  )
  const worst = ratios.sort((a, b) => a.ratioCi![0] - b.ratioCi![0])[0]
  if (worst !== undefined)
    console.log(`closest: ${worst.policy}, paired lower bound ${pct(worst.ratioCi![0])}`)
}
console.log(
  `\n${missed === 0 ? "DONE: beaten every upstream policy on every block" : `${missed} (block, policy) pairs not beaten with the interval above zero`}`
)
const json = flag("json")
if (json !== undefined) writeFileSync(json, JSON.stringify(out, null, 2))
