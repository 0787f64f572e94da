/**
 * `pnpm bench:slow-share` (issue 33 item 3): where the speed term puts the work of a slow rank, and
 * what that costs. On each shared trace of `bench:slow-rank` (its setup: DP 8 glm-5.3 on H200, one
 * SGLang controller, rank 3 slowed, the same SLOs), for each speed of the slow rank (0.5, 0.7, 0.9)
 * and each policy: the goodput (mean over the first `--use` of `--windows` windows: a bisection
 * each), then one replay of each window at the rate `ledger-balanced` sustains there (the same
 * arrivals for every policy) with the share of requests routed to the slow rank, the idle rank-steps
 * (`idleRankStepShare`), the sync wait (`syncWaitShare`) and the SLO attainment. The share that
 * equalises forward time where it is proportional to the tokens held is `s / (7 + s)` (0.5: 6.7%,
 * 0.7: 9.1%, 0.9: 11.4%; nominal 12.5%).
 *
 * Policies: `ledger-balanced`, `step-time-aware`, `speed-aware` (since 0.8.0 `step-time-aware`
 * inside the speed term, priced in seconds) and `ledger-balanced+speed` (the speed term around
 * `ledger-balanced`, in token units: the registry's `speed-aware` before 0.8.0). Flags: `--windows N` (4), `--use N` (2), `--limit N`
 * (Mooncake 1,200, Azure 2,400 requests), `--speeds 0.5,0.7,0.9`, `--only TEXT` (traces whose label
 * contains it), `--precision X` (0.05). Runs in this thread; about 5 minutes on a shared 2-core
 * machine.
 *
 * @since 0.8.0
 */
import { findPolicy, ownPolicyConfigs } from "@loadledger/policies"
import { meanArrivalRate, parseSlo, type SimConfig, simulate } from "@loadledger/sim"
import { configEntry } from "../packages/cli/src/commands/policyConfigFile.js"
import { type GoodputSetup, runGoodputJob, windowsOf } from "../packages/cli/src/goodput/jobs.js"
import { simConfigFor } from "../packages/cli/src/internal/simSetup.js"
import { benchArgs } from "./args.js"

const { flag, num } = benchArgs()
const windows = num("windows", 4, 4)
const use = Math.min(windows, num("use", 2, 2))
const precision = num("precision", 0.05, 0.05)
const speeds = (flag("speeds") ?? "0.5,0.7,0.9").split(",").map(Number)
const SLOW = 3
const TRACES = [
  {
    label: "Mooncake conversation",
    path: "/work/shared/traces/mooncake/conversation_trace.jsonl",
    limit: 1200,
    slo: "distserve-summarization-opt-66b"
  },
  {
    label: "Mooncake synthetic",
    path: "/work/shared/traces/mooncake/synthetic_trace.jsonl",
    limit: 1200,
    slo: "distserve-summarization-opt-66b"
  },
  {
    label: "Azure 2023 conversation",
    path: "/work/shared/traces/azure2023/AzureLLMInferenceTrace_conv.csv",
    limit: 2400,
    slo: "distserve-chatbot-opt-175b"
  }
].filter((t) => t.label.includes(flag("only") ?? ""))

const withSpeedOf = (name: string) => ({
  ...ownPolicyConfigs[name]!,
  name: `${name}+speed`,
  wrappers: ["speed"]
})
const SUBJECTS: ReadonlyArray<{ name: string; config?: unknown }> = [
  { name: "ledger-balanced" },
  { name: "step-time-aware" },
  { name: "speed-aware" },
  { name: "ledger-balanced+speed", config: withSpeedOf("ledger-balanced") }
]

const entryOf = (s: (typeof SUBJECTS)[number]) => {
  const e = s.config === undefined ? findPolicy(s.name) : configEntry(s.config, s.name)
  if (e === undefined) throw new Error(`no policy ${s.name}`)
  return e
}
const pct = (x: number) => `${(x * 100).toFixed(1)}%`

for (const t of TRACES) {
  const slo = parseSlo(t.slo)
  if (slo._tag === "SloError") throw new Error(slo.message)
  for (const speed of speeds) {
    const setup: GoodputSetup = {
      trace: t.path,
      limit: Number(flag("limit") ?? t.limit),
      windows,
      model: "glm-5.3",
      gpu: "h200",
      dp: 8,
      frontEnds: 1,
      seed: 0,
      slo: slo.slo,
      start: 1,
      precision,
      rankFaults: [{ dpRank: SLOW, speed }]
    }
    const config: SimConfig = {
      ...simConfigFor({ ...setup, engine: "sglang" }),
      slo: slo.slo,
      sloStopEarly: false,
      rankFaults: setup.rankFaults!
    }
    const ks = Array.from({ length: use }, (_, k) => k)
    const goodput = (s: (typeof SUBJECTS)[number]) =>
      ks.map((k) => {
        const r = runGoodputJob({
          setup,
          engine: "sglang",
          subject: { kind: "policy", name: s.name, ...(s.config === undefined ? {} : { config: s.config }) },
          window: k,
          mode: { kind: "search" }
        })
        if (r.kind !== "search") throw new Error(`${s.name}: ${r.kind === "error" ? r.message : r.kind}`)
        return r.requestsPerSecond
      })
    const base = goodput(SUBJECTS[0]!)
    console.log(
      `\n## ${t.label} (${setup.limit} requests, windows 1-${use} of ${windows}), rank ${SLOW} at ${speed}; ` +
        `replayed at ledger-balanced's goodput per window (${base.map((x) => x.toFixed(3)).join(", ")} req/s)`
    )
    console.log(
      "policy | goodput req/s (mean) | vs ledger-balanced | share to slow rank | idle rank-steps | sync wait | attainment"
    )
    for (const s of SUBJECTS) {
      const g = s === SUBJECTS[0] ? base : goodput(s)
      const e = entryOf(s)
      let share = 0
      let idle = 0
      let sync = 0
      let attained = 0
      for (const k of ks) {
        const w = windowsOf(setup)[k]!
        const m = base[k]! / meanArrivalRate(w)!
        const r = simulate(
          config,
          w.map((x) => ({ ...x, arrivalSeconds: x.arrivalSeconds / m })),
          e
        )
        const total = r.requestsPerRank.reduce((a, b) => a + b, 0)
        share += r.requestsPerRank[SLOW]! / total / use
        idle += r.idleRankStepShare / use
        sync += r.syncWaitShare / use
        attained += (r.slo?.attainment ?? 0) / use
      }
      const mean = g.reduce((a, b) => a + b, 0) / use
      const baseMean = base.reduce((a, b) => a + b, 0) / use
      console.log(
        `${s.name} | ${mean.toFixed(3)} | ${mean >= baseMean ? "+" : ""}${pct(mean / baseMean - 1)} | ${pct(share)} | ${pct(idle)} | ${pct(sync)} | ${pct(attained)}`
      )
    }
  }
}
