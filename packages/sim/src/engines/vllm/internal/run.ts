/**
 * One run of the vLLM engine (`EngineRun`): the wave model of each lockstep group of more than one
 * rank (vLLM coordinates waves for MoE DP: `vllmWaveStep`'s machine, with `vllmWaveProfile`, vllm
 * `v1/engine/core.py` `DPEngineCoreProc.run_busy_loop` @00080ee1), the prefill cadence
 * (`prefillIntervalSteps`, `EngineCore._should_throttle_prefills`), and the coordinator between the
 * ranks and the front ends (`loads.ts`).
 */
import { emptyList } from "../../../internal/lists.js"
import type { Rank } from "../../../internal/rank.js"
import type { EngineFault, EngineRun, EngineSetup } from "../../Engine.js"
import type { CoordinatorRows } from "../options.js"
import { vllmWaveInit } from "../VllmWave.js"
import type { VllmWaveEvent, VllmWaveMessage, VllmWaveProfile } from "../VllmWaveTypes.js"
import { CoordinatorLoads } from "./loads.js"
import { newOut, stepWave, thaw, type WaveOut, type WaveWork } from "./waveMachine.js"

/** The vLLM options a run reads (resolved by `resolveConfig`). */
interface VllmConfig {
  readonly coordinatorIntervalSeconds: number
  readonly vllmWaveProfile: VllmWaveProfile
  readonly prefillIntervalSteps: number
  readonly coordinatorRows: CoordinatorRows
  readonly asyncScheduling: boolean
}

/** A lockstep group's wave model and what it reads and writes each step (all reused). */
interface WaveGroup {
  readonly ranks: ReadonlyArray<Rank>
  readonly wave: WaveWork
  readonly out: WaveOut
  /** Per rank: ran real tokens in the step / holds requests after it. */
  readonly executed: Array<boolean>
  readonly unfinished: Array<boolean>
  /** Wave events since the step in flight started, and those of the step in flight. */
  pendingEvents: Array<VllmWaveEvent>
  stepEvents: Array<VllmWaveEvent>
}

const noNotices: ReadonlyArray<VllmWaveMessage> = []
const clientSyncEvent: VllmWaveEvent = { ev: "client_sync" }

/** A fresh wave model for a lockstep group of `ranks`, as a working copy. */
const waveGroup = (ranks: ReadonlyArray<Rank>, profile: VllmWaveProfile): WaveGroup => {
  const s = vllmWaveInit(ranks.length, profile)
  return {
    ranks,
    wave: thaw(s.profile, s.ranks, s.coord, s.client),
    out: newOut(),
    executed: ranks.map(() => false),
    unfinished: ranks.map(() => false),
    pendingEvents: [],
    stepEvents: []
  }
}

export class VllmRun implements EngineRun {
  /** Each group's wave model (lockstep groups of more than one rank; else undefined). */
  private readonly waves: ReadonlyArray<WaveGroup | undefined>
  /** Steps since each group last went idle (the prefill cadence counter of non-wave groups). */
  private readonly cadenceStep: Array<number>
  private readonly interval: number
  private readonly asyncScheduling: boolean
  private readonly loads: CoordinatorLoads
  readonly fault: EngineFault | undefined

  constructor(private readonly setup: EngineSetup) {
    const c = setup.config as EngineSetup["config"] & VllmConfig
    this.waves = setup.groups.map((rs) =>
      c.lockstep && rs.length > 1 ? waveGroup(rs, c.vllmWaveProfile) : undefined
    )
    this.cadenceStep = setup.groups.map(() => 0)
    this.interval = c.prefillIntervalSteps
    this.asyncScheduling = c.asyncScheduling
    this.loads = new CoordinatorLoads(
      c.dpSize,
      c.coordinatorIntervalSeconds,
      this.waves.some((w) => w !== undefined),
      c.kvPoolTokens,
      c.recordPublishes,
      c.coordinatorRows,
      setup.observe
    )
    this.fault = this.coordinatorFault(0)
  }

  get nextPublishSeconds(): number {
    return this.loads.nextPublish
  }

  get publishLog() {
    return this.loads.publishLog
  }

  queued(group: number, rank: number): void {
    this.waves[group]?.pendingEvents.push({ ev: "client_request", rank })
  }

  keepsStepping(group: number): boolean {
    return this.waves[group]?.wave.ranks.some((r) => r.running) === true
  }

  idle(group: number): void {
    this.cadenceStep[group] = 0
  }

  /** vLLM's step counter (reset per wave, or when a group without waves goes idle) is not a multiple of the interval. */
  throttlePrefills(group: number): boolean {
    if (this.interval <= 1) return false
    const w = this.waves[group]
    return (w ? w.wave.ranks[0]!.step : this.cadenceStep[group]!) % this.interval !== 0
  }

  /** Async scheduling: a step right after another was scheduled when that one started. */
  admitCutoffSeconds(_group: number, previousStartSeconds: number): number {
    return this.asyncScheduling ? previousStartSeconds : Number.POSITIVE_INFINITY
  }

  stepStarted(group: number): void {
    this.cadenceStep[group]!++
    const w = this.waves[group]
    if (w === undefined) return
    // the two event lists swap (the wave model reads a step's list and keeps none of it)
    const spent = w.stepEvents
    emptyList(spent)
    w.stepEvents = w.pendingEvents
    w.pendingEvents = spent
  }

  stepEnding(group: number): void {
    const w = this.waves[group]
    if (w === undefined) return
    // which ranks ran real tokens is read before the batches complete
    for (let i = 0; i < w.ranks.length; i++) {
      const r = w.ranks[i]!
      w.executed[i] = r.extend.length + r.numDecodes > 0
    }
  }

  stepEnded(group: number, now: number, steps: number): EngineFault | undefined {
    const w = this.waves[group]
    let notices = noNotices
    if (w) {
      for (let i = 0; i < w.ranks.length; i++) w.unfinished[i] = w.ranks[i]!.hasWork
      const o = w.out
      const e = stepWave(
        w.wave,
        { localUnfinished: w.unfinished, executed: w.executed, events: w.stepEvents },
        o
      )
      if (e)
        return {
          ranks: w.ranks.map((r) => r.id),
          message: `vLLM wave model rejected step ${steps} of group ${group}: ${e.message}`
        }
      notices = o.eventLog.length === 0 ? o.emitted : [...o.eventLog, ...o.emitted]
    }
    // ranks report at the step boundary, after the wave notices of the step, with their step
    // counter and wave after it
    if (this.loads.stepEnd(this.setup.groups[group]!, now, notices, w?.wave.ranks)) this.clientSync()
    return this.coordinatorFault(now)
  }

  publish(now: number): EngineFault | undefined {
    if (this.loads.publish()) this.clientSync()
    return this.coordinatorFault(now)
  }

  /** The front ends got a coordinator publish: each wave model's client takes on its wave view. */
  private clientSync(): void {
    for (const w of this.waves) if (w) w.pendingEvents.push(clientSyncEvent)
  }

  /** The fault to end with when the coordinator rejected a message (a simulator bug). */
  private coordinatorFault(now: number): EngineFault | undefined {
    const e = this.loads.error
    return e === undefined
      ? undefined
      : { ranks: [], message: `vLLM coordinator rejected a message at t=${now}s: ${e.message}` }
  }
}
