/**
 * One cell of `bench/simScale.ts`, in a process of its own (so its peak RSS is its own). Plain
 * JavaScript run by plain `node`: it imports the built packages (`dist`, what users run), or with
 * `BENCH_SIM_BASE=<dir>` that directory's `packages/*\/dist` (the code before a change).
 *
 * usage:
 *   node bench/simScaleCell.mjs capacity TRACE DP          -> {"rate": r}  (the rate multiplier the group keeps up with)
 *   node bench/simScaleCell.mjs run TRACE RATE DP REPS [REPEAT]
 *     -> one JSON line per run: wall / CPU seconds, simulated seconds, steps, requests, peak RSS.
 *        REPEAT > 1 concatenates the trace REPEAT times end to end (request ids suffixed), for the
 *        memory-per-request figure; `traceHeapMB` is the heap in use (after a GC, with
 *        --expose-gc) before the run: the parsed and scaled trace the caller holds; with REPEAT > 1
 *        `runHeapPeakMB` is the largest live heap (after a GC) seen at every 10th progress call.
 *   node bench/simScaleCell.mjs stream TRACE RATE DP REPEAT
 *     -> one JSON line: the same run on the trace repeated REPEAT times, but generated on the fly
 *        (a re-iterable with `count` and `lastArrivalSeconds`: `simulate` reads it once, one
 *        arrival at a time, and no copy is ever held); the requests are those `run` builds.
 * Group: glm-5.3 on h200, SGLang, total-tokens (the issue's profiling cell).
 */
import { readFileSync } from "node:fs"
import { load } from "./loadBuild.mjs"

const { findPolicy } = await load("policies")
const { findCapacity, isTraceError, kvPoolTokensFor, parseTrace, scaleTrace, simulate, stepModelFor } =
  await load("sim")
const { gpus, models } = await load("step-time")

const [mode, tracePath, ...rest] = process.argv.slice(2)
const parsed = parseTrace(readFileSync(tracePath, "utf8"))
if (isTraceError(parsed)) throw new Error(parsed.message)
const model = models["glm-5.3"]
const gpu = gpus.h200
const configFor = (dp) => ({
  dpSize: dp,
  engine: "sglang",
  stepModel: stepModelFor({ model, gpu }),
  kvPoolTokens: kvPoolTokensFor(model, gpu),
  sparseTopK: model.attention.sparseTopK
})
const entry = findPolicy("total-tokens")

/** `trace` repeated `k` times end to end, each copy one mean gap after the last arrival of the one before. */
const repeat = (trace, k) => {
  if (k <= 1) return trace
  const first = trace[0].arrivalSeconds
  const span = trace.at(-1).arrivalSeconds - first
  const shift = span + span / trace.length
  const out = []
  for (let c = 0; c < k; c++)
    for (const r of trace)
      out.push({ ...r, requestId: `${r.requestId}#${c}`, arrivalSeconds: r.arrivalSeconds + c * shift })
  return out
}

/**
 * `scaleTrace(repeat(trace, k), { rateScale })` as a stream: the same requests (the same
 * arithmetic), made as they are read, none held.
 */
const repeatStream = (trace, k, rateScale) => {
  const first = trace[0].arrivalSeconds
  const span = trace.at(-1).arrivalSeconds - first
  const shift = span + span / trace.length
  const at = (r, c) => (k <= 1 ? r.arrivalSeconds : r.arrivalSeconds + c * shift) / rateScale
  return {
    count: trace.length * k,
    lastArrivalSeconds: at(trace.at(-1), k - 1),
    *[Symbol.iterator]() {
      for (let c = 0; c < k; c++)
        for (const r of trace) yield { ...r, requestId: `${r.requestId}#${c}`, arrivalSeconds: at(r, c) }
    }
  }
}

if (mode === "stream") {
  const [rate, dp, k] = rest
  const trace = repeatStream(parsed, Number(k), Number(rate))
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const r = simulate(configFor(Number(dp)), trace, entry)
  const wallSeconds = (performance.now() - t0) / 1000
  const cpu = process.cpuUsage(cpu0)
  process.stdout.write(
    `${JSON.stringify({
      wallSeconds,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      simulatedSeconds: r.simulatedSeconds,
      steps: r.steps,
      requests: trace.count,
      finished: r.requests.finished,
      status: r.status._tag,
      maxRssMB: process.resourceUsage().maxRSS / 1024,
      traceHeapMB: 0,
      runHeapPeakMB: 0,
      e2eP99: r.e2eSeconds.p99
    })}\n`
  )
} else if (mode === "capacity") {
  const cap = findCapacity(configFor(Number(rest[0])), parsed, entry, { precision: 0.02 })
  if (cap._tag !== "Capacity") throw new Error(cap.message)
  process.stdout.write(`${JSON.stringify({ rate: cap.rate })}\n`)
} else {
  const [rate, dp, reps, k] = rest
  // the repeated copy is dropped once scaled: only the trace the simulator is given stays
  const trace = scaleTrace(repeat(parsed, Number(k ?? 1)), { rateScale: Number(rate) })
  const config = configFor(Number(dp))
  globalThis.gc?.()
  const traceHeapMB = process.memoryUsage().heapUsed / 2 ** 20
  for (let i = 0; i < Number(reps); i++) {
    const cpu0 = process.cpuUsage()
    const t0 = performance.now()
    // the memory cell (REPEAT > 1, with --expose-gc) samples the live heap as requests finish
    let heapPeak = 0
    let calls = 0
    const sampleHeap =
      Number(k ?? 1) > 1 && globalThis.gc !== undefined
        ? () => {
            if (++calls % 10 !== 0) return
            globalThis.gc()
            heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed / 2 ** 20)
          }
        : undefined
    const r = simulate(config, trace, entry, { onProgress: sampleHeap })
    const wallSeconds = (performance.now() - t0) / 1000
    const cpu = process.cpuUsage(cpu0)
    process.stdout.write(
      `${JSON.stringify({
        wallSeconds,
        cpuSeconds: (cpu.user + cpu.system) / 1e6,
        simulatedSeconds: r.simulatedSeconds,
        steps: r.steps,
        requests: trace.length,
        finished: r.requests.finished,
        status: r.status._tag,
        maxRssMB: process.resourceUsage().maxRSS / 1024,
        traceHeapMB,
        runHeapPeakMB: heapPeak,
        e2eP99: r.e2eSeconds.p99
      })}\n`
    )
  }
}
