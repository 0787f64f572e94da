/**
 * Is the goodput verdict's 95% interval a 95% interval? On synthetic stationary traffic (Poisson
 * arrivals, lognormal prompts, geometric outputs: every window an independent draw of the same
 * process) the true mean window goodput of a policy, and the true mean log ratio between two
 * policies, are known to Monte Carlo precision from many independent windows. Each trial draws a
 * trace of `--windows` windows, estimates them as `loadledger goodput` does (`traceWindows`,
 * `findGoodputRate`, `estimateGoodput`, `compareGoodput`) and checks whether the intervals hold
 * the truth. Prints the coverage of the one-policy interval and of the paired interval, with the
 * binomial standard error of each figure.
 *
 *   pnpm bench:coverage [--trials 200] [--windows 10] [--truth 200]
 *
 * The group: DP 2, glm-5.3 on H200, SGLang engine; SLO TTFT <= 2 s, TPOT <= 100 ms, joint, 90%;
 * windows of 120 requests (median prompt 600 tokens, mean output 40 tokens) at 1 request/s
 * before scaling; policies round-robin and total-tokens. Seeds are fixed (0..), not tuned: the
 * figure printed is whatever they give. On the built packages (the script builds first).
 *
 * @since 0.5.0
 */
import { findPolicy } from "@loadledger/policies"
import {
  compareGoodput,
  estimateGoodput,
  findGoodputRate,
  modelSimConfig,
  type SimConfig,
  type SimPolicy,
  simulate,
  type TraceRequest,
  traceWindows
} from "@loadledger/sim"
import { gpus, models } from "@loadledger/step-time"
import fc from "fast-check"

const arg = (name: string, d: number) => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? Number(process.argv[i + 1]) : d
}
const TRIALS = arg("trials", 200)
const K = arg("windows", 10)
const TRUTH = arg("truth", 200)
const PER_WINDOW = 120

const config: SimConfig = {
  dpSize: 2,
  ...modelSimConfig(models["glm-5.3"]!, gpus["h200"]!),
  engine: "sglang",
  slo: { ttftSeconds: 2, tpotSeconds: 0.1, attainment: 0.9, criterion: "joint" },
  sloStopEarly: true
}
const a = findPolicy("round-robin")!
const b = findPolicy("total-tokens")!

// one window of the process, from its seed: Poisson arrivals at 1/s, lognormal prompts, geometric outputs
const request = fc.tuple(
  fc.double({ min: 1e-9, max: 1, noNaN: true }),
  fc.double({ min: 1e-9, max: 1, noNaN: true }),
  fc.double({ min: 1e-9, max: 1, noNaN: true }),
  fc.double({ min: 1e-9, max: 1, noNaN: true })
)
const windowOf = (seed: number, prefix: string): ReadonlyArray<TraceRequest> => {
  const draws = fc.sample(request, { seed, numRuns: PER_WINDOW })
  let t = 0
  return draws.map(([u, v, w, x], i) => {
    if (i > 0) t += -Math.log(u)
    // Box-Muller normal for the lognormal prompt (median 600 tokens, sigma 0.8)
    const z = Math.sqrt(-2 * Math.log(v)) * Math.cos(2 * Math.PI * w)
    const inputLength = Math.max(1, Math.min(16_000, Math.round(600 * Math.exp(0.8 * z))))
    const outputLength = Math.max(1, Math.ceil(Math.log(x) / Math.log(1 - 1 / 40)))
    return { requestId: `${prefix}-${i}`, arrivalSeconds: t, inputLength, outputLength }
  })
}

// the trials' searches start where the truth lies (fewer bracketing probes; the answer is the same crossing)
const starts = new Map<string, number>()
const goodputOf = (p: SimPolicy, w: ReadonlyArray<TraceRequest>): number => {
  const g = findGoodputRate((t) => simulate(config, t, p), w, {
    precision: 0.01,
    start: starts.get(p.name) ?? 1
  })
  if (g._tag === "GoodputError") throw new Error(g.message)
  return g.requestsPerSecond
}

const t0 = performance.now()
// the truth: independent windows (seeds far from the trials')
const trueA: Array<number> = []
const trueLog: Array<number> = []
for (let i = 0; i < TRUTH; i++) {
  const w = windowOf(1_000_000 + i, `truth${i}`)
  const ga = goodputOf(a, w)
  trueA.push(ga)
  trueLog.push(Math.log(ga / goodputOf(b, w)))
}
const mean = (xs: ReadonlyArray<number>) => xs.reduce((s, x) => s + x, 0) / xs.length
const sd = (xs: ReadonlyArray<number>) => {
  const m = mean(xs)
  return Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1))
}
const muA = mean(trueA)
starts.set(a.name, muA)
starts.set(b.name, muA / Math.exp(mean(trueLog)))
const muRatio = Math.exp(mean(trueLog))
console.log(
  `truth from ${TRUTH} independent windows: ${a.name} goodput ${muA.toFixed(3)} req/s (MC s.e. ${(sd(trueA) / Math.sqrt(TRUTH)).toFixed(3)}, window sd ${sd(trueA).toFixed(3)}); ${a.name}/${b.name} ratio ${muRatio.toFixed(4)} (window sd of log ratio ${sd(trueLog).toFixed(4)})`
)

let coveredA = 0
let coveredPair = 0
let widthA = 0
let widthPair = 0
for (let trial = 0; trial < TRIALS; trial++) {
  // a trace of K consecutive windows, cut back into windows as the command does
  let offset = 0
  const trace: Array<TraceRequest> = []
  for (let k = 0; k < K; k++) {
    const w = windowOf(trial * K + k, `t${trial}w${k}`)
    for (const r of w) trace.push({ ...r, arrivalSeconds: r.arrivalSeconds + offset })
    offset += w.at(-1)!.arrivalSeconds + 1
  }
  const windows = traceWindows(trace, K)
  if (!Array.isArray(windows)) throw new Error("windows")
  const ga = windows.map((w) => goodputOf(a, w))
  const gb = windows.map((w) => goodputOf(b, w))
  const e = estimateGoodput(ga, 1)
  const c = compareGoodput(ga, gb)
  if (e._tag !== "GoodputEstimate" || c._tag !== "GoodputComparison") throw new Error("estimate")
  if (e.ci[0] <= muA && muA <= e.ci[1]) coveredA++
  if (c.ci[0] <= muRatio && muRatio <= c.ci[1]) coveredPair++
  widthA += (e.ci[1] - e.ci[0]) / e.requestsPerSecond / TRIALS
  widthPair += (c.ci[1] - c.ci[0]) / TRIALS
  if ((trial + 1) % 50 === 0) process.stderr.write(`${trial + 1}/${TRIALS} trials\n`)
}
const se = (p: number) => Math.sqrt((p * (1 - p)) / TRIALS)
const pA = coveredA / TRIALS
const pP = coveredPair / TRIALS
console.log(`trials ${TRIALS}, ${K} windows of ${PER_WINDOW} requests each, nominal 95%`)
console.log(
  `one-policy goodput interval: coverage ${(pA * 100).toFixed(1)}% (s.e. ${(se(pA) * 100).toFixed(1)}%), mean width ${(widthA * 100).toFixed(1)}% of the estimate`
)
console.log(
  `paired ratio interval:       coverage ${(pP * 100).toFixed(1)}% (s.e. ${(se(pP) * 100).toFixed(1)}%), mean width ${(widthPair * 100).toFixed(2)} points of ratio`
)
console.log(`${((performance.now() - t0) / 1000).toFixed(1)} s`)
