/**
 * `loadledger reproduce trtllm-adp-balance`: NVIDIA's ADP balance strategy on DeepSeek-V3 (tech
 * blog 10, "ADP Balance Strategy"; NVIDIA/TensorRT-LLM
 * `docs/source/blogs/tech_blog/blog10_ADP_Balance_Strategy.md` @011cfc2c): 8 GB200, attention DP 8
 * + EP 8, in-flight batching, a closed loop of 5,120 clients over 16,000 requests, run three ways
 * (baseline round-robin, context wait, full strategy) through the simulator's TensorRT-LLM engine.
 *
 * @since 0.7.0
 */
import type { PolicyResult, StepRecord, TraceRequest } from "@loadledger/sim"
import { seededUniform } from "../internal/seededUniform.js"
import type { ReproduceRow, ReproduceScenario } from "./Scenario.js"

const RANKS = 8
const MAX_BATCH_SIZE = 512
const MAX_NUM_TOKENS = 4600
const CONCURRENCY = 5120
const REQUESTS = 16_000
const MEAN_INPUT = 803
const MEAN_OUTPUT = 3654
const INPUT_SIGMA = 0.5
const OUTPUT_SIGMA = 1.0
const OUTPUT_CAP = 32_768
const SEED = 10

/** The size of one replay: the published one, or a reduced one with the same per-rank load shape. */
export interface AdpBalanceSize {
  /** Requests in the trace (published: 16,000). */
  readonly requests: number
  /** Concurrent clients of the closed loop (published: 5,120). */
  readonly concurrency: number
  /** Max batch size per rank (published: 512); the context budget per iteration stays 4,600 - 512. */
  readonly maxBatchSize: number
}

/** A seeded standard normal stream (mulberry32 + Box-Muller): deterministic for a seed. */
const normals = (seed: number): (() => number) => {
  const uniform = seededUniform(seed)
  return () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform())
}

/**
 * `n` lognormal lengths of shape `sigma`, rounded, in [1, cap], scaled so their mean is `mean`
 * (the scale refitted a few times after the cap clips the tail).
 */
const lengths = (n: number, mean: number, sigma: number, cap: number, next: () => number): Array<number> => {
  const raw = Array.from({ length: n }, () => Math.exp(sigma * next()))
  const at = (scale: number) => raw.map((x) => Math.min(cap, Math.max(1, Math.round(x * scale))))
  let scale = mean / (raw.reduce((s, x) => s + x, 0) / n)
  for (let i = 0; i < 8; i++) scale *= mean / (at(scale).reduce((s, x) => s + x, 0) / n)
  return at(scale)
}

/**
 * The scenario's trace: `n` requests, all sent at 0 (the closed loop paces them), inputs lognormal
 * (sigma 0.5) and outputs lognormal (sigma 1.0, long-tailed, capped at 32,768), each scaled to the
 * blog's mean (803 and 3,654 tokens), from a fixed seed.
 *
 * @example
 * ```ts
 * import { adpBalanceTrace } from "./trtllmAdpBalance.js"
 * const t = adpBalanceTrace(16_000)
 * t.length // => 16000
 * Math.abs(t.reduce((s, r) => s + r.inputLength, 0) / t.length - 803) < 1 // => true
 * Math.abs(t.reduce((s, r) => s + r.outputLength, 0) / t.length - 3654) < 1 // => true
 * ```
 *
 * @category reproduce
 * @since 0.7.0
 */
export const adpBalanceTrace = (n: number): Array<TraceRequest> => {
  const next = normals(SEED)
  const inputs = lengths(n, MEAN_INPUT, INPUT_SIGMA, Number.POSITIVE_INFINITY, next)
  const outputs = lengths(n, MEAN_OUTPUT, OUTPUT_SIGMA, OUTPUT_CAP, next)
  return inputs.map((inputLength, i) => ({
    requestId: `r${i}`,
    arrivalSeconds: 0,
    inputLength,
    outputLength: outputs[i]!
  }))
}

/**
 * The blog's per-iteration figures from a step log: the mean over iterations of the balance ratio
 * (mean over max of the ranks' real tokens; iterations where every rank is idle skipped) and the
 * speed-of-light factor `elapsed / sol_time`, `sol_time = Σ stepSeconds x balance ratio`.
 *
 * @example
 * ```ts
 * import { stepBalance } from "./trtllmAdpBalance.js"
 * const step = (tokens: Array<number>) => ({
 *   startSeconds: 0, stepSeconds: 1, ranks: tokens.map((t, rank) => ({ rank, tokens: t, dummyTokens: 0 }))
 * })
 * stepBalance([step([4, 4]), step([4, 0])]) // => { balanceRatio: 0.75, solFactor: 2 / 1.5 }
 * ```
 *
 * @category reproduce
 * @since 0.7.0
 */
export const stepBalance = (
  steps: ReadonlyArray<StepRecord>
): { readonly balanceRatio: number; readonly solFactor: number } => {
  let sum = 0
  let count = 0
  let elapsed = 0
  let sol = 0
  for (const s of steps) {
    let max = 0
    let total = 0
    for (const r of s.ranks) {
      total += r.tokens
      if (r.tokens > max) max = r.tokens
    }
    elapsed += s.stepSeconds
    if (max === 0) continue
    const ratio = total / s.ranks.length / max
    sum += ratio
    count++
    sol += s.stepSeconds * ratio
  }
  return {
    balanceRatio: count === 0 ? Number.NaN : sum / count,
    solFactor: sol === 0 ? Number.NaN : elapsed / sol
  }
}

type Strategy = "baseline" | "context wait" | "full strategy"

/** One of the three runs, with its per-iteration figures. */
interface Run {
  readonly strategy: Strategy
  readonly result: PolicyResult
  readonly balanceRatio: number
  readonly solTps: number
}

const runAll = async (size: AdpBalanceSize): Promise<ReadonlyArray<Run>> => {
  const { gpus, models } = await import("@loadledger/step-time")
  const { findPolicy } = await import("@loadledger/policies")
  const { kvPoolTokensFor, simulate, stepModelFor } = await import("@loadledger/sim")
  const model = models["deepseek-v3"]!
  const gpu = gpus["gb200"]!
  const policy = findPolicy("round-robin")
  if (policy === undefined) throw new Error("trtllm-adp-balance: the round-robin policy is not registered")
  const trace = adpBalanceTrace(size.requests)
  const strategies: ReadonlyArray<[Strategy, boolean, number, number]> = [
    ["baseline", false, 50, 0],
    ["context wait", true, 50, 0],
    ["full strategy", true, 50, 10]
  ]
  return strategies.map(([strategy, balance, timeoutIters, batchingWaitIters]) => {
    const result = simulate(
      {
        dpSize: RANKS,
        stepModel: stepModelFor({ model, gpu }),
        engine: "trtllm",
        lockstep: true,
        expertParallel: true,
        maxRunningRequests: size.maxBatchSize,
        chunkedPrefillTokens: MAX_NUM_TOKENS - MAX_BATCH_SIZE + size.maxBatchSize,
        kvPoolTokens: kvPoolTokensFor(model, gpu),
        maxConcurrency: size.concurrency,
        attentionDpEnableBalance: balance,
        attentionDpTimeoutIters: timeoutIters,
        attentionDpBatchingWaitIters: batchingWaitIters,
        recordSteps: true
      },
      trace,
      policy
    )
    if (result.status._tag !== "Completed")
      throw new Error(`trtllm-adp-balance ${strategy}: the run ended ${result.status._tag}`)
    const { balanceRatio, solFactor } = stepBalance(result.stepLog ?? [])
    return { strategy, result, balanceRatio, solTps: solFactor * result.outputTokensPerSecond }
  })
}

const PUBLISHED: Record<Strategy, { balance: number; tps: number; sol: number }> = {
  baseline: { balance: 0.5411, tps: 25_664, sol: 39_552 },
  "context wait": { balance: 0.8433, tps: 33_499, sol: 38_312 },
  "full strategy": { balance: 0.877, tps: 34_140, sol: 37_912 }
}

/**
 * The compared rows of one replay at `size`: per run the balance ratio, the output throughput as a
 * ratio to the baseline's, the speed-of-light throughput as a ratio to the baseline's actual
 * throughput (the blog's SOL over its baseline TPS), then whether the mean TTFT rises from the
 * baseline to the full strategy (1 yes, 0 no; published: it rises).
 *
 * @example
 * ```ts
 * import { adpBalanceRows } from "./trtllmAdpBalance.js"
 * const rows = await adpBalanceRows({ requests: 400, concurrency: 160, maxBatchSize: 16 })
 * rows.length // => 10
 * rows[0]!.published // => 0.5411
 * ```
 *
 * @category reproduce
 * @since 0.7.0
 */
export const adpBalanceRows = async (size: AdpBalanceSize): Promise<ReadonlyArray<ReproduceRow>> => {
  const runs = await runAll(size)
  const base = runs[0]!
  const baseTps = base.result.outputTokensPerSecond
  const rows: Array<ReproduceRow> = []
  for (const r of runs) {
    rows.push({
      metric: `balance ratio, ${r.strategy}`,
      published: PUBLISHED[r.strategy].balance,
      modelled: r.balanceRatio
    })
  }
  for (const r of runs) {
    rows.push({
      metric: `output throughput / baseline, ${r.strategy} (published ${PUBLISHED[r.strategy].tps} tok/s, modelled ${Math.round(r.result.outputTokensPerSecond)})`,
      published: PUBLISHED[r.strategy].tps / PUBLISHED.baseline.tps,
      modelled: r.result.outputTokensPerSecond / baseTps
    })
  }
  for (const r of runs) {
    rows.push({
      metric: `SOL throughput / baseline throughput, ${r.strategy} (published ${PUBLISHED[r.strategy].sol} tok/s, modelled ${Math.round(r.solTps)})`,
      published: PUBLISHED[r.strategy].sol / PUBLISHED.baseline.tps,
      modelled: r.solTps / baseTps
    })
  }
  const ttft = (r: Run) => r.result.ttftSeconds.mean ?? Number.NaN
  const full = runs[2]!
  rows.push({
    metric: `mean TTFT rises, baseline -> full strategy (1 yes, 0 no; modelled ${ttft(base).toFixed(1)} s -> ${ttft(full).toFixed(1)} s)`,
    published: 1,
    modelled: ttft(full) > ttft(base) ? 1 : 0
  })
  return rows
}

/**
 * The scenario: the blog's performance summary (balance ratio, throughput and speed-of-light
 * throughput as ratios to the baseline, TTFT direction) from three simulated runs.
 *
 * @example
 * ```ts
 * import { trtllmAdpBalance } from "./trtllmAdpBalance.js"
 * trtllmAdpBalance.name // => "trtllm-adp-balance"
 * trtllmAdpBalance.assumptions.length > 3 // => true
 * ```
 *
 * @category reproduce
 * @since 0.7.0
 */
export const trtllmAdpBalance: ReproduceScenario = {
  name: "trtllm-adp-balance",
  title:
    "TensorRT-LLM ADP balance strategy: DeepSeek-V3 on 8 GB200, attention DP 8 + EP 8, closed loop 5,120",
  source: {
    citation: "NVIDIA TensorRT LLM team, ADP Balance Strategy (tech blog 10), NVIDIA/TensorRT-LLM @011cfc2c",
    url: "https://github.com/NVIDIA/TensorRT-LLM/blob/main/docs/source/blogs/tech_blog/blog10_ADP_Balance_Strategy.md"
  },
  assumptions: [
    `the request set is generated (seed ${SEED}): ${REQUESTS} requests, inputs lognormal sigma ${INPUT_SIGMA} and outputs lognormal sigma ${OUTPUT_SIGMA} (capped at ${OUTPUT_CAP}), each scaled to the blog's mean (${MEAN_INPUT} / ${MEAN_OUTPUT} tokens); the blog shows its distribution only as a figure`,
    `every run uses the round-robin router over the engine's longest-prompt-first batch order (the blog's baseline: sorted by tokens, round-robin); the balance runs change only attentionDpEnableBalance, timeout_iters 50 and batching_wait_iters 0 / 10`,
    `max batch size ${MAX_BATCH_SIZE} is maxRunningRequests and the ${MAX_NUM_TOKENS}-token iteration budget is chunkedPrefillTokens; the simulator's engine chunks the last context of an iteration at the budget (it has no chunking-off mode)`,
    "DeepSeek-V3 at FP8 on the gb200 preset (the blog runs NVFP4; the roofline has no FP4 peak), default step-time efficiencies, KV pool from the presets, no MTP, no EPLB imbalance",
    "throughput and speed-of-light throughput are compared as ratios to the baseline's throughput (the absolute figures are in the metric text); balance ratios as published",
    "the blog's balance ratio counts each rank's tokens per iteration; idle ranks count 0 tokens and iterations where every rank is idle are skipped"
  ],
  run: () => adpBalanceRows({ requests: REQUESTS, concurrency: CONCURRENCY, maxBatchSize: MAX_BATCH_SIZE })
}
