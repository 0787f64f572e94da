/**
 * vLLM's DP coordinator (`DPCoordinatorProc`) as a pure, incremental machine (moved from @loadledger/policies in 0.2.0).
 *
 * @since 0.1.0
 */
import { type PolicyError, policyError, type VllmEngineRow } from "@loadledger/policies"
import { apply, freeze, publishDue, work } from "./internal/coordMachine.js"
import type {
  VllmCoordConfig,
  VllmCoordMessage,
  VllmCoordOptions,
  VllmCoordOutput,
  VllmCoordState,
  VllmCoordStep
} from "./VllmCoordTypes.js"

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
 * import { vllmCoordInit, vllmCoordNextPublishMs } from "@loadledger/sim"
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
 * import { vllmCoordAdvance, vllmCoordInit } from "@loadledger/sim"
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
 * import { vllmCoordAdvance, vllmCoordHandle, vllmCoordInit } from "@loadledger/sim"
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
 * import { vllmCoordAdvance, vllmCoordHandleAll, vllmCoordInit } from "@loadledger/sim"
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
 * import { vllmCoordinatorTimeline } from "@loadledger/sim"
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
