/**
 * `loadledger capacity` on worker threads: the search of @loadledger/sim (`searchCapacity`) with
 * its probes on a pool of this folder's worker entry.
 *
 * @since 0.5.0
 */
import {
  type Capacity,
  type CapacityError,
  type CapacityOptions,
  capacityStep,
  searchCapacity,
  type TraceRequest
} from "@loadledger/sim"
import { openPool, workerEntry } from "../internal/pool.js"
import { type CapacitySetup, runCapacityProbe } from "./probe.js"

/**
 * The capacity search with up to `jobs` probes at a time on worker threads (`searchCapacity`:
 * speculative probes beside the one the search needs), with `findCapacity`'s probes, order and
 * answer. A search that cannot start (too few requests) says so before any thread starts.
 *
 * @example
 * ```ts
 * import { searchOnThreads } from "./search.js"
 * const setup = {
 *   trace: "examples/traces/mooncake/conversation_trace.jsonl", limit: 99, policy: "total-tokens",
 *   model: "glm-5.3", gpu: "h200", dp: 2, engine: "sglang" as const, frontEnds: 1, seed: 0, tolerance: 0.02
 * }
 * const trace = Array.from({ length: 99 }, (_, i) => ({ requestId: `${i}`, arrivalSeconds: i, inputLength: 1, outputLength: 1 }))
 * const r = await searchOnThreads(setup, trace, "total-tokens", {}, 2)
 * r._tag === "CapacityError" && r.message // => "the trace has 99 requests: at least 100 are needed to tell a backlog"
 * ```
 *
 * @category capacity
 * @since 0.5.0
 */
export const searchOnThreads = async (
  setup: CapacitySetup,
  trace: ReadonlyArray<TraceRequest>,
  policyName: string,
  options: CapacityOptions,
  jobs: number
): Promise<Capacity | CapacityError> => {
  const first = capacityStep(trace, policyName, options, [])
  if (first._tag !== "Probe") return first
  const pool = await openPool({
    entry: workerEntry(import.meta.url, "capacity-worker.js"),
    threads: jobs,
    inThread: runCapacityProbe
  })
  try {
    return await searchCapacity(trace, policyName, { ...options, parallel: jobs }, (rate) =>
      pool.run({ setup, rate })
    )
  } finally {
    await pool.destroy()
  }
}
