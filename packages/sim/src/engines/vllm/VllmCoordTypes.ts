/**
 * The vLLM DP coordinator's messages, outputs, options and state (moved from @loadledger/policies in 0.2.0).
 *
 * @since 0.1.0
 */
import type { VllmEngineRow } from "@loadledger/policies"
import type { VllmCoordWave } from "./VllmCoordWave.js"

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
