/**
 * vLLM's DP wave model: profiles, per-rank state, events, messages (moved from @loadledger/policies in 0.2.0).
 *
 * @since 0.1.0
 */
import type { VllmCoordWave } from "./VllmCoordWave.js"
/**
 * When the ranks run the finish-sync all-reduce: on every step whose counter is a multiple of
 * `syncInterval`, and (when `syncFirstStep`) also on the first step of a wave.
 *
 * @category vllm
 * @since 0.1.0
 */
export interface VllmWaveProfile {
  readonly name: string
  readonly syncInterval: number
  readonly syncFirstStep: boolean
}

/**
 * The profile verified in vllm-project/vllm `vllm/v1/engine/core.py` at commit
 * `00080ee13c7a451fce071ccb8d0e94d395acf5a7`: a hard-coded 32-step interval, no first-step sync.
 *
 * **When to use**: to model vLLM as verified at the pinned commit (the default of `vllmWaveInit`).
 *
 * @example
 * ```ts
 * import { vllmWaveSnapshotProfile } from "@loadledger/sim"
 * vllmWaveSnapshotProfile.syncInterval // => 32
 * ```
 *
 * @category vllm
 * @since 0.1.0
 */
export const vllmWaveSnapshotProfile: VllmWaveProfile = {
  name: "snapshot_00080ee1",
  syncInterval: 32,
  syncFirstStep: false
}

/**
 * Later upstream behaviour, **not checked against source**: a configurable interval
 * (`--dp-sync-interval`, default 16) and a sync on the first step of a wave (PR #52957).
 *
 * **When to use**: to model newer vLLM releases (`--dp-sync-interval`), knowing the rule is reconstructed, not source-checked.
 *
 * @example
 * ```ts
 * import { vllmWaveLaterProfile } from "@loadledger/sim"
 * vllmWaveLaterProfile(16).syncFirstStep // => true
 * ```
 *
 * @category vllm
 * @since 0.1.0
 */
export const vllmWaveLaterProfile = (syncInterval = 16): VllmWaveProfile => ({
  name: "later_upstream_unverified",
  syncInterval,
  syncFirstStep: true
})

/**
 * One DP rank's wave state (`DPEngineCoreProc`): `running` = engines_running, `wave` =
 * current_wave, `step` = step_counter, `pendingPause`, `ignoreStart` = ignore_start_dp_wave,
 * `schedPaused` (scheduler paused), `pauseOutstanding` (a pause future not yet resolved).
 *
 * @category vllm
 * @since 0.1.0
 */
export interface VllmRankWave {
  readonly running: boolean
  readonly wave: number
  readonly step: number
  readonly pendingPause: boolean
  readonly ignoreStart: boolean
  readonly schedPaused: boolean
  readonly pauseOutstanding: boolean
}

/**
 * Dummy-step accounting (beyond upstream, off by default): rank-steps that ran a real batch (R),
 * a dummy batch (D) or nothing (I), over `steps` lockstep steps.
 *
 * @category vllm
 * @since 0.1.0
 */
export interface VllmDummyStats {
  readonly steps: number
  readonly realRankSteps: number
  readonly dummyRankSteps: number
  readonly idleRankSteps: number
}

/**
 * The whole wave model: every rank, the coordinator and one front end (`client`), plus the
 * optional dummy-step counters.
 *
 * @category vllm
 * @since 0.1.0
 */
export interface VllmWaveState {
  readonly profile: VllmWaveProfile
  readonly ranks: ReadonlyArray<VllmRankWave>
  readonly coord: VllmCoordWave
  readonly client: VllmCoordWave
  readonly dummyStats?: VllmDummyStats | undefined
}

/**
 * An event applied, in order, before the ranks run a step (see the reference README section 2):
 * a front-end request to `rank` (with FIRST_REQ when the client thinks engines are idle), an ADD
 * with an explicit wave, a bare FIRST_REQ at the coordinator, a raw START_DP_WAVE broadcast, the
 * client taking the coordinator's view, a pause of one rank, or a resume of every rank.
 *
 * @category vllm
 * @since 0.1.0
 */
export type VllmWaveEvent =
  | { readonly ev: "client_request"; readonly rank: number }
  | { readonly ev: "add_request"; readonly rank: number; readonly wave: number }
  | { readonly ev: "first_req"; readonly rank: number | null; readonly wave: number }
  | { readonly ev: "start_dp_wave"; readonly wave: number; readonly exclude: number | null }
  | { readonly ev: "client_sync" }
  | { readonly ev: "pause"; readonly rank: number; readonly mode?: string | undefined }
  | { readonly ev: "resume_all"; readonly unfinished: ReadonlyArray<boolean> }

/**
 * One lockstep step's inputs, one entry per rank: `localUnfinished` (has unfinished requests after
 * this step), `executed` (ran a real batch; defaults to `localUnfinished`), and `events`.
 *
 * @category vllm
 * @since 0.1.0
 */
export interface VllmWaveStepInput {
  readonly localUnfinished: ReadonlyArray<boolean>
  readonly executed?: ReadonlyArray<boolean> | undefined
  readonly events?: ReadonlyArray<VllmWaveEvent> | undefined
}

/**
 * A message a rank or an event sent to the coordinator.
 *
 * @category vllm
 * @since 0.1.0
 */
export interface VllmWaveMessage {
  readonly rank: number
  readonly kind: "start_wave" | "wave_complete" | "first_req"
  readonly wave: number
}

/**
 * What one step did. `action[r]` is `R` (real batch), `D` (dummy batch) or `I` (idle);
 * `stepUsed` is the step counter the sync rule tested (null when all idle); `syncResult` is
 * `[hasUnfinishedGlobal, pauseConsensus]` when the all-reduce ran; `emitted` are the ranks'
 * messages, `eventLog` the events' messages; `startDpWave` every START_DP_WAVE `[wave, exclude]`
 * broadcast; `coordPublishes` every `[null, wave, running]` publish; `pauseResolved` the ranks
 * whose pause completed.
 *
 * @category vllm
 * @since 0.1.0
 */
export interface VllmWaveStepResult {
  readonly _tag: "WaveStep"
  readonly state: VllmWaveState
  readonly action: ReadonlyArray<"R" | "D" | "I">
  readonly dummyRanks: ReadonlyArray<number>
  readonly stepUsed: number | null
  readonly sync: boolean
  readonly syncResult: readonly [boolean, boolean] | null
  readonly globalRunning: boolean | null
  readonly emitted: ReadonlyArray<VllmWaveMessage>
  readonly eventLog: ReadonlyArray<VllmWaveMessage>
  readonly startDpWave: ReadonlyArray<readonly [number, number | null]>
  readonly coordPublishes: ReadonlyArray<readonly [null, number, boolean]>
  readonly pauseResolved: ReadonlyArray<number>
}

/**
 * Why a wave step cannot run: `NotLockstep` when some ranks would step while others idle, or step
 * counters differ (real vLLM would block in a collective); `InvalidInput` for malformed inputs.
 *
 * @category vllm
 * @since 0.1.0
 */
export interface VllmWaveError {
  readonly _tag: "VllmWaveError"
  readonly reason: "NotLockstep" | "InvalidInput"
  readonly message: string
  readonly field?: string | undefined
}
