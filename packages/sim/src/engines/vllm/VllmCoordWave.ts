/**
 * vLLM's DP coordinator wave view and its reactions to wave notices (moved from @loadledger/policies in 0.2.0).
 *
 * @since 0.1.0
 */
/**
 * The DP coordinator's wave view: the current wave and whether the engines are running it.
 *
 * @category vllm
 * @since 0.1.0
 */
export interface VllmCoordWave {
  readonly wave: number
  readonly running: boolean
}

/**
 * What one wave message made the coordinator do: its new wave view, the START_DP_WAVE broadcast
 * `[wave, exclude]` it sent to every engine (if any), and the `[null, wave, running]` publish it
 * sent to the front ends (if any). A START_DP_WAVE precedes the publish caused by the same message.
 *
 * @category vllm
 * @since 0.1.0
 */
export interface VllmCoordReaction {
  readonly coord: VllmCoordWave
  readonly startDpWave?: readonly [wave: number, exclude: number | null] | undefined
  readonly publish?: readonly [null, wave: number, running: boolean] | undefined
}

/**
 * Coordinator handling of a front end's FIRST_REQ `(engineToExclude, wave)`: when the engines are
 * not running it broadcasts START_DP_WAVE for its own current wave (excluding the engine that
 * already has the request unless the client's wave is behind). The running flag is not changed.
 *
 * **When to use**: building a wave simulation by hand; `vllmWaveStep` and `vllmCoordinatorTimeline` already call it.
 *
 * Reproduces `DPCoordinatorProc.process_input_socket` (vllm `vllm/v1/engine/coordinator.py`, era of
 * commit `00080ee13c7a451fce071ccb8d0e94d395acf5a7`, after PR #49204; not line-checked, see the
 * reference README section 2).
 *
 * @example
 * ```ts
 * import { vllmCoordFirstReq } from "@loadledger/sim"
 * vllmCoordFirstReq({ wave: 1, running: false }, 2, 0).startDpWave // => [1, null]
 * ```
 *
 * @category vllm
 * @since 0.1.0
 */
export const vllmCoordFirstReq = (
  coord: VllmCoordWave,
  engineToExclude: number | null,
  wave: number
): VllmCoordReaction => {
  if (coord.running) return { coord }
  return { coord, startDpWave: [coord.wave, wave < coord.wave ? null : engineToExclude] }
}

/**
 * Coordinator handling of an engine's wave-complete notice for wave `w`: when `coord.wave <= w` the
 * coordinator moves to wave `w + 1`, not running, and publishes `[null, w + 1, false]`.
 *
 * **When to use**: building a wave simulation by hand; `vllmWaveStep` and `vllmCoordinatorTimeline` already call it.
 *
 * Reproduces `DPCoordinatorProc` (vllm `coordinator.py`, era of commit `00080ee1`).
 *
 * @example
 * ```ts
 * import { vllmCoordWaveComplete } from "@loadledger/sim"
 * vllmCoordWaveComplete({ wave: 0, running: true }, 0).publish // => [null, 1, false]
 * ```
 *
 * @category vllm
 * @since 0.1.0
 */
export const vllmCoordWaveComplete = (coord: VllmCoordWave, wave: number): VllmCoordReaction => {
  if (coord.wave > wave) return { coord }
  const next = { wave: wave + 1, running: false }
  return { coord: next, publish: [null, next.wave, false] }
}

/**
 * Coordinator handling of an engine's start-wave notice for wave `w` from engine `e` (an engine
 * that got a request for a wave that is not running): when `w` is ahead, or equal and not running,
 * the coordinator runs wave `w`, broadcasts START_DP_WAVE `[w, e]` and publishes `[null, w, true]`.
 *
 * **When to use**: building a wave simulation by hand; `vllmWaveStep` and `vllmCoordinatorTimeline` already call it.
 *
 * Reproduces `DPCoordinatorProc` (vllm `coordinator.py`, era of commit `00080ee1`).
 *
 * @example
 * ```ts
 * import { vllmCoordStartWave } from "@loadledger/sim"
 * vllmCoordStartWave({ wave: 1, running: false }, 1, 1).startDpWave // => [1, 1]
 * ```
 *
 * @category vllm
 * @since 0.1.0
 */
export const vllmCoordStartWave = (coord: VllmCoordWave, engine: number, wave: number): VllmCoordReaction => {
  if (!(wave > coord.wave || (wave === coord.wave && !coord.running))) return { coord }
  return { coord: { wave, running: true }, startDpWave: [wave, engine], publish: [null, wave, true] }
}
