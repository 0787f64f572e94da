/**
 * One unit of work of `loadledger capacity` on several threads: one probe of the capacity search
 * (a full replay at one rate multiplier). Plain data in, plain data out, so a worker thread runs
 * it as well as this one; the trace, the group and the policy are set up once per thread.
 *
 * @since 0.5.0
 */

import { findPolicy } from "@loadledger/policies"
import type { EngineName } from "@loadledger/sim"
import {
  type CapacityProbe,
  capacityProbe,
  type SimConfig,
  type SimPolicy,
  type TraceFormat,
  type TraceRequest
} from "@loadledger/sim"
import { readTraceFile, simConfigFor } from "../internal/simSetup.js"

/**
 * What every probe of one `capacity` run shares: the trace (read by each thread), the group, the
 * policy and the keep-up tolerance.
 *
 * @category capacity
 * @since 0.5.0
 */
export interface CapacitySetup {
  readonly trace: string
  readonly format?: TraceFormat | undefined
  readonly limit?: number | undefined
  readonly policy: string
  readonly model: string
  readonly gpu: string
  /** Tensor-parallel size per DP rank (default: the model preset's). */
  readonly tp?: number | undefined
  readonly dp: number
  readonly engine: EngineName
  readonly frontEnds: number
  readonly seed: number
  readonly tolerance: number
}

/**
 * One probe: the setup's policy replaying the setup's trace at `rate` x its arrival rate.
 *
 * @category capacity
 * @since 0.5.0
 */
export interface CapacityProbeJob {
  readonly setup: CapacitySetup
  readonly rate: number
}

let cached:
  | {
      readonly key: string
      readonly trace: ReadonlyArray<TraceRequest>
      readonly config: SimConfig
      readonly policy: SimPolicy
    }
  | undefined

/** The setup's trace, config and policy, read and built once per thread. */
const prepared = (s: CapacitySetup) => {
  const key = JSON.stringify(s)
  if (cached?.key === key) return cached
  const policy = findPolicy(s.policy)
  if (policy === undefined) throw new Error(`unknown policy "${s.policy}" (see loadledger simulate --help)`)
  cached = {
    key,
    trace: readTraceFile(s.trace, s.format, `--trace ${s.trace}`, s.limit),
    config: simConfigFor(s),
    policy
  }
  return cached
}

/**
 * Run one probe, exactly as `findCapacity` runs it (`capacityProbe` of @loadledger/sim). Throws a
 * one-line `Error` on a bad trace or an unknown policy (the command checks both before it starts).
 *
 * @example
 * ```ts
 * import { runCapacityProbe } from "./probe.js"
 * const setup = {
 *   trace: "examples/traces/mooncake/conversation_trace.jsonl", limit: 200, policy: "total-tokens",
 *   model: "glm-5.3", gpu: "h200", dp: 2, engine: "sglang" as const, frontEnds: 1, seed: 0, tolerance: 0.02
 * }
 * const p = runCapacityProbe({ setup, rate: 0.05 })
 * p.rate // => 0.05
 * p.result.requests.finished // => 200
 * ```
 *
 * @category capacity
 * @since 0.5.0
 */
export const runCapacityProbe = (job: CapacityProbeJob): CapacityProbe => {
  const { trace, config, policy } = prepared(job.setup)
  return capacityProbe(config, trace, policy, job.rate, job.setup.tolerance)
}
