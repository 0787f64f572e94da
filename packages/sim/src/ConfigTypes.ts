/**
 * The simulator's configuration types: `SimConfig` (what a run depends on besides the trace and the
 * policy) and `ResolvedSimConfig` (every default filled in). A leaf below `Config.ts`, which
 * resolves and checks them.
 *
 * @since 0.7.0
 */
import type { EngineName } from "./engines/index.js"
import type { CoordinatorRows } from "./engines/vllm/options.js"
import type { VllmWaveProfile } from "./engines/vllm/VllmWaveTypes.js"
import type { RankFault } from "./faults/RankFaults.js"
import type { Slo } from "./Slo.js"
import type { StepModel } from "./StepModel.js"

/**
 * Everything a simulation run depends on besides the trace and the policy.
 *
 * - `engine`: `sglang` (a rank runs either an extend batch or a decode batch; schedulers publish
 *   load snapshots at their step boundaries, which the policy receives through `observe`; the
 *   SGLang policies refresh their ledger from them at most every 20 ms on arrival, sglang
 *   `data_parallel_controller.py`) or `vllm` (mixed batches under one token budget; engines send
 *   stats to the coordinator at each step boundary, and the coordinator, `vllmCoordHandle` /
 *   `vllmCoordAdvance` from @loadledger/policies, publishes to every front end on its own cadence:
 *   `coordinatorIntervalSeconds` after a change, a 5 s heartbeat, a 50 ms minimum wait and
 *   step-boundary snapshots in wave mode; each front end keeps its own in-flight counts; lockstep
 *   groups run in waves decided by `vllmWaveStep` with `vllmWaveProfile`, vllm
 *   `v1/engine/coordinator.py` and `v1/engine/core.py` @00080ee1). Default: the policy's own
 *   engine when it names one (`SimPolicy.engine`: a registry entry's, `vllm` for vLLM's
 *   balancer), else `sglang`.
 * - `lockstep`: all ranks step together (DP attention + EP); false gives each rank its own steps.
 * - `kvPoolTokens`: KV pool per rank, in tokens (prefix-cache blocks count against it).
 * - `sparseTopK`: the model's sparse-attention cap on keys read per query (DSA), if any.
 * - `maxConcurrency` (since 0.7.0): closed-loop load, as the serving benchmarks' `--max-concurrency`
 *   (vLLM `benchmarks/serve.py`, SGLang `bench_serving.py`): at most this many requests are in
 *   flight; a request whose trace arrival comes while that many are in flight is sent when one
 *   finishes (or is rejected), and its arrival (TTFT, E2E) counts from then. With every arrival at
 *   0, N clients each send their next request when the last one finishes. Default: none (the trace
 *   replayed open loop).
 * - `chunkedPrefillTokens`: SGLang `--chunked-prefill-size` / vLLM `max_num_batched_tokens`.
 * - `frontEnds`: vLLM API-server processes (each its own policy state); SGLang and TensorRT-LLM
 *   have one front end, and `checkConfig` refuses a value other than 1 on them (since 0.7.0; it
 *   was forced to 1 without a word).
 * - `maxRequestTokens`: the engine's request limit (SGLang `--context-length`, vLLM
 *   `max_model_len`): a request whose input + output exceed it is rejected on arrival. Default: the
 *   KV pool, so every accepted request fits an empty rank. Set it above `kvPoolTokens` to model an
 *   engine that accepts requests its KV pool cannot hold: such a request blocks its rank's queue.
 * - `dummyBatches`: whether a rank with an empty batch runs a dummy forward in a lockstep step
 *   (default true: SGLang pads an idle DP-attention rank with an IDLE-mode batch, `get_idle_batch`
 *   in `prepare_mlp_sync_batch`, sglang `python/sglang/srt/managers/scheduler.py`; vLLM runs
 *   `execute_dummy_batch` in `DPEngineCoreProc.run_busy_loop`, vllm `v1/engine/core.py`
 *   @00080ee1). False: the forward veto — a lockstep group's forward runs only when
 *   every rank has a non-empty batch; otherwise no rank runs, the ranks that formed a batch keep it
 *   and the group waits for the next arrival (see `simulate` for the step rule).
 * - `prefillIntervalSteps`: vLLM's `--prefill-schedule-interval` (default 1: off): prefills
 *   (admissions and chunks in progress) run only on steps whose group step counter is a multiple
 *   of it; other steps run decodes only, unless the rank's last prefill-admitting step left
 *   requests waiting (saturation guard) or it has nothing to decode. The counter restarts at 0
 *   when the group goes idle (vLLM: at each new wave), so prefills after idle start at once.
 *   vllm `v1/engine/core.py` `DPEngineCoreProc._should_throttle_prefills` and
 *   `v1/core/sched/scheduler.py` `Scheduler.schedule` (`defer_prefills`, `prefill_capacity_bound`).
 *   vLLM engine only: SGLang has no such option, and `checkConfig` refuses a value other than 1
 *   on the SGLang engine (field `prefillIntervalSteps`) instead of ignoring it.
 * - `asyncScheduling` (since 0.7.0, vLLM engine only; default false): vLLM's `--async-scheduling`
 *   (`SchedulerConfig.async_scheduling`, the `AsyncScheduler` of vllm PR #19970; on by default in
 *   current vLLM releases, off here so that earlier results stand): the scheduler runs one step
 *   ahead of the model, so a step that follows the previous one at once was scheduled when that one
 *   started, and a request queued on a rank with requests running while that step ran is admitted
 *   one step later (a rank with none schedules it at once). The cost of the prefill cadence to TTFT
 *   depends on it: the step a new request waits through is a fast decode-only step under
 *   `prefillIntervalSteps` 2 and a prefill-laden one without. `checkConfig` refuses `true` on
 *   another engine.
 * - `stallSteps`: no-progress bound: a rank that holds requests and forms an empty batch in this
 *   many consecutive step attempts ends the run with `NoProgress` naming it and the cause
 *   (default 16).
 * - `faults.zeroTokenRanksReturnEarly`: ranks with no tokens skip the dummy forward (vllm PR #51984).
 * - `recordSteps` / `recordRequests` / `recordPublishes`: keep a per-step log (`"loads"`: with each
 *   rank's load and sync wait, since 0.6.0) / per-request
 *   outcomes / the vLLM coordinator's publishes in the result.
 * - `coordinatorRows` (vLLM engine only): which fields the vLLM front ends' rows carry, see
 *   {@link CoordinatorRows} (default `"extended"`).
 * - `attentionDpEnableBalance`, `attentionDpTimeoutIters`, `attentionDpBatchingWaitIters`
 *   (TensorRT-LLM engine only, since 0.7.0): its ADP balance strategy (`AttentionDpConfig`
 *   `enable_balance`, `timeout_iters`, `batching_wait_iters`; defaults false, 50, 10): context
 *   requests wait until every rank has one (at most `timeout_iters` iterations), then up to
 *   `batching_wait_iters` more while every rank also decodes; see `engines/trtllm/balance.ts`.
 *   The TensorRT-LLM engine routes once per iteration: arrivals wait in the executor's queue and
 *   each iteration's batch (at most the ranks' free active slots, `maxRunningRequests` each) is
 *   assigned in upstream's order, pinned first, then the longest prompt first.
 * - `slo` (since 0.5.0): judge every request against this latency SLO; the result then carries
 *   `slo` ({@link SloAttainment}: exact counts, not quantiles). `sloStopEarly`: end the run as soon
 *   as more requests have missed the SLO than its target allows (a hopeless goodput probe; the
 *   status is then `SloMissed` and the attainment an upper bound). Default false.
 * - `rankFaults` (since 0.6.0): per-rank speed faults (a slow GPU, a per-step CPU overhead), see
 *   {@link RankFault} and `applyRankFaults`. Default none.
 *
 * @category config
 * @since 0.1.0
 */
export interface SimConfig {
  readonly dpSize: number
  readonly stepModel: StepModel
  readonly engine?: EngineName | undefined
  readonly lockstep?: boolean | undefined
  readonly expertParallel?: boolean | undefined
  readonly maxRunningRequests?: number | undefined
  readonly chunkedPrefillTokens?: number | undefined
  readonly kvPoolTokens?: number | undefined
  readonly sparseTopK?: number | undefined
  /** @since 0.7.0 */
  readonly maxConcurrency?: number | undefined
  readonly coordinatorIntervalSeconds?: number | undefined
  readonly vllmWaveProfile?: VllmWaveProfile | undefined
  readonly frontEnds?: number | undefined
  readonly seed?: number | undefined
  readonly maxSimulatedSeconds?: number | undefined
  readonly loadSamples?: number | undefined
  readonly maxRequestTokens?: number | undefined
  readonly dummyBatches?: boolean | undefined
  readonly prefillIntervalSteps?: number | undefined
  /** @since 0.7.0 */
  readonly asyncScheduling?: boolean | undefined
  readonly stallSteps?: number | undefined
  readonly faults?: { readonly zeroTokenRanksReturnEarly?: boolean | undefined } | undefined
  readonly recordSteps?: boolean | "loads" | undefined
  readonly recordRequests?: boolean | undefined
  readonly recordPublishes?: boolean | undefined
  readonly coordinatorRows?: CoordinatorRows | undefined
  /** @since 0.7.0 */
  readonly attentionDpEnableBalance?: boolean | undefined
  /** @since 0.7.0 */
  readonly attentionDpTimeoutIters?: number | undefined
  /** @since 0.7.0 */
  readonly attentionDpBatchingWaitIters?: number | undefined
  readonly slo?: Slo | undefined
  readonly sloStopEarly?: boolean | undefined
  readonly rankFaults?: ReadonlyArray<RankFault> | undefined
}

/**
 * `SimConfig` with every default filled in.
 *
 * @category config
 * @since 0.1.0
 */
export type ResolvedSimConfig = Required<
  Omit<SimConfig, "maxSimulatedSeconds" | "faults" | "sparseTopK" | "slo" | "maxConcurrency">
> & {
  readonly sparseTopK: number | undefined
  readonly maxConcurrency: number | undefined
  readonly slo: Slo | undefined
  readonly maxSimulatedSeconds: number
  readonly faults: { readonly zeroTokenRanksReturnEarly: boolean }
}
