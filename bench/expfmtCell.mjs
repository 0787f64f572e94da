/**
 * One `bench:expfmt` measurement in a process of its own (so its peak RSS is its own): builds the
 * 1-million-series gateway page, then times one reader `BENCH_EXPFMT_REPS` times and prints one JSON
 * line. Plain JavaScript on purpose: run by plain `node` it imports the built `@loadledger/schema`
 * (`dist`, what users run); run with `--import tsx --conditions=@loadledger/source` it imports the
 * sources (and, for the parse-only readers, the parser's internal module).
 *
 * usage: node --expose-gc bench/expfmtCell.mjs decode|parse-modelled|parse-all
 *
 * @since 0.8.0
 */
import { Worker } from "node:worker_threads"
import { load } from "./loadBuild.mjs"

const variant = process.argv[2] ?? "decode"
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

/** The page: per (worker, rank) the scheduler gauges, then histograms filling it to `target` lines. */
const page = () => {
  const out = []
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
  out.push("")
  // one flat string, as a body read off the wire is (a joined string with a suffix is a rope:
  // its first read would flatten it, a page-sized copy charged to the reader)
  const text = Buffer.from(out.join("\n"), "latin1").toString("latin1")
  return { text, lines: out.length - 1, modelled }
}

const readers = {
  decode: async () => {
    const { decodeLedgerReport } = await load("schema")
    return (text) => {
      const r = decodeLedgerReport(text, "sglang-metrics")
      return r._tag === "Success" ? r.success : r.failure
    }
  },
  "parse-modelled": async () => {
    const { parseFor } = await import("../packages/schema/src/internal/metricNames.ts")
    const { parseExposition } = await import("../packages/schema/src/internal/prometheus.ts")
    return (text) => parseExposition(text, parseFor("sglang-metrics"))
  },
  "parse-all": async () => {
    const { parseExposition } = await import("../packages/schema/src/internal/prometheus.ts")
    return (text) => parseExposition(text)
  }
}

const read = await readers[variant]()
const { text, lines, modelled } = page()
const gc = () => globalThis.gc?.()
const heap = () => {
  gc()
  return process.memoryUsage().heapUsed
}
gc()
// the process's peak RSS during the reads, sampled every 2 ms by a thread of its own (the
// kernel's high-water mark would count the page's construction too)
const shared = new Int32Array(new SharedArrayBuffer(8))
const sampler = new Worker(
  `const { workerData: s } = require("node:worker_threads")
   while (Atomics.load(s, 0) === 0) {
     const mb = Math.ceil(process.memoryUsage.rss() / 65536)
     if (mb > Atomics.load(s, 1)) Atomics.store(s, 1, mb)
     Atomics.wait(s, 0, 0, 2)
   }`,
  { eval: true, workerData: shared }
)
await new Promise((r) => setTimeout(r, 50))
gc()
const baselineRss = process.memoryUsage().rss
Atomics.store(shared, 1, 0)
let best = Number.POSITIVE_INFINITY
let bestWall = Number.POSITIVE_INFINITY
let kept = 0
for (let i = 0; i < reps; i++) {
  const before = heap()
  const t0 = process.hrtime.bigint()
  const c0 = process.cpuUsage()
  let result = read(text)
  const c = process.cpuUsage(c0)
  const wall = Number(process.hrtime.bigint() - t0) / 1e9
  // CPU seconds of the process (user + system): on a shared machine wall time also counts waits
  best = Math.min(best, (c.user + c.system) / 1e6)
  bestWall = Math.min(bestWall, wall)
  kept = heap() - before
  if (result === undefined) throw new Error("no result")
  result = undefined
}
Atomics.store(shared, 0, 1)
await sampler.terminate()
console.log(
  JSON.stringify({
    variant,
    lines,
    modelled,
    pageBytes: text.length,
    cpuSeconds: best,
    wallSeconds: bestWall,
    keptBytes: globalThis.gc === undefined ? null : kept,
    peakRssBytes: Math.max(baselineRss, Atomics.load(shared, 1) * 65536),
    baselineRssBytes: baselineRss
  })
)
