/**
 * vLLM's DP wave model as a pure step function (moved from @loadledger/policies in 0.2.0).
 *
 * @since 0.1.0
 */
import {
  type VllmCoordReaction,
  vllmCoordFirstReq,
  vllmCoordStartWave,
  vllmCoordWaveComplete
} from "./VllmCoordWave.js"
import {
  type VllmDummyStats,
  type VllmRankWave,
  type VllmWaveError,
  type VllmWaveMessage,
  type VllmWaveProfile,
  type VllmWaveState,
  type VllmWaveStepInput,
  type VllmWaveStepResult,
  vllmWaveSnapshotProfile
} from "./VllmWaveTypes.js"

const waveError = (reason: VllmWaveError["reason"], message: string, field?: string): VllmWaveError => ({
  _tag: "VllmWaveError",
  reason,
  message,
  field
})

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

type MutRank = { -readonly [K in keyof VllmRankWave]: VllmRankWave[K] }

const isSyncStep = (p: VllmWaveProfile, step: number): boolean =>
  (p.syncFirstStep && step === 1) || step % p.syncInterval === 0

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
  const ranks: Array<MutRank> = state.ranks.map((r) => ({ ...r }))
  let coord = state.coord
  let client = state.client
  const wasRunning = ranks.map((r) => r.running)
  const eventLog: Array<VllmWaveMessage> = []
  const emitted: Array<VllmWaveMessage> = []
  const startDpWave: Array<readonly [number, number | null]> = []
  const coordPublishes: Array<readonly [null, number, boolean]> = []
  const deliverStart = (w: number, exclude: number | null): void => {
    startDpWave.push([w, exclude])
    ranks.forEach((r, i) => {
      if (r.ignoreStart) return
      if (exclude !== i && w >= r.wave) {
        r.wave = w
        r.running = true
      }
    })
  }
  const react = (rx: VllmCoordReaction): void => {
    coord = rx.coord
    if (rx.startDpWave !== undefined) deliverStart(rx.startDpWave[0], rx.startDpWave[1])
    if (rx.publish !== undefined) coordPublishes.push(rx.publish)
  }
  const addRequest = (rank: number, w: number): void => {
    const r = ranks[rank]!
    if (w === r.wave) return
    if (w > r.wave) r.wave = w
    else if (!r.running && !r.schedPaused) {
      r.running = true
      eventLog.push({ rank, kind: "start_wave", wave: r.wave })
      react(vllmCoordStartWave(coord, rank, r.wave))
    }
  }
  const events = input.events ?? []
  for (let k = 0; k < events.length; k++) {
    const e = events[k]!
    if ("rank" in e && e.rank !== null && !(Number.isInteger(e.rank) && e.rank >= 0 && e.rank < n))
      return waveError(
        "InvalidInput",
        `events[${k}].rank ${e.rank} is outside 0..${n - 1}`,
        `events[${k}].rank`
      )
    switch (e.ev) {
      case "client_request":
        addRequest(e.rank, client.wave)
        if (!client.running) {
          client = { ...client, running: true }
          eventLog.push({ rank: e.rank, kind: "first_req", wave: client.wave })
          react(vllmCoordFirstReq(coord, e.rank, client.wave))
        }
        break
      case "add_request":
        addRequest(e.rank, e.wave)
        break
      case "first_req":
        react(vllmCoordFirstReq(coord, e.rank, e.wave))
        break
      case "start_dp_wave":
        deliverStart(e.wave, e.exclude)
        break
      case "client_sync":
        client = coord
        break
      case "pause": {
        const r = ranks[e.rank]!
        r.schedPaused = true
        r.pendingPause = true
        r.running = true
        r.pauseOutstanding = true
        break
      }
      case "resume_all": {
        for (const r of ranks) {
          r.schedPaused = false
          r.ignoreStart = false
        }
        if (e.unfinished.some((u) => u)) for (const r of ranks) r.running = true
        break
      }
    }
  }
  const action = ranks.map((r, i): "R" | "D" | "I" => (exe[i] ? "R" : !unf[i] && !r.running ? "I" : "D"))
  const idle = action.filter((a) => a === "I").length
  let stepUsed: number | null = null
  let sync = false
  let syncResult: readonly [boolean, boolean] | null = null
  let globalRunning: boolean | null = null
  if (idle !== n) {
    if (idle > 0)
      return waveError("NotLockstep", `ranks ${action.join("")}: some step while others idle`, "action")
    if (ranks.some((r) => r.step !== ranks[0]!.step))
      return waveError("NotLockstep", `step counters differ: ${ranks.map((r) => r.step).join(",")}`, "step")
    for (const r of ranks) r.step += 1
    stepUsed = ranks[0]!.step
    if (isSyncStep(state.profile, stepUsed)) {
      sync = true
      const pending = ranks.filter((r) => r.pendingPause).length
      const hasUnf = unf.some((u) => u) || pending % n !== 0
      const consensus = pending === n
      syncResult = [hasUnf, consensus]
      if (consensus)
        for (const r of ranks) {
          r.ignoreStart = true
          r.pendingPause = false
        }
      globalRunning = hasUnf
    } else globalRunning = true
    ranks.forEach((r, i) => {
      r.running = globalRunning === true
      if (!r.running) {
        if (i === 0) emitted.push({ rank: 0, kind: "wave_complete", wave: r.wave })
        r.wave += 1
        r.step = 0
      } else if (!wasRunning[i] && i === 0 && !r.pendingPause)
        emitted.push({ rank: 0, kind: "start_wave", wave: r.wave })
    })
    for (const m of emitted)
      react(
        m.kind === "wave_complete"
          ? vllmCoordWaveComplete(coord, m.wave)
          : vllmCoordStartWave(coord, m.rank, m.wave)
      )
  }
  const pauseResolved: Array<number> = []
  ranks.forEach((r, i) => {
    if (r.pauseOutstanding && !r.running && !unf[i]) {
      r.pauseOutstanding = false
      pauseResolved.push(i)
    }
  })
  const ds = state.dummyStats
  const dummyRanks = action.flatMap((a, i) => (a === "D" ? [i] : []))
  return {
    _tag: "WaveStep",
    state: {
      profile: state.profile,
      ranks,
      coord,
      client,
      dummyStats:
        ds === undefined
          ? undefined
          : {
              steps: ds.steps + 1,
              realRankSteps: ds.realRankSteps + action.filter((a) => a === "R").length,
              dummyRankSteps: ds.dummyRankSteps + dummyRanks.length,
              idleRankSteps: ds.idleRankSteps + idle
            }
    },
    action,
    dummyRanks,
    stepUsed,
    sync,
    syncResult,
    globalRunning,
    emitted,
    eventLog,
    startDpWave,
    coordPublishes,
    pauseResolved
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
