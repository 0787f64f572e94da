/**
 * The vLLM front end's updates from outside a `route` (`VllmLb.ts`): a coordinator publication
 * (`coord`) and finished requests (`finish`). Re-exported by `VllmLb.ts`, so they are called as
 * `VllmLb.coord` and `VllmLb.finish`.
 *
 * @since 0.1.0
 */
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import { type PolicyError, policyError } from "../Policy.js"
import type { VllmEngineRow, VllmLbState } from "./VllmLbTypes.js"

/**
 * Apply one coordinator message `(counts, wave, running)`: take the wave and running flag, and
 * when `counts` is not `null` replace the whole load table (local bumps are lost, in-flight counts
 * are kept).
 *
 * **When to use**: whenever the coordinator publishes (see `vllmCoordinatorTimeline` in `@loadledger/sim` for when that happens).
 *
 * Errors: `InvalidInput` (field `counts`) when `counts` does not have exactly N rows.
 *
 * Reproduces the stats-update task of `DPAsyncMPClient` (vllm `core_client.py`, commit `00080ee1`).
 *
 * @example
 * ```ts
 * import { VllmLb } from "@loadledger/policies"
 * const s0 = VllmLb.init(2)
 * if (!("_tag" in s0)) {
 *   const s1 = VllmLb.coord(s0, [[1, 2, 0.3], [0, 0, 0.0]], 3, true)
 *   !("_tag" in s1) && s1.currentWave // => 3
 * }
 * ```
 *
 * @category vllm
 * @since 0.1.0
 */
export const coord = (
  state: VllmLbState,
  counts: ReadonlyArray<VllmEngineRow> | null,
  wave: number,
  running: boolean
): VllmLbState | PolicyError => {
  if (counts !== null && counts.length !== state.numEngines)
    return policyError(
      "InvalidInput",
      `counts has ${counts.length} rows, expected ${state.numEngines}`,
      "counts"
    )
  return {
    ...state,
    currentWave: wave,
    enginesRunning: running,
    lbEngines: counts === null ? state.lbEngines : counts.map((r): VllmEngineRow => [r[0], r[1], r[2]])
  }
}

/**
 * Handle finished (or aborted) request ids: each known id is removed from `reqsInFlight` and its
 * engine's in-flight count decremented; unknown ids are ignored. `decremented` lists the engines
 * decremented, in input order.
 *
 * **When to use**: on every batch of finished or aborted requests, so in-flight counts never drift (fault case S06).
 *
 * Reproduces `DPLBAsyncMPClient.process_engine_outputs` (vllm `core_client.py`, commit `00080ee1`).
 *
 * @example
 * ```ts
 * import { VllmLb } from "@loadledger/policies"
 * const s0 = VllmLb.init(2)
 * if (!("_tag" in s0)) {
 *   const r = VllmLb.route(s0, "a", 1)
 *   if (!("_tag" in r)) VllmLb.finish(r.state, ["a", "unknown-id"]).decremented // => [1]
 * }
 * ```
 *
 * @category vllm
 * @since 0.1.0
 */
export const finish = (
  state: VllmLbState,
  requestIds: ReadonlyArray<string>
): { readonly state: VllmLbState; readonly decremented: ReadonlyArray<number> } => {
  const decremented: Array<number> = []
  if (requestIds.length === 0 || HashMap.size(state.reqsInFlight) === 0) return { state, decremented }
  let reqs = state.reqsInFlight
  let inflight: Array<number> | undefined
  for (const id of requestIds) {
    const e = Option.getOrUndefined(HashMap.get(reqs, id))
    if (e === undefined) continue
    reqs = HashMap.remove(reqs, id)
    inflight ??= state.inflight.slice()
    inflight[e] = inflight[e]! - 1
    decremented.push(e)
  }
  return inflight === undefined
    ? { state, decremented }
    : {
        state: {
          numEngines: state.numEngines,
          clientCount: state.clientCount,
          clientIndex: state.clientIndex,
          lbEngines: state.lbEngines,
          inflight,
          reqsInFlight: reqs,
          engStartIndex: state.engStartIndex,
          currentWave: state.currentWave,
          enginesRunning: state.enginesRunning
        },
        decremented
      }
}
