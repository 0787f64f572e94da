import { type PolicyError, policyError } from "../Policy.js"
import type { VllmEngineRow } from "./VllmLbClient.js"

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
 * import { vllmCoordFirstReq } from "@loadledger/policies"
 * vllmCoordFirstReq({ wave: 1, running: false }, 2, 0).startDpWave // [1, null]
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
 * import { vllmCoordWaveComplete } from "@loadledger/policies"
 * vllmCoordWaveComplete({ wave: 0, running: true }, 0).publish // [null, 1, false]
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
 * import { vllmCoordStartWave } from "@loadledger/policies"
 * vllmCoordStartWave({ wave: 1, running: false }, 1, 1).startDpWave // [1, 1]
 * ```
 *
 * @category vllm
 * @since 0.1.0
 */
export const vllmCoordStartWave = (coord: VllmCoordWave, engine: number, wave: number): VllmCoordReaction => {
  if (!(wave > coord.wave || (wave === coord.wave && !coord.running))) return { coord }
  return { coord: { wave, running: true }, startDpWave: [wave, engine], publish: [null, wave, true] }
}

/**
 * One message reaching the coordinator at integer time `t` (ms): an engine's stats
 * (`waiting`, `running`, `kv` = kvCacheUsage, the engine's `step` counter and `wave`), a front end's
 * FIRST_REQ (`rank` = engine to exclude), or an engine's wave-complete / start-wave notice.
 *
 * @category vllm
 * @since 0.1.0
 */
export type VllmCoordMessage =
  | {
      readonly t: number
      readonly type: "stats"
      readonly engine: number
      readonly waiting: number
      readonly running: number
      readonly kv: number
      readonly step: number
      readonly wave: number
    }
  | { readonly t: number; readonly type: "first_req"; readonly rank: number | null; readonly wave: number }
  | { readonly t: number; readonly type: "wave_complete"; readonly engine: number; readonly wave: number }
  | { readonly t: number; readonly type: "start_wave"; readonly engine: number; readonly wave: number }

/**
 * Everything the coordinator sends, timestamped (ms): load publishes to the front ends
 * (`current` = the live table, `step_snapshot` = the table captured at a step boundary), each
 * `[rows, wave, running]`; START_DP_WAVE broadcasts to the engines `[wave, exclude]`; and immediate
 * wave-state publishes `[null, wave, running]`.
 *
 * @category vllm
 * @since 0.1.0
 */
export type VllmCoordOutput =
  | {
      readonly t: number
      readonly kind: "current" | "step_snapshot"
      readonly msg: readonly [ReadonlyArray<VllmEngineRow>, number, boolean]
    }
  | { readonly t: number; readonly kind: "start_dp_wave"; readonly msg: readonly [number, number | null] }
  | { readonly t: number; readonly kind: "wave_state"; readonly msg: readonly [null, number, boolean] }

/**
 * Coordinator settings. `waveCoordination` is true for MoE (lockstep) DP. Times in ms; defaults are
 * upstream's: 100 ms stats interval, 5,000 ms heartbeat, 50 ms minimum poll wait in wave mode.
 * The timeline runs up to and including `untilMs`.
 *
 * @category vllm
 * @since 0.1.0
 */
export interface VllmCoordConfig {
  readonly engineCount: number
  readonly waveCoordination: boolean
  readonly untilMs: number
  readonly statsUpdateIntervalMs?: number | undefined
  readonly heartbeatMs?: number | undefined
  readonly minTimeoutMs?: number | undefined
}

const cmpWaveStep = (a: readonly [number, number], b: readonly [number, number]): number =>
  a[0] !== b[0] ? a[0] - b[0] : a[1] - b[1]

/**
 * The coordinator's publish cadence as a pure function of a message timeline: what it sends, and when.
 *
 * **When to use**: to know exactly when a vLLM front end's load view is refreshed (and so how stale
 * it can be), e.g. to drive `makeVllmLb`'s `observe` in a simulation.
 *
 * Model (discrete integer ms, handling takes no time): the poll waits 100 ms after a change, else
 * 5,000 ms (heartbeat), counted from the last publish; in wave mode it never waits less than 50 ms
 * unless a step-boundary snapshot is pending; before the first publish it waits only the minimum.
 * A message arriving exactly at the deadline is handled first. In wave mode a stats message of a
 * later `(wave, step)` captures the table as it was (if it changed) as a step snapshot, which the
 * next publish sends instead of the live table. Wave messages act at once (section 2 handlers);
 * without wave coordination they are ignored.
 *
 * Errors: `InvalidInput` (field `messages`) when times decrease or an engine index is out of range;
 * `NoRanks` when `engineCount < 1`.
 *
 * Reproduces `DPCoordinatorProc.process_input_socket` (vllm `vllm/v1/engine/coordinator.py`,
 * era of commit `00080ee13c7a451fce071ccb8d0e94d395acf5a7`, after PR #49204).
 *
 * @example
 * ```ts
 * import { vllmCoordinatorTimeline } from "@loadledger/policies"
 * const out = vllmCoordinatorTimeline({ engineCount: 2, waveCoordination: true, untilMs: 6000 }, [])
 * // !("_tag" in out) && out.map((o) => o.t) deep-equals [50, 5050]
 * ```
 *
 * @category vllm
 * @since 0.1.0
 */
export const vllmCoordinatorTimeline = (
  config: VllmCoordConfig,
  messages: ReadonlyArray<VllmCoordMessage>
): ReadonlyArray<VllmCoordOutput> | PolicyError => {
  const n = config.engineCount
  if (!Number.isInteger(n) || n < 1) return policyError("NoRanks", "engineCount must be >= 1", "engineCount")
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!
    if (i > 0 && m.t < messages[i - 1]!.t)
      return policyError("InvalidInput", `messages[${i}].t decreases`, `messages[${i}].t`)
    const e = m.type === "first_req" ? (m.rank ?? 0) : m.engine
    if (!Number.isInteger(e) || e < 0 || e >= n)
      return policyError(
        "InvalidInput",
        `messages[${i}] names engine ${e}, outside 0..${n - 1}`,
        `messages[${i}]`
      )
  }
  const interval = config.statsUpdateIntervalMs ?? 100
  const heartbeat = config.heartbeatMs ?? 5000
  const minWait = config.minTimeoutMs ?? 50
  const out: Array<VllmCoordOutput> = []
  let counts: Array<VllmEngineRow> = Array.from({ length: n }, (): VllmEngineRow => [0, 0, 0])
  let statsChanged = false
  let lastStepCounts: ReadonlyArray<VllmEngineRow> | null = null
  let lastStats: readonly [number, number] = [-1, -1]
  let coord: VllmCoordWave = { wave: 0, running: false }
  let lastPublish: number | undefined
  let now = 0
  let next = 0
  const react = (t: number, r: VllmCoordReaction): void => {
    coord = r.coord
    if (r.startDpWave !== undefined) out.push({ t, kind: "start_dp_wave", msg: r.startDpWave })
    if (r.publish !== undefined) out.push({ t, kind: "wave_state", msg: r.publish })
  }
  for (;;) {
    const waitFor = statsChanged ? interval : heartbeat
    const minTimeout = config.waveCoordination && lastStepCounts === null ? minWait : 0
    const timeout =
      lastPublish === undefined ? minTimeout : Math.max(minTimeout, waitFor - (now - lastPublish))
    const deadline = now + timeout
    const m = messages[next]
    if (m !== undefined && m.t <= deadline && m.t <= config.untilMs) {
      now = Math.max(now, m.t)
      next++
      if (m.type === "stats") {
        if (config.waveCoordination && cmpWaveStep([m.wave, m.step], lastStats) > 0) {
          if (statsChanged) lastStepCounts = counts
          lastStats = [m.wave, m.step]
        }
        counts = counts.slice()
        counts[m.engine] = [m.waiting, m.running, m.kv]
        statsChanged = true
      } else if (config.waveCoordination) {
        if (m.type === "first_req") react(now, vllmCoordFirstReq(coord, m.rank, m.wave))
        else if (m.type === "wave_complete") react(now, vllmCoordWaveComplete(coord, m.wave))
        else react(now, vllmCoordStartWave(coord, m.engine, m.wave))
      }
      continue
    }
    if (deadline > config.untilMs) break
    now = deadline
    if (lastStepCounts !== null) {
      out.push({ t: now, kind: "step_snapshot", msg: [lastStepCounts, coord.wave, coord.running] })
      lastStepCounts = null
    } else {
      out.push({ t: now, kind: "current", msg: [counts, coord.wave, coord.running] })
      statsChanged = false
    }
    lastPublish = now
  }
  return out
}
