/**
 * vLLM's DP coordinator inside the simulation, driven step by step through the machine behind the
 * pure `vllmCoordHandle` / `vllmCoordAdvance` (vllm `DPCoordinatorProc` @00080ee1):
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
import { emptyList } from "../../../internal/lists.js"
import { vllmCoordInit, vllmCoordNextPublishMs } from "../VllmCoordinator.js"
import type { VllmCoordMessage, VllmCoordOutput } from "../VllmCoordTypes.js"
import { apply, publishDue, type Work, work } from "./coordMachine.js"

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

/**
 * The coordinator inside one run. It keeps the machine's working copy for the whole run and hands
 * it each message in place (`coordMachine.ts`'s `apply` and `publishDue`, the code behind the pure
 * `vllmCoordHandleAll` / `vllmCoordAdvance`), instead of copying the state in and out per call.
 */
export class Coordinator {
  private readonly w: Work
  private readonly tokens: Array<number>
  private readonly measured: Array<number>
  private snapTokens: ReadonlyArray<number> | undefined = undefined
  private snapMeasured: ReadonlyArray<number> | undefined = undefined
  /** What the machine sent during one call (reused). */
  private readonly outputs: Array<VllmCoordOutput> = []
  /** The next publish (seconds) if no message comes first. */
  nextPublishSeconds: number

  private constructor(w: Work) {
    this.w = w
    this.tokens = new Array<number>(w.engineCount).fill(0)
    this.measured = new Array<number>(w.engineCount).fill(Number.NaN)
    this.nextPublishSeconds = vllmCoordNextPublishMs(w) / 1000
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
    return "_tag" in s ? s : new Coordinator(work(s))
  }

  /** `seconds` on the coordinator's clock (ms), never before what it has already reached. */
  msAt(seconds: number): number {
    // (float rounding between s and ms)
    return Math.max(seconds * 1000, this.w.horizonMs)
  }

  private events(out: Array<CoordEvent>): void {
    for (const o of this.outputs) {
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
    emptyList(this.outputs)
  }

  /**
   * Messages that all reach the coordinator at `seconds`, in order (`tokens[i]`: the rank's
   * `numTotalTokens` that goes with stats message `i`); what the coordinator sent meanwhile is
   * appended to `out`. Each message is handed over in turn: the publishes due before it go out
   * with the token mirror as it was; a stats message of a later (wave, step) that leaves a step
   * snapshot pending captures the mirror with the snapshot; then the message's tokens and time
   * enter the mirror. An error names the message (`messages[i]`).
   */
  sendAll(
    seconds: number,
    msgs: ReadonlyArray<VllmCoordMessage>,
    tokens: ReadonlyArray<number>,
    out: Array<CoordEvent>
  ): PolicyError | undefined {
    const w = this.w
    const t = this.msAt(seconds)
    for (let k = 0; k < msgs.length; k++) {
      const m0 = msgs[k]!
      const m = m0.t === t ? m0 : { ...m0, t }
      const lastStats = w.lastStats
      const err = apply(w, m, this.outputs)
      if (err) return { ...err, field: `messages[${k}].${err.field ?? "t"}` }
      this.events(out)
      // a snapshot is only pending while the table changed, and only a later (wave, step) captures it
      if (w.lastStats !== lastStats && w.stepCounts !== undefined) {
        this.snapTokens = this.tokens.slice()
        this.snapMeasured = this.measured.slice()
      }
      if (m.type === "stats") {
        this.tokens[m.engine] = tokens[k]!
        this.measured[m.engine] = seconds
      }
    }
    this.nextPublishSeconds = vllmCoordNextPublishMs(w) / 1000
    return undefined
  }

  /** Publish what is due at `nextPublishSeconds` (the deadline itself, exactly, in ms). */
  publishDue(out: Array<CoordEvent>): PolicyError | undefined {
    const w = this.w
    const until = vllmCoordNextPublishMs(w)
    publishDue(w, until, false, this.outputs)
    if (until > w.horizonMs) w.horizonMs = until
    this.events(out)
    this.nextPublishSeconds = vllmCoordNextPublishMs(w) / 1000
    return undefined
  }
}
