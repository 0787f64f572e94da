/**
 * The options of `loadledger simulate`, as commander parses them.
 *
 * @since 0.1.0
 */
import type { CoordinatorRows, EngineName, TraceFormat } from "@loadledger/sim"
import type { FaultFlagOptions } from "../diagnose/faultFlags.js"

/**
 * Options of `loadledger simulate`, as parsed.
 *
 * @category simulate
 * @since 0.1.0
 */
export interface SimulateOptions extends FaultFlagOptions {
  readonly trace: string
  readonly policies: string
  readonly dp: number
  readonly model: string
  readonly gpu: string
  /** Tensor-parallel size per DP rank (default: the model preset's). */
  readonly tp?: number | undefined
  readonly engine?: EngineName | undefined
  readonly rateScale?: number | undefined
  readonly limit?: number | undefined
  readonly json?: boolean | undefined
  readonly report?: string | undefined
  readonly seed: number
  readonly frontEnds: number
  readonly format?: TraceFormat | undefined
  readonly kvPoolTokens?: number | undefined
  readonly chunkedPrefill?: number | undefined
  readonly maxRunning?: number | undefined
  /** Closed loop: at most this many requests in flight (`--max-concurrency`); default open loop. */
  readonly maxConcurrency?: number | undefined
  /** vLLM `--prefill-schedule-interval`: prefills run every k group steps (saturation guard kept). */
  readonly prefillInterval?: number | undefined
  /** vLLM's `--async-scheduling` (the simulator's `asyncScheduling`). */
  readonly asyncScheduling?: boolean | undefined
  /** `false` (`--no-dummy-batches`): the forward veto; an empty-batch rank stalls the group. */
  readonly dummyBatches?: boolean | undefined
  /** The engine's request limit in tokens (input + output); default: the KV pool. */
  readonly maxRequestTokens?: number | undefined
  /** No-progress bound in step attempts (default 16). */
  readonly stallSteps?: number | undefined
  /** What vLLM front ends are handed per rank (the simulator's `coordinatorRows`; default extended). */
  readonly coordinatorRows?: CoordinatorRows | undefined
  readonly quiet?: boolean | undefined
  /** Progress lines on a non-terminal stderr (a terminal always gets the bar unless `quiet`). */
  readonly progress?: boolean | undefined
  /** `--policy-config FILE`: an own policy as a JSON configuration, run after `policies`. */
  readonly policyConfig?: string | undefined
}
