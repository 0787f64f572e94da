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
 * import { vllmCoordWaveComplete } from "@loadledger/policies"
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
 * import { vllmCoordStartWave } from "@loadledger/policies"
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
 * Coordinator settings without a time limit (for the incremental machine, `vllmCoordInit`).
 * `waveCoordination` is true for MoE (lockstep) DP. Times in ms; defaults are upstream's: 100 ms
 * stats interval, 5,000 ms heartbeat, 50 ms minimum poll wait in wave mode.
 *
 * @category vllm
 * @since 0.1.0
 */
export interface VllmCoordOptions {
  readonly engineCount: number
  readonly waveCoordination: boolean
  readonly statsUpdateIntervalMs?: number | undefined
  readonly heartbeatMs?: number | undefined
  readonly minTimeoutMs?: number | undefined
}

/**
 * Coordinator settings for `vllmCoordinatorTimeline`: `VllmCoordOptions` plus `untilMs`; the
 * timeline runs up to and including `untilMs`.
 *
 * @category vllm
 * @since 0.1.0
 */
export interface VllmCoordConfig extends VllmCoordOptions {
  readonly untilMs: number
}

/**
 * The coordinator between two events, as `vllmCoordInit`, `vllmCoordHandle` and `vllmCoordAdvance`
 * hand it over. Times in ms. `counts` is the live `[waiting, running, kv]` table, `stepCounts` the
 * table captured at the last step boundary and not yet published (absent when none), `lastStats`
 * the highest `[wave, step]` seen in stats (absent before the first stats message), `coord` the wave
 * view, `nowMs` the time of the last handled message or publish (the poll's start),
 * `lastPublishMs` absent before the first publish, `horizonMs` the latest time the machine has been
 * advanced or moved to (no message may arrive before it). Treat it as opaque and immutable.
 *
 * @category vllm
 * @since 0.1.0
 */
export interface VllmCoordState {
  readonly engineCount: number
  readonly waveCoordination: boolean
  readonly statsUpdateIntervalMs: number
  readonly heartbeatMs: number
  readonly minTimeoutMs: number
  readonly nowMs: number
  readonly horizonMs: number
  readonly counts: ReadonlyArray<VllmEngineRow>
  readonly statsChanged: boolean
  readonly stepCounts: ReadonlyArray<VllmEngineRow> | undefined
  readonly lastStats: readonly [wave: number, step: number] | undefined
  readonly coord: VllmCoordWave
  readonly lastPublishMs: number | undefined
}

/**
 * The result of one `vllmCoordHandle` or `vllmCoordAdvance`: the next state and everything the
 * coordinator sent meanwhile, in order (see `VllmCoordOutput`).
 *
 * @category vllm
 * @since 0.1.0
 */
export interface VllmCoordStep {
  readonly state: VllmCoordState
  readonly outputs: ReadonlyArray<VllmCoordOutput>
}

/**
 * A fresh coordinator at time 0 (all rows `[0, 0, 0]`, wave 0, not running, never published).
 *
 * **When to use**: to drive the coordinator step by step (a simulation feeding it stats as ranks
 * finish steps); `vllmCoordinatorTimeline` is the same machine folded over a whole timeline.
 *
 * Errors: `NoRanks` (field `engineCount`) when `engineCount < 1`; `InvalidInput` naming the field
 * when `statsUpdateIntervalMs` or `heartbeatMs` is not a positive finite number or `minTimeoutMs`
 * is negative (a zero interval would publish forever at one instant).
 *
 * Reproduces the initial state of `DPCoordinatorProc.process_input_socket` (vllm
 * `vllm/v1/engine/coordinator.py`, era of commit `00080ee13c7a451fce071ccb8d0e94d395acf5a7`):
 * `last_publish_time = 0` is modelled as "never published".
 *
 * @example
 * ```ts
 * import { vllmCoordInit, vllmCoordNextPublishMs } from "@loadledger/policies"
 * const s = vllmCoordInit({ engineCount: 2, waveCoordination: true })
 * if ("_tag" in s) throw new Error(s.message)
 * vllmCoordNextPublishMs(s) // => 50
 * ```
 *
 * @category vllm
 * @since 0.1.0
 */
export const vllmCoordInit = (options: VllmCoordOptions): VllmCoordState | PolicyError => {
  const n = options.engineCount
  if (!Number.isInteger(n) || n < 1) return policyError("NoRanks", "engineCount must be >= 1", "engineCount")
  const interval = options.statsUpdateIntervalMs ?? 100
  const heartbeat = options.heartbeatMs ?? 5000
  const minWait = options.minTimeoutMs ?? 50
  if (!(Number.isFinite(interval) && interval > 0))
    return policyError("InvalidInput", "statsUpdateIntervalMs must be > 0", "statsUpdateIntervalMs")
  if (!(Number.isFinite(heartbeat) && heartbeat > 0))
    return policyError("InvalidInput", "heartbeatMs must be > 0", "heartbeatMs")
  if (!(Number.isFinite(minWait) && minWait >= 0))
    return policyError("InvalidInput", "minTimeoutMs must be >= 0", "minTimeoutMs")
  return {
    engineCount: n,
    waveCoordination: options.waveCoordination,
    statsUpdateIntervalMs: interval,
    heartbeatMs: heartbeat,
    minTimeoutMs: minWait,
    nowMs: 0,
    horizonMs: 0,
    counts: Array.from({ length: n }, (): VllmEngineRow => [0, 0, 0]),
    statsChanged: false,
    stepCounts: undefined,
    lastStats: undefined,
    coord: { wave: 0, running: false },
    lastPublishMs: undefined
  }
}

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
 * import { vllmCoordInit, vllmCoordNextPublishMs } from "@loadledger/policies"
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

// The public functions are pure: each copies the state once into a private working copy, which the
// helpers below update in place. `counts` is copy-on-write: the input state's table, a captured step
// snapshot and a published table are never written to (`shared`).
type Work = { -readonly [K in keyof VllmCoordState]: VllmCoordState[K] } & { shared: boolean }

const work = (s: VllmCoordState): Work => ({
  engineCount: s.engineCount,
  waveCoordination: s.waveCoordination,
  statsUpdateIntervalMs: s.statsUpdateIntervalMs,
  heartbeatMs: s.heartbeatMs,
  minTimeoutMs: s.minTimeoutMs,
  nowMs: s.nowMs,
  horizonMs: s.horizonMs,
  counts: s.counts,
  statsChanged: s.statsChanged,
  stepCounts: s.stepCounts,
  lastStats: s.lastStats,
  coord: s.coord,
  lastPublishMs: s.lastPublishMs,
  shared: true
})

const freeze = (w: Work): VllmCoordState => ({
  engineCount: w.engineCount,
  waveCoordination: w.waveCoordination,
  statsUpdateIntervalMs: w.statsUpdateIntervalMs,
  heartbeatMs: w.heartbeatMs,
  minTimeoutMs: w.minTimeoutMs,
  nowMs: w.nowMs,
  horizonMs: w.horizonMs,
  counts: w.counts,
  statsChanged: w.statsChanged,
  stepCounts: w.stepCounts,
  lastStats: w.lastStats,
  coord: w.coord,
  lastPublishMs: w.lastPublishMs
})

/** Publish at every deadline `d` with `d < beforeMs` (`strict`) or `d <= beforeMs`. */
const publishDue = (w: Work, beforeMs: number, strict: boolean, out: Array<VllmCoordOutput>): void => {
  for (;;) {
    const d = vllmCoordNextPublishMs(w)
    if (strict ? !(d < beforeMs) : !(d <= beforeMs)) return
    if (w.stepCounts !== undefined) {
      out.push({ t: d, kind: "step_snapshot", msg: [w.stepCounts, w.coord.wave, w.coord.running] })
      w.stepCounts = undefined
    } else {
      out.push({ t: d, kind: "current", msg: [w.counts, w.coord.wave, w.coord.running] })
      w.shared = true
      w.statsChanged = false
    }
    w.nowMs = d
    if (d > w.horizonMs) w.horizonMs = d
    w.lastPublishMs = d
  }
}

/** Handle one message (publishes due strictly before it first); an error names the field. */
const apply = (w: Work, m: VllmCoordMessage, out: Array<VllmCoordOutput>): PolicyError | undefined => {
  if (!(m.t >= w.horizonMs))
    return policyError("InvalidInput", `message at t=${m.t} ms is before ${w.horizonMs} ms`, "t")
  const e = m.type === "first_req" ? (m.rank ?? 0) : m.engine
  if (!Number.isInteger(e) || e < 0 || e >= w.engineCount)
    return policyError(
      "InvalidInput",
      `message names engine ${e}, outside 0..${w.engineCount - 1}`,
      m.type === "first_req" ? "rank" : "engine"
    )
  publishDue(w, m.t, true, out)
  const t = Math.max(w.nowMs, m.t)
  w.nowMs = t
  w.horizonMs = t
  if (m.type === "stats") {
    const last = w.lastStats
    if (
      w.waveCoordination &&
      (last === undefined || m.wave > last[0] || (m.wave === last[0] && m.step > last[1]))
    ) {
      if (w.statsChanged) {
        w.stepCounts = w.counts
        w.shared = true
      }
      w.lastStats = [m.wave, m.step]
    }
    if (w.shared) {
      w.counts = w.counts.slice()
      w.shared = false
    }
    ;(w.counts as Array<VllmEngineRow>)[m.engine] = [m.waiting, m.running, m.kv]
    w.statsChanged = true
    return undefined
  }
  if (!w.waveCoordination) return undefined
  const r =
    m.type === "first_req"
      ? vllmCoordFirstReq(w.coord, m.rank, m.wave)
      : m.type === "wave_complete"
        ? vllmCoordWaveComplete(w.coord, m.wave)
        : vllmCoordStartWave(w.coord, m.engine, m.wave)
  if (r.startDpWave !== undefined) out.push({ t, kind: "start_dp_wave", msg: r.startDpWave })
  if (r.publish !== undefined) out.push({ t, kind: "wave_state", msg: r.publish })
  w.coord = r.coord
  return undefined
}

/**
 * Let time pass up to and including `untilMs` with no message arriving: the coordinator publishes
 * at every deadline `<= untilMs` (see `vllmCoordNextPublishMs`). The poll's start is not moved
 * (only messages and publishes move it), so advancing in several pieces gives the same publishes
 * as advancing once.
 *
 * **When to use**: in a simulation, before an event that depends on the front ends' view (with
 * `untilMs` = that event's time), or to run out a quiet period.
 *
 * Errors: `InvalidInput` (field `untilMs`) when `untilMs` is not finite.
 *
 * Reproduces the timeout branch of `DPCoordinatorProc.process_input_socket` (vllm
 * `vllm/v1/engine/coordinator.py`, era of commit `00080ee1`): publish the pending step snapshot if
 * any, else the live table (clearing "changed").
 *
 * @example
 * ```ts
 * import { vllmCoordAdvance, vllmCoordInit } from "@loadledger/policies"
 * const s = vllmCoordInit({ engineCount: 2, waveCoordination: true })
 * if ("_tag" in s) throw new Error(s.message)
 * const r = vllmCoordAdvance(s, 6000)
 * if ("_tag" in r) throw new Error(r.message)
 * r.outputs.map((o) => o.t) // => [50, 5050]
 * ```
 *
 * @category vllm
 * @since 0.1.0
 */
export const vllmCoordAdvance = (state: VllmCoordState, untilMs: number): VllmCoordStep | PolicyError => {
  if (!Number.isFinite(untilMs)) return policyError("InvalidInput", "untilMs must be finite", "untilMs")
  const outputs: Array<VllmCoordOutput> = []
  const w = work(state)
  publishDue(w, untilMs, false, outputs)
  if (untilMs > w.horizonMs) w.horizonMs = untilMs
  return { state: freeze(w), outputs }
}

/**
 * One message reaches the coordinator at `message.t` (ms): first every publish due strictly before
 * `t` (a message arriving exactly at a deadline is handled first), then the message itself. Stats
 * replace the engine's row and mark the table changed; in wave mode a stats message of a later
 * `(wave, step)` first captures the table as it was (if it changed) as a step snapshot, which the
 * next publish sends instead of the live table. Wave messages act at once (section 2 handlers:
 * `vllmCoordFirstReq`, `vllmCoordWaveComplete`, `vllmCoordStartWave`), producing START_DP_WAVE
 * broadcasts and wave-state publishes; without wave coordination they are ignored.
 *
 * **When to use**: to drive the coordinator step by step; feed messages in time order.
 *
 * Errors: `InvalidInput` naming the field: `t` when it is before `state.horizonMs` (the machine
 * was already advanced or moved past it), `engine` / `rank` when out of `0..engineCount-1`.
 *
 * Reproduces the message branch of `DPCoordinatorProc.process_input_socket` (vllm
 * `vllm/v1/engine/coordinator.py`, era of commit `00080ee13c7a451fce071ccb8d0e94d395acf5a7`,
 * after PR #49204).
 *
 * @example
 * ```ts
 * import { vllmCoordAdvance, vllmCoordHandle, vllmCoordInit } from "@loadledger/policies"
 * const s = vllmCoordInit({ engineCount: 2, waveCoordination: false })
 * if ("_tag" in s) throw new Error(s.message)
 * const h = vllmCoordHandle(s, { t: 1000, type: "stats", engine: 1, waiting: 3, running: 1, kv: 0.25, step: 0, wave: 0 })
 * if ("_tag" in h) throw new Error(h.message)
 * h.outputs.map((o) => [o.t, o.kind]) // => [[0, "current"]]
 * const a = vllmCoordAdvance(h.state, 1000)
 * if ("_tag" in a) throw new Error(a.message)
 * a.outputs // => [{ t: 1000, kind: "current", msg: [[[0, 0, 0], [3, 1, 0.25]], 0, false] }]
 * ```
 *
 * @category vllm
 * @since 0.1.0
 */
export const vllmCoordHandle = (
  state: VllmCoordState,
  message: VllmCoordMessage
): VllmCoordStep | PolicyError => {
  const outputs: Array<VllmCoordOutput> = []
  const w = work(state)
  const err = apply(w, message, outputs)
  return err ?? { state: freeze(w), outputs }
}

/**
 * Several messages, in time order, as one `vllmCoordHandle` after another (the same state and
 * outputs), copying the state once: e.g. every rank's stats at one lockstep step boundary.
 *
 * **When to use**: in a simulation that hands the coordinator a batch of messages at once; it is
 * `vllmCoordHandle` folded, only cheaper.
 *
 * Errors: those of `vllmCoordHandle`, with the field prefixed by the message's index
 * (`messages[2].engine`); nothing is applied when a message fails.
 *
 * Reproduces the message branch of `DPCoordinatorProc.process_input_socket` (vllm
 * `vllm/v1/engine/coordinator.py`, era of commit `00080ee13c7a451fce071ccb8d0e94d395acf5a7`).
 *
 * @example
 * ```ts
 * import { vllmCoordAdvance, vllmCoordHandleAll, vllmCoordInit } from "@loadledger/policies"
 * const s = vllmCoordInit({ engineCount: 2, waveCoordination: true })
 * if ("_tag" in s) throw new Error(s.message)
 * const h = vllmCoordHandleAll(s, [
 *   { t: 30, type: "stats", engine: 0, waiting: 0, running: 1, kv: 0.1, step: 1, wave: 0 },
 *   { t: 30, type: "stats", engine: 1, waiting: 2, running: 0, kv: 0.0, step: 1, wave: 0 }
 * ])
 * if ("_tag" in h) throw new Error(h.message)
 * const a = vllmCoordAdvance(h.state, 80)
 * if ("_tag" in a) throw new Error(a.message)
 * a.outputs // => [{ t: 80, kind: "current", msg: [[[0, 1, 0.1], [2, 0, 0]], 0, false] }]
 * ```
 *
 * @category vllm
 * @since 0.1.0
 */
export const vllmCoordHandleAll = (
  state: VllmCoordState,
  messages: ReadonlyArray<VllmCoordMessage>
): VllmCoordStep | PolicyError => {
  const outputs: Array<VllmCoordOutput> = []
  const w = work(state)
  for (let i = 0; i < messages.length; i++) {
    const err = apply(w, messages[i]!, outputs)
    if (err) return { ...err, field: `messages[${i}].${err.field ?? "t"}` }
  }
  return { state: freeze(w), outputs }
}

/**
 * The coordinator's publish cadence as a pure function of a message timeline: what it sends, and when.
 * A fold of `vllmCoordHandle` over the messages up to `untilMs`, then `vllmCoordAdvance` to `untilMs`.
 *
 * **When to use**: to know exactly when a vLLM front end's load view is refreshed (and so how stale
 * it can be) for a timeline known up front, e.g. replaying the golden vectors; to drive the
 * coordinator from a running simulation use `vllmCoordInit` / `vllmCoordHandle` / `vllmCoordAdvance`.
 *
 * Model (discrete integer ms, handling takes no time): the poll waits 100 ms after a change, else
 * 5,000 ms (heartbeat), counted from the last publish; in wave mode it never waits less than 50 ms
 * unless a step-boundary snapshot is pending; before the first publish it waits only the minimum.
 * A message arriving exactly at the deadline is handled first. In wave mode a stats message of a
 * later `(wave, step)` captures the table as it was (if it changed) as a step snapshot, which the
 * next publish sends instead of the live table. Wave messages act at once (section 2 handlers);
 * without wave coordination they are ignored.
 *
 * Errors: `InvalidInput` (field `messages[i].t` / `messages[i]`) when times decrease or an engine
 * index is out of range; `NoRanks` when `engineCount < 1`; the `vllmCoordInit` setting errors.
 *
 * Reproduces `DPCoordinatorProc.process_input_socket` (vllm `vllm/v1/engine/coordinator.py`,
 * era of commit `00080ee13c7a451fce071ccb8d0e94d395acf5a7`, after PR #49204).
 *
 * @example
 * ```ts
 * import { vllmCoordinatorTimeline } from "@loadledger/policies"
 * const out = vllmCoordinatorTimeline({ engineCount: 2, waveCoordination: true, untilMs: 6000 }, [])
 * if ("_tag" in out) throw new Error(out.message)
 * out.map((o) => o.t) // => [50, 5050]
 * ```
 *
 * @category vllm
 * @since 0.1.0
 */
export const vllmCoordinatorTimeline = (
  config: VllmCoordConfig,
  messages: ReadonlyArray<VllmCoordMessage>
): ReadonlyArray<VllmCoordOutput> | PolicyError => {
  const init = vllmCoordInit(config)
  if ("_tag" in init) return init
  const n = init.engineCount
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
  const out: Array<VllmCoordOutput> = []
  const w = work(init)
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!
    if (m.t > config.untilMs) break
    const err = apply(w, m, out)
    if (err) return { ...err, field: `messages[${i}].${err.field ?? "t"}` }
  }
  publishDue(w, config.untilMs, false, out)
  return out
}
