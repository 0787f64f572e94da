/**
 * Issue 32's exposition figures (`pnpm bench:expfmt`): lines per second and memory for a
 * 1-million-series gateway page, decoded as the ledger reads it (`decodeLedgerReport`, kind
 * `sglang-metrics`) and parsed alone with only the modelled series kept, against the full parse
 * that materialises every sample (what the parser did before it kept only the modelled ones).
 *
 * The page: a model gateway in front of `BENCH_EXPFMT_WORKERS` SGLang workers (default 16) of 8 DP
 * ranks each: per (worker, rank) the scheduler gauges (`sglang:num_running_reqs`, ...) and, filling
 * the page to `BENCH_EXPFMT_LINES` (default 1,000,000) lines, request-latency histograms with their
 * buckets, counters with `_created`, all with `worker` and `dp_rank` labels. Rates are per CPU second of the
 * process (user + system; wall time beside them), the best of `BENCH_EXPFMT_REPS` runs (default 3; the first pays JIT warm-up). Memory: the heap the result keeps
 * (after a GC, the page itself excluded) and the process's peak RSS. Target (issue 32): >= 1M
 * lines/s, memory bounded by the modelled series.
 *
 * @since 0.6.0
 */
import { decodeLedgerReport } from "@loadledger/schema"
import { parseFor } from "../packages/schema/src/internal/metricNames.js"
import { parseExposition } from "../packages/schema/src/internal/prometheus.js"

const workers = Number(process.env.BENCH_EXPFMT_WORKERS ?? 16)
const ranks = 8
const target = Number(process.env.BENCH_EXPFMT_LINES ?? 1_000_000)
const reps = Number(process.env.BENCH_EXPFMT_REPS ?? 3)
const gauges = [
  "sglang:num_running_reqs",
  "sglang:num_queue_reqs",
  "sglang:num_used_tokens",
  "sglang:token_usage",
  "sglang:gen_throughput",
  "sglang:num_decode_prealloc_queue_reqs",
  "sglang:num_decode_transfer_queue_reqs"
]
const buckets = ["0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "+Inf"]

const page = (): { text: string; lines: number; modelled: number } => {
  const out: Array<string> = []
  let modelled = 0
  for (const g of gauges) {
    out.push(`# HELP ${g} ${g}`, `# TYPE ${g} gauge`)
    for (let w = 0; w < workers; w++)
      for (let r = 0; r < ranks; r++) {
        out.push(
          `${g}{worker="http://10.0.${w >> 8}.${w & 255}:30000",dp_rank="${r}"} ${(w * 7 + r * 3) % 97}`
        )
        modelled++
      }
  }
  for (let f = 0; out.length < target; f++) {
    const h = `smg_router_request_phase_${f}_seconds`
    out.push(`# HELP ${h} phase ${f}`, `# TYPE ${h} histogram`)
    for (let w = 0; w < workers && out.length < target; w++)
      for (let r = 0; r < ranks && out.length < target; r++) {
        const l = `worker="http://10.0.${w >> 8}.${w & 255}:30000",dp_rank="${r}",route="/generate"`
        for (const [i, b] of buckets.entries()) out.push(`${h}_bucket{${l},le="${b}"} ${i * 11 + r}`)
        out.push(`${h}_sum{${l}} ${(f + w + r) * 0.125}`, `${h}_count{${l}} ${buckets.length * 11 + r}`)
      }
  }
  return { text: `${out.join("\n")}\n`, lines: out.length, modelled }
}

const gc = (): void => (globalThis as { gc?: () => void }).gc?.()
const heap = (): number => {
  gc()
  return process.memoryUsage().heapUsed
}
const mb = (b: number): string => `${(b / 2 ** 20).toFixed(1)} MB`

const measure = (label: string, lines: number, run: () => unknown): void => {
  let best = Number.POSITIVE_INFINITY
  let kept = 0
  let bestWall = Number.POSITIVE_INFINITY
  let result: unknown
  for (let i = 0; i < reps; i++) {
    result = undefined
    const before = heap()
    const t0 = process.hrtime.bigint()
    const c0 = process.cpuUsage()
    result = run()
    const c = process.cpuUsage(c0)
    const wall = Number(process.hrtime.bigint() - t0) / 1e9
    // CPU seconds of the process (user + system): on a shared machine wall time also counts waits
    const s = (c.user + c.system) / 1e6
    best = Math.min(best, s)
    bestWall = Math.min(bestWall, wall)
    const after = heap()
    kept = after - before
    if (result === undefined) throw new Error("no result")
  }
  const perSecond = lines / best
  console.log(
    `${label.padEnd(38)} ${(perSecond / 1e6).toFixed(2).padStart(5)} M lines/CPU-s ${(best * 1000).toFixed(0).padStart(6)} ms CPU ${(bestWall * 1000).toFixed(0).padStart(6)} ms wall  result keeps ${mb(kept).padStart(9)}`
  )
}

const { text, lines, modelled } = page()
console.log(
  `page: ${lines.toLocaleString("en")} lines, ${mb(text.length)}, ${workers} workers x ${ranks} ranks, ${modelled} modelled series${(globalThis as { gc?: unknown }).gc === undefined ? " (run with --expose-gc for the memory column)" : ""}`
)
measure("decodeLedgerReport (sglang-metrics)", lines, () => {
  const r = decodeLedgerReport(text, "sglang-metrics")
  return r._tag === "Success" ? r.success : r.failure
})
measure("parse, modelled series kept", lines, () => parseExposition(text, parseFor("sglang-metrics")))
measure("parse, every sample kept", lines, () => parseExposition(text))
console.log(
  `peak RSS ${mb(process.resourceUsage().maxRSS * 1024)} (the page string itself: ${mb(text.length)})`
)
