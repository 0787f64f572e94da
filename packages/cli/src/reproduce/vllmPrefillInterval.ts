/**
 * `loadledger reproduce vllm-prefill-interval`: vLLM's prefill schedule interval for DP with EP
 * (vllm-project/vllm PR #44558, "[Core] Add prefill step cadence for better non-PD DP balancing",
 * merged 2026-06): DeepSeek-R1 on DP 8 / EP 8, 1k-token prompts and 200-token outputs at 24
 * Poisson requests/s, interval 1 (off) against interval 2, replayed through the simulator's vLLM
 * engine with the PR's own step costs.
 *
 * @since 0.7.0
 */
import type { PolicyResult, SimConfig, TraceRequest } from "@loadledger/sim"
import { seededUniform } from "../internal/seededUniform.js"
import type { ReproduceRow, ReproduceScenario } from "./Scenario.js"

const RANKS = 8
const RATE_PER_SECOND = 24
const INPUT_TOKENS = 1000
const OUTPUT_TOKENS = 200
const REQUESTS = 4000
/** The PR's P50 ITL at interval 2: the cudagraph decode floor. */
const DECODE_STEP_SECONDS = 0.032
/** The PR's P50 ITL at interval 1: a step with a prefill on some rank. */
const PREFILL_STEP_SECONDS = 0.275
/** vLLM's `max_num_seqs` / `max_num_batched_tokens` defaults for the API server on a >= 70 GiB GPU. */
const MAX_NUM_SEQS = 1024
const MAX_NUM_BATCHED_TOKENS = 8192
const SEED = 44558
const POLICY = "vllm-kv-pressure"

/**
 * The scenario's trace: `n` requests of 1,000 prompt and 200 output tokens, the first at 0 and then
 * Poisson at 24 requests/s (exponential gaps from a seeded mulberry32 stream), as the PR's
 * benchmark sends them (`burstiness=1.0`).
 *
 * @example
 * ```ts
 * import { prefillIntervalTrace } from "./vllmPrefillInterval.js"
 * const t = prefillIntervalTrace(4000)
 * t.length // => 4000
 * t[0]!.arrivalSeconds // => 0
 * Math.abs(t.length / t.at(-1)!.arrivalSeconds - 24) < 1 // => true
 * prefillIntervalTrace(4000).at(-1)!.arrivalSeconds === t.at(-1)!.arrivalSeconds // => true
 * ```
 *
 * @category reproduce
 * @since 0.7.0
 */
export const prefillIntervalTrace = (n: number): Array<TraceRequest> => {
  const uniform = seededUniform(SEED)
  let at = 0
  return Array.from({ length: n }, (_, i) => {
    if (i > 0) at += -Math.log(uniform()) / RATE_PER_SECOND
    return { requestId: `r${i}`, arrivalSeconds: at, inputLength: INPUT_TOKENS, outputLength: OUTPUT_TOKENS }
  })
}

/** A lockstep step costs the PR's prefill-laden step when any rank runs a prefill chunk, else the decode floor. */
const stepModel: SimConfig["stepModel"] = (ranks) => ({
  stepSeconds: ranks.some((w) => w.extendTokens > 0) ? PREFILL_STEP_SECONDS : DECODE_STEP_SECONDS,
  tokenImbalanceRatio: 1,
  ranks: ranks.map(() => ({ syncWaitSeconds: 0 }))
})

const replay = async (n: number, interval: number): Promise<PolicyResult> => {
  const { findPolicy } = await import("@loadledger/policies")
  const { simulate } = await import("@loadledger/sim")
  const policy = findPolicy(POLICY)
  if (policy === undefined) throw new Error(`vllm-prefill-interval: the ${POLICY} policy is not registered`)
  const result = simulate(
    {
      dpSize: RANKS,
      stepModel,
      engine: "vllm",
      lockstep: true,
      expertParallel: true,
      maxRunningRequests: MAX_NUM_SEQS,
      chunkedPrefillTokens: MAX_NUM_BATCHED_TOKENS,
      prefillIntervalSteps: interval,
      asyncScheduling: true
    },
    prefillIntervalTrace(n),
    policy
  )
  if (result.status._tag !== "Completed")
    throw new Error(`vllm-prefill-interval, interval ${interval}: the run ended ${result.status._tag}`)
  return result
}

/** Requests per second over the run, from the first send (at 0) to the last finish, as `vllm bench` counts it. */
const requestsPerSecond = (r: PolicyResult): number => r.requests.finished / r.simulatedSeconds

/**
 * The compared rows of a replay of `n` requests (published: the PR's workload A table): mean and
 * P99 TTFT at interval 1 and 2 (ms), the ratios interval 2 / interval 1 of mean and P99 TTFT, the
 * ratios interval 1 / interval 2 of P50 and mean ITL, and the request throughput at each interval.
 *
 * @example
 * ```ts
 * import { prefillIntervalRows } from "./vllmPrefillInterval.js"
 * const rows = await prefillIntervalRows(300)
 * rows.length // => 10
 * rows[0]!.metric // => "mean TTFT, ms, interval 1"
 * rows[0]!.published // => 813
 * rows.every((r) => Number.isFinite(r.modelled) && r.modelled > 0) // => true
 * ```
 *
 * @category reproduce
 * @since 0.7.0
 */
export const prefillIntervalRows = async (n: number): Promise<ReadonlyArray<ReproduceRow>> => {
  const one = await replay(n, 1)
  const two = await replay(n, 2)
  const ms = (s: number | undefined) => 1000 * (s ?? Number.NaN)
  const ratio = (a: number | undefined, b: number | undefined) => (a ?? Number.NaN) / (b ?? Number.NaN)
  return [
    { metric: "mean TTFT, ms, interval 1", published: 813, modelled: ms(one.ttftSeconds.mean) },
    { metric: "mean TTFT, ms, interval 2", published: 502, modelled: ms(two.ttftSeconds.mean) },
    {
      metric: "mean TTFT ratio, interval 2 / 1",
      published: 502 / 813,
      modelled: ratio(two.ttftSeconds.mean, one.ttftSeconds.mean)
    },
    { metric: "P99 TTFT, ms, interval 1", published: 2476, modelled: ms(one.ttftSeconds.p99) },
    { metric: "P99 TTFT, ms, interval 2", published: 1475, modelled: ms(two.ttftSeconds.p99) },
    {
      metric: "P99 TTFT ratio, interval 2 / 1",
      published: 1475 / 2476,
      modelled: ratio(two.ttftSeconds.p99, one.ttftSeconds.p99)
    },
    {
      metric: "P50 ITL ratio, interval 1 / 2",
      published: 274.9 / 32.1,
      modelled: ratio(one.itlSeconds.p50, two.itlSeconds.p50)
    },
    {
      metric: "mean ITL ratio, interval 1 / 2",
      published: 236.7 / 139.4,
      modelled: ratio(one.itlSeconds.mean, two.itlSeconds.mean)
    },
    { metric: "throughput, req/s, interval 1", published: 22.43, modelled: requestsPerSecond(one) },
    { metric: "throughput, req/s, interval 2", published: 22.59, modelled: requestsPerSecond(two) }
  ]
}

/**
 * The scenario: the PR's workload A (below saturation) at interval 1 and 2, 4,000 requests.
 *
 * @example
 * ```ts
 * import { vllmPrefillInterval } from "./vllmPrefillInterval.js"
 * vllmPrefillInterval.name // => "vllm-prefill-interval"
 * vllmPrefillInterval.source.url // => "https://github.com/vllm-project/vllm/pull/44558"
 * ```
 *
 * @category reproduce
 * @since 0.7.0
 */
export const vllmPrefillInterval: ReproduceScenario = {
  name: "vllm-prefill-interval",
  title: "vLLM --prefill-schedule-interval 1 vs 2, DeepSeek-R1 DP 8 / EP 8, 1k in / 200 out at 24 req/s",
  source: {
    citation:
      'njhill, "[Core] Add prefill step cadence for better non-PD DP balancing", vllm-project/vllm PR #44558 (workload A table), 2026-06-04',
    url: "https://github.com/vllm-project/vllm/pull/44558"
  },
  assumptions: [
    `step costs are the PR's own medians, not the step-time model's: ${DECODE_STEP_SECONDS * 1000} ms a decode-only step (its P50 ITL at interval 2, the cudagraph decode floor), ${PREFILL_STEP_SECONDS * 1000} ms any lockstep step in which some rank runs a prefill (its P50 ITL at interval 1); so the P50 ITLs themselves are inputs, and what is compared is what the cadence makes of them`,
    `${REQUESTS} requests (the PR does not give --num-prompts; a request lives about 200 steps, and a run much shorter than that never reaches the steady state its P50 ITL at interval 1 shows), the first sent at 0, then Poisson (seed ${SEED})`,
    "async scheduling on (vLLM's default when the PR was measured; without it the model's mean TTFT rises with the interval, see the sim README)",
    `vLLM's internal load balancer (${POLICY}, DPLBAsyncMPClient) behind one API server; the coordinator's default 100 ms stats interval`,
    `max_num_seqs ${MAX_NUM_SEQS} and max_num_batched_tokens ${MAX_NUM_BATCHED_TOKENS} per rank (vLLM's API-server defaults on a >= 70 GiB GPU; the PR gives neither) and the simulator's default KV pool (280,000 tokens a rank): no run reaches either cap or retracts a request (the saturation guard's workload B of the PR is not replayed)`,
    "throughput is requests finished over the run from the first send to the last finish (vllm bench's request throughput)"
  ],
  run: () => prefillIntervalRows(REQUESTS)
}
