/**
 * Simulator configuration.
 *
 * @since 0.1.0
 */

import type { StepModel } from "./StepModel.js"
import type { VllmWaveProfile } from "./vllm/VllmWaveTypes.js"
import { vllmWaveSnapshotProfile } from "./vllm/VllmWaveTypes.js"

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
 *   `v1/engine/coordinator.py` and `v1/engine/core.py` @00080ee1).
 * - `lockstep`: all ranks step together (DP attention + EP); false gives each rank its own steps.
 * - `kvPoolTokens`: KV pool per rank, in tokens (prefix-cache blocks count against it).
 * - `sparseTopK`: the model's sparse-attention cap on keys read per query (DSA), if any.
 * - `chunkedPrefillTokens`: SGLang `--chunked-prefill-size` / vLLM `max_num_batched_tokens`.
 * - `frontEnds`: vLLM API-server processes (each its own policy state); SGLang always has one.
 * - `faults.zeroTokenRanksReturnEarly`: ranks with no tokens skip the dummy forward (vllm PR #51984).
 * - `recordSteps` / `recordRequests` / `recordPublishes`: keep a per-step log / per-request
 *   outcomes / the vLLM coordinator's publishes in the result.
 *
 * @category config
 * @since 0.1.0
 */
export interface SimConfig {
  readonly dpSize: number
  readonly stepModel: StepModel
  readonly engine?: "sglang" | "vllm" | undefined
  readonly lockstep?: boolean | undefined
  readonly expertParallel?: boolean | undefined
  readonly maxRunningRequests?: number | undefined
  readonly chunkedPrefillTokens?: number | undefined
  readonly kvPoolTokens?: number | undefined
  readonly sparseTopK?: number | undefined
  readonly coordinatorIntervalSeconds?: number | undefined
  readonly vllmWaveProfile?: VllmWaveProfile | undefined
  readonly frontEnds?: number | undefined
  readonly seed?: number | undefined
  readonly maxSimulatedSeconds?: number | undefined
  readonly loadSamples?: number | undefined
  readonly faults?: { readonly zeroTokenRanksReturnEarly?: boolean | undefined } | undefined
  readonly recordSteps?: boolean | undefined
  readonly recordRequests?: boolean | undefined
  readonly recordPublishes?: boolean | undefined
}

/**
 * `SimConfig` with every default filled in.
 *
 * @category config
 * @since 0.1.0
 */
export type ResolvedSimConfig = Required<Omit<SimConfig, "maxSimulatedSeconds" | "faults" | "sparseTopK">> & {
  readonly sparseTopK: number | undefined
  readonly maxSimulatedSeconds: number
  readonly faults: { readonly zeroTokenRanksReturnEarly: boolean }
}

/**
 * Defaults: SGLang engine, lockstep with EP, 64 running requests per rank, 8,192-token chunks
 * (a common `--chunked-prefill-size`; not checked against an SGLang release), a 280,000-token KV pool (about
 * `kvPoolTokensFor(models["glm-5.3"], gpus["h200"])`), 100 ms
 * coordinator cadence and the verified 32-step finish-sync profile (vLLM @00080ee1), one front end,
 * seed 0.
 *
 * @example
 * ```ts
 * import { resolveConfig } from "@loadledger/sim"
 * const c = resolveConfig({ dpSize: 8, stepModel: () => ({ stepSeconds: 0.03, tokenImbalanceRatio: 1, ranks: [] }) })
 * c.chunkedPrefillTokens // => 8192
 * c.engine // => "sglang"
 * ```
 *
 * @category config
 * @since 0.1.0
 */
export const resolveConfig = (c: SimConfig): ResolvedSimConfig => ({
  dpSize: c.dpSize,
  stepModel: c.stepModel,
  engine: c.engine ?? "sglang",
  lockstep: c.lockstep ?? true,
  expertParallel: c.expertParallel ?? true,
  maxRunningRequests: c.maxRunningRequests ?? 64,
  chunkedPrefillTokens: c.chunkedPrefillTokens ?? 8192,
  kvPoolTokens: c.kvPoolTokens ?? 280_000,
  sparseTopK: c.sparseTopK,
  coordinatorIntervalSeconds: c.coordinatorIntervalSeconds ?? 0.1,
  vllmWaveProfile: c.vllmWaveProfile ?? vllmWaveSnapshotProfile,
  frontEnds: c.engine === "vllm" ? (c.frontEnds ?? 1) : 1,
  seed: c.seed ?? 0,
  maxSimulatedSeconds: c.maxSimulatedSeconds ?? Number.POSITIVE_INFINITY,
  loadSamples: c.loadSamples ?? 200,
  faults: { zeroTokenRanksReturnEarly: c.faults?.zeroTokenRanksReturnEarly ?? false },
  recordSteps: c.recordSteps ?? false,
  recordRequests: c.recordRequests ?? false,
  recordPublishes: c.recordPublishes ?? false
})
