/**
 * vLLM's DP wave model as a pure step function (moved from @loadledger/policies in 0.2.0).
 *
 * @since 0.1.0
 */
import { newOut, stepWave, thaw, waveError } from "./internal/waveMachine.js"
import type {
  VllmDummyStats,
  VllmWaveProfile,
  VllmWaveState,
  VllmWaveStepInput,
  VllmWaveStepResult
} from "./VllmWaveTypes.js"
import { type VllmWaveError, vllmWaveSnapshotProfile } from "./VllmWaveTypes.js"

/**
 * The initial wave model for `dpSize` ranks: every rank idle in wave 0, coordinator and client at
 * `(0, not running)`. `countDummySteps` (beyond upstream, default false) turns on `dummyStats`.
 *
 * **When to use**: to start a `vllmWaveStep` replay; turn on `countDummySteps` to charge dummy batches in a step-time model.
 *
 * @example
 * ```ts
 * import { vllmWaveInit, vllmWaveSnapshotProfile } from "@loadledger/sim"
 * vllmWaveInit(4, vllmWaveSnapshotProfile).ranks.length // => 4
 * ```
 *
 * @category vllm
 * @since 0.1.0
 */
export const vllmWaveInit = (
  dpSize: number,
  profile: VllmWaveProfile = vllmWaveSnapshotProfile,
  options: { readonly countDummySteps?: boolean | undefined } = {}
): VllmWaveState => ({
  profile,
  ranks: Array.from({ length: Math.max(0, dpSize) }, () => ({
    running: false,
    wave: 0,
    step: 0,
    pendingPause: false,
    ignoreStart: false,
    schedPaused: false,
    pauseOutstanding: false
  })),
  coord: { wave: 0, running: false },
  client: { wave: 0, running: false },
  dummyStats:
    options.countDummySteps === true
      ? { steps: 0, realRankSteps: 0, dummyRankSteps: 0, idleRankSteps: 0 }
      : undefined
})

/**
 * Run one lockstep step of every rank (`DPEngineCoreProc.run_busy_loop`): apply the events, then on
 * each rank run a real batch, a dummy batch (no work but the wave is running), or nothing; count
 * the step, run the finish-sync all-reduce when the profile says so (pause consensus included),
 * end the wave or announce its start, and let the coordinator react.
 *
 * **When to use**: to replay or simulate MoE lockstep DP: how many dummy batches a single long
 * request costs the other ranks, when waves start and end, how pauses resolve.
 *
 * Errors: `VllmWaveError` `NotLockstep` (some ranks would step while others idle, or step counters
 * differ) and `InvalidInput` (bitstring lengths, rank indices).
 *
 * Reproduces vllm-project/vllm `vllm/v1/engine/core.py` (`DPEngineCoreProc.add_request`,
 * `_handle_client_request`, `run_busy_loop`, `_has_global_unfinished_reqs`) at commit
 * `00080ee13c7a451fce071ccb8d0e94d395acf5a7`, with the coordinator of the same era; the
 * `vllmWaveLaterProfile` sync rule is not source-checked.
 *
 * @example
 * ```ts
 * import { vllmWaveInit, vllmWaveStep } from "@loadledger/sim"
 * const r = vllmWaveStep(vllmWaveInit(2), {
 *   localUnfinished: [false, false],
 *   executed: [true, false],
 *   events: [{ ev: "client_request", rank: 0 }]
 * })
 * r._tag === "WaveStep" && r.action.join("") // => "RD"
 * ```
 *
 * @category vllm
 * @since 0.1.0
 */
export const vllmWaveStep = (
  state: VllmWaveState,
  input: VllmWaveStepInput
): VllmWaveStepResult | VllmWaveError => {
  const n = state.ranks.length
  const unf = input.localUnfinished
  const exe = input.executed ?? unf
  if (unf.length !== n)
    return waveError(
      "InvalidInput",
      `localUnfinished has ${unf.length} ranks, expected ${n}`,
      "localUnfinished"
    )
  if (exe.length !== n)
    return waveError("InvalidInput", `executed has ${exe.length} ranks, expected ${n}`, "executed")
  const w = thaw(state.profile, state.ranks, state.coord, state.client)
  const o = newOut()
  const err = stepWave(w, input, o)
  if (err) return err
  const ds = state.dummyStats
  const dummyRanks: Array<number> = []
  let real = 0
  o.action.forEach((a, i) => {
    if (a === "D") dummyRanks.push(i)
    else if (a === "R") real++
  })
  return {
    _tag: "WaveStep",
    state: {
      profile: state.profile,
      ranks: w.ranks,
      coord: w.coord,
      client: w.client,
      dummyStats:
        ds === undefined
          ? undefined
          : {
              steps: ds.steps + 1,
              realRankSteps: ds.realRankSteps + real,
              dummyRankSteps: ds.dummyRankSteps + dummyRanks.length,
              idleRankSteps: ds.idleRankSteps + o.idle
            }
    },
    action: o.action,
    dummyRanks,
    stepUsed: o.stepUsed,
    sync: o.sync,
    syncResult: o.syncResult,
    globalRunning: o.globalRunning,
    emitted: o.emitted,
    eventLog: o.eventLog,
    startDpWave: o.startDpWave,
    coordPublishes: o.coordPublishes,
    pauseResolved: o.pauseResolved
  }
}

/**
 * The share of dummy batches (beyond upstream): dummy rank-steps over all rank-steps (`ofAll`,
 * idle included) and over busy rank-steps (`ofBusy`, real + dummy). `undefined` when nothing was
 * counted (no steps, or counting off): never a silent 0.
 *
 * **When to use**: to report how much lockstep DP wastes on dummy batches (the step-time model and simulator charge for it).
 *
 * @example
 * ```ts
 * import { vllmDummyShare } from "@loadledger/sim"
 * vllmDummyShare({ steps: 4, realRankSteps: 4, dummyRankSteps: 12, idleRankSteps: 0 })?.ofAll // => 0.75
 * ```
 *
 * @category vllm
 * @since 0.1.0
 */
export const vllmDummyShare = (
  stats: VllmDummyStats | undefined
): { readonly ofAll: number; readonly ofBusy: number | undefined } | undefined => {
  if (stats === undefined) return undefined
  const all = stats.realRankSteps + stats.dummyRankSteps + stats.idleRankSteps
  if (all === 0) return undefined
  const busy = stats.realRankSteps + stats.dummyRankSteps
  return { ofAll: stats.dummyRankSteps / all, ofBusy: busy === 0 ? undefined : stats.dummyRankSteps / busy }
}
