/**
 * vLLM's DP coordinator inside the simulation, driven step by step through the pure machine of
 * @loadledger/policies (`vllmCoordHandle` / `vllmCoordAdvance`, vllm `DPCoordinatorProc` @00080ee1):
 * ranks send stats at their step boundaries, the wave model's notices reach it as they are emitted,
 * and it publishes on its own cadence (100 ms when changed, 5 s heartbeat, the 50 ms minimum in wave
 * mode, step-boundary snapshots). Simulation time is seconds; the coordinator's is ms.
 *
 * The coordinator's rows are `[waiting, running, kvCacheUsage]`. A `RankLoad` also needs
 * `numTotalTokens`, which vLLM does not publish: this driver carries each rank's value from the same
 * stats message as the row (and captures it with the row in a step snapshot), so a token-based policy
 * run on the vLLM engine sees tokens exactly as stale as the rows. It also carries the time of
 * that stats message (`measuredSeconds`, NaN before a rank's first stats): the front ends' rows are
 * stamped with it, so a ledger that keeps its in-flight charges until a snapshot taken after the
 * route (ledger-balanced, cache-affinity) does not drop them on a publish whose rows predate the route.
 */
import type { PolicyError } from "@loadledger/policies"
import {
  vllmCoordAdvance,
  vllmCoordHandleAll,
  vllmCoordInit,
  vllmCoordNextPublishMs
} from "../vllm/VllmCoordinator.js"
import type { VllmCoordMessage, VllmCoordOutput, VllmCoordState } from "../vllm/VllmCoordTypes.js"

/** A load publish to the front ends, with the tokens that go with its rows. */
export interface CoordPublish {
  readonly atSeconds: number
  readonly kind: "current" | "step_snapshot"
  readonly rows: ReadonlyArray<readonly [number, number, number | undefined]>
  readonly tokens: ReadonlyArray<number>
  readonly measuredSeconds: ReadonlyArray<number>
  readonly wave: number
  readonly running: boolean
}

/** An immediate wave-state publish `[null, wave, running]`. */
export interface CoordWaveState {
  readonly atSeconds: number
  readonly kind: "wave_state"
  readonly wave: number
  readonly running: boolean
}

export type CoordEvent = CoordPublish | CoordWaveState

const later = (
  m: { readonly wave: number; readonly step: number },
  last: readonly [number, number] | undefined
) => last === undefined || m.wave > last[0] || (m.wave === last[0] && m.step > last[1])

export class Coordinator {
  private s: VllmCoordState
  private readonly tokens: Array<number>
  private readonly measured: Array<number>
  private snapTokens: ReadonlyArray<number> | undefined = undefined
  private snapMeasured: ReadonlyArray<number> | undefined = undefined
  /** The next publish (seconds) if no message comes first. */
  nextPublishSeconds: number

  constructor(init: VllmCoordState) {
    this.s = init
    this.tokens = new Array<number>(init.engineCount).fill(0)
    this.measured = new Array<number>(init.engineCount).fill(Number.NaN)
    this.nextPublishSeconds = vllmCoordNextPublishMs(init) / 1000
  }

  static make(
    engineCount: number,
    waveCoordination: boolean,
    statsUpdateIntervalSeconds: number
  ): Coordinator | PolicyError {
    const s = vllmCoordInit({
      engineCount,
      waveCoordination,
      statsUpdateIntervalMs: statsUpdateIntervalSeconds * 1000
    })
    return "_tag" in s ? s : new Coordinator(s)
  }

  /** `seconds` on the coordinator's clock (ms), never before what it has already reached. */
  msAt(seconds: number): number {
    // (float rounding between s and ms)
    return Math.max(seconds * 1000, this.s.horizonMs)
  }

  private events(outputs: ReadonlyArray<VllmCoordOutput>, out: Array<CoordEvent>): void {
    for (const o of outputs) {
      const atSeconds = o.t / 1000
      if (o.kind === "current" || o.kind === "step_snapshot") {
        const snap = o.kind === "step_snapshot"
        const tokens = snap ? (this.snapTokens ?? this.tokens) : this.tokens
        const measured = snap ? (this.snapMeasured ?? this.measured) : this.measured
        if (snap) {
          this.snapTokens = undefined
          this.snapMeasured = undefined
        }
        out.push({
          atSeconds,
          kind: o.kind,
          rows: o.msg[0],
          tokens: tokens.slice(),
          measuredSeconds: measured.slice(),
          wave: o.msg[1],
          running: o.msg[2]
        })
      } else if (o.kind === "wave_state")
        out.push({ atSeconds, kind: o.kind, wave: o.msg[1], running: o.msg[2] })
      // start_dp_wave: the wave model (vllmWaveStep) has already delivered it to the ranks
    }
  }

  /**
   * Messages that all reach the coordinator at `seconds`, in order (`tokens[i]`: the rank's
   * `numTotalTokens` that goes with stats message `i`); what the coordinator sent meanwhile is
   * appended to `out`. They are handed over in as few `vllmCoordHandleAll` batches as keep the
   * token mirror exact: a batch ends before a stats message of a later (wave, step) than the batch
   * has seen, the only message that can capture a step snapshot.
   */
  sendAll(
    seconds: number,
    msgs: ReadonlyArray<VllmCoordMessage>,
    tokens: ReadonlyArray<number>,
    out: Array<CoordEvent>
  ): PolicyError | undefined {
    const t = this.msAt(seconds)
    let stamped = true
    for (const m of msgs) if (m.t !== t) stamped = false
    const all = stamped ? msgs : msgs.map((m) => (m.t === t ? m : { ...m, t }))
    for (let i = 0; i < all.length; ) {
      const first = all[i]!
      let ls = this.s.lastStats
      if (first.type === "stats" && this.s.waveCoordination && later(first, ls)) ls = [first.wave, first.step]
      let j = i + 1
      while (j < all.length) {
        const m = all[j]!
        if (m.type === "stats" && this.s.waveCoordination && later(m, ls)) break
        j++
      }
      const r = vllmCoordHandleAll(this.s, i === 0 && j === all.length ? all : all.slice(i, j))
      if ("_tag" in r) return r
      // publishes due before the batch went out with the tables as they were
      this.events(r.outputs, out)
      // a stats message of a later (wave, step) that leaves a snapshot pending has just captured
      // it (only the batch's first message can; a snapshot is only pending while the table changed)
      if (r.state.lastStats !== this.s.lastStats && r.state.stepCounts !== undefined) {
        this.snapTokens = this.tokens.slice()
        this.snapMeasured = this.measured.slice()
      }
      for (let k = i; k < j; k++) {
        const m = all[k]!
        if (m.type !== "stats") continue
        this.tokens[m.engine] = tokens[k]!
        this.measured[m.engine] = seconds
      }
      this.s = r.state
      i = j
    }
    this.nextPublishSeconds = vllmCoordNextPublishMs(this.s) / 1000
    return undefined
  }

  /** Publish what is due at `nextPublishSeconds` (the deadline itself, exactly, in ms). */
  publishDue(out: Array<CoordEvent>): PolicyError | undefined {
    const r = vllmCoordAdvance(this.s, vllmCoordNextPublishMs(this.s))
    if ("_tag" in r) return r
    this.events(r.outputs, out)
    this.s = r.state
    this.nextPublishSeconds = vllmCoordNextPublishMs(this.s) / 1000
    return undefined
  }

  get state(): VllmCoordState {
    return this.s
  }
}
