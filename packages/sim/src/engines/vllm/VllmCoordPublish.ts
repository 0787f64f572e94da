/**
 * When vLLM's DP coordinator publishes next: a leaf below `VllmCoordinator.ts` and its internal
 * machine, which both need it (issue 29: no import circles).
 *
 * @since 0.1.0
 */
import type { VllmCoordState } from "./VllmCoordTypes.js"

/**
 * When the coordinator publishes next (ms) if no message reaches it first: the poll waits 100 ms
 * after a change, else the 5,000 ms heartbeat, counted from the last publish; in wave mode never
 * less than 50 ms from the poll's start unless a step-boundary snapshot is pending; before the first
 * publish only the minimum.
 *
 * **When to use**: to schedule the next publish in an event-driven simulation.
 *
 * Reproduces the poll timeout of `DPCoordinatorProc.process_input_socket` (vllm
 * `vllm/v1/engine/coordinator.py`, era of commit `00080ee1`).
 *
 * @example
 * ```ts
 * import { vllmCoordInit, vllmCoordNextPublishMs } from "@loadledger/sim"
 * const s = vllmCoordInit({ engineCount: 2, waveCoordination: false })
 * if ("_tag" in s) throw new Error(s.message)
 * vllmCoordNextPublishMs(s) // => 0
 * ```
 *
 * @category vllm
 * @since 0.1.0
 */
export const vllmCoordNextPublishMs = (s: VllmCoordState): number => {
  const waitFor = s.statsChanged ? s.statsUpdateIntervalMs : s.heartbeatMs
  const minTimeout = s.waveCoordination && s.stepCounts === undefined ? s.minTimeoutMs : 0
  const timeout =
    s.lastPublishMs === undefined ? minTimeout : Math.max(minTimeout, waitFor - (s.nowMs - s.lastPublishMs))
  return s.nowMs + timeout
}
