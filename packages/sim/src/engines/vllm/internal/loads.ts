/**
 * The vLLM engine's load path: engines send stats `[waiting, running, kv]` with their step counter
 * and wave to the DP coordinator at each step boundary, and the wave model's notices reach it as
 * they are emitted; the coordinator (the machine behind `vllmCoordHandle` / `vllmCoordAdvance`,
 * vllm `DPCoordinatorProc` @00080ee1) publishes on its own cadence: 100 ms after a change, a 5 s
 * heartbeat, the 50 ms minimum in wave mode, step-boundary snapshots. Each front end applies a
 * publish with `observe` (its own policy state and in-flight counts). The rows it is handed carry
 * the fields `coordinatorRows` names (absent fields are absent, never 0).
 */
import type { PolicyError, RankLoad } from "@loadledger/policies"
import { emptyList } from "../../../internal/lists.js"
import type { Rank } from "../../../internal/rank.js"
import type { PublishRecord } from "../../../Result.js"
import type { CoordinatorRows } from "../options.js"
import type { VllmCoordMessage } from "../VllmCoordTypes.js"
import type { VllmWaveMessage } from "../VllmWaveTypes.js"
import { type CoordEvent, Coordinator } from "./coordinator.js"

/**
 * The fields of a coordinator row (`[waiting, running, KV usage]`, plus the engine's token count) a
 * front end receives under `mode`: `extended` all four, `vllm` the row as vLLM publishes it,
 * `vllm-counts` the two counts. Absent fields are absent, never 0.
 */
const publishedFields = (
  mode: CoordinatorRows,
  r: readonly [number, number, number | undefined],
  tokens: number
) =>
  mode === "extended"
    ? { numWaitingReqs: r[0], numRunningReqs: r[1], kvCacheUsage: r[2], numTotalTokens: tokens }
    : mode === "vllm"
      ? { numWaitingReqs: r[0], numRunningReqs: r[1], kvCacheUsage: r[2] }
      : { numWaitingReqs: r[0], numRunningReqs: r[1] }

/** A stats message rewritten in place. */
type StatsMessage = {
  -readonly [K in keyof Extract<VllmCoordMessage, { type: "stats" }>]: Extract<
    VllmCoordMessage,
    { type: "stats" }
  >[K]
}

/** The coordinator between the ranks and the front ends, for one run. */
export class CoordinatorLoads {
  private readonly coordinator: Coordinator | undefined
  private readonly stepsDone: Array<number>
  private readonly events: Array<CoordEvent> = []
  private readonly msgs: Array<VllmCoordMessage> = []
  private readonly tokens: Array<number> = []
  /** Each rank's stats message, rewritten at each of its step ends (the coordinator keeps none). */
  private readonly stats: Array<StatsMessage>
  /** Every coordinator publish, when recorded. */
  readonly publishLog: Array<PublishRecord> | undefined
  /** Set when the coordinator rejected a message (a simulator bug, reported as a status). */
  error: PolicyError | undefined = undefined

  constructor(
    dpSize: number,
    coordinatorIntervalSeconds: number,
    waveCoordination: boolean,
    private readonly kvPoolTokens: number,
    recordPublishes: boolean,
    private readonly coordinatorRows: CoordinatorRows,
    private readonly observe: (loads: ReadonlyArray<RankLoad>, now: number) => void
  ) {
    this.stepsDone = new Array<number>(dpSize).fill(0)
    this.stats = Array.from({ length: dpSize }, (_, engine) => ({
      t: 0,
      type: "stats" as const,
      engine,
      waiting: 0,
      running: 0,
      kv: 0,
      step: 0,
      wave: 0
    }))
    this.publishLog = recordPublishes ? [] : undefined
    const c = Coordinator.make(dpSize, waveCoordination, coordinatorIntervalSeconds)
    if ("_tag" in c) this.error = c
    else this.coordinator = c
  }

  /** When the coordinator publishes next if nothing reaches it first. */
  get nextPublish(): number {
    return this.coordinator?.nextPublishSeconds ?? Number.POSITIVE_INFINITY
  }

  /**
   * Ranks finished a step at `now`: they report to the coordinator, after the wave model's notices
   * of that step (`notices`, in the order they were sent) and with the ranks' step counter and wave
   * after the step (`waves[i]` for `ranks[i]`; absent without wave coordination: each rank's own
   * step count, wave 0). Returns true when the front ends got a publish.
   */
  stepEnd(
    ranks: ReadonlyArray<Rank>,
    now: number,
    notices: ReadonlyArray<VllmWaveMessage>,
    waves: ReadonlyArray<{ readonly step: number; readonly wave: number }> | undefined
  ): boolean {
    const c = this.coordinator
    if (c === undefined) return false
    // every message reaches the coordinator at `now`, on its clock
    const t = c.msAt(now)
    // the coordinator reads the lists and messages and keeps none of them: all reused
    const msgs = this.msgs
    const tokens = this.tokens
    emptyList(msgs)
    emptyList(tokens)
    for (const m of notices) {
      msgs.push(
        m.kind === "first_req"
          ? { t, type: "first_req", rank: m.rank, wave: m.wave }
          : { t, type: m.kind, engine: m.rank, wave: m.wave }
      )
      tokens.push(0)
    }
    for (let i = 0; i < ranks.length; i++) {
      const rank = ranks[i]!
      this.stepsDone[rank.id]!++
      const ws = waves?.[i]
      // the rank's stats (a vLLM rank's row goes only to the coordinator)
      const used = rank.usedTokens()
      const m = this.stats[rank.id]!
      m.t = t
      m.waiting = rank.waiting.length
      m.running = rank.numRunning
      m.kv = used / this.kvPoolTokens
      m.step = ws === undefined ? this.stepsDone[rank.id]! : ws.step
      m.wave = ws === undefined ? 0 : ws.wave
      msgs.push(m)
      tokens.push(used + rank.waitingUncached)
    }
    const e = c.sendAll(now, msgs, tokens, this.events)
    if (e) this.error ??= e
    return this.deliver()
  }

  /** The coordinator publishes what is due now. Returns true when the front ends got one. */
  publish(): boolean {
    const c = this.coordinator
    if (c === undefined) return false
    const e = c.publishDue(this.events)
    if (e) this.error ??= e
    return this.deliver()
  }

  /** Hand the coordinator's publishes to every front end (`observe`), in order. */
  private deliver(): boolean {
    const ev = this.events
    if (ev.length === 0) return false
    const mode = this.coordinatorRows
    for (const p of ev) {
      this.publishLog?.push(
        p.kind === "wave_state"
          ? { atSeconds: p.atSeconds, kind: p.kind, wave: p.wave, running: p.running }
          : {
              atSeconds: p.atSeconds,
              kind: p.kind,
              wave: p.wave,
              running: p.running,
              rows: p.rows.map((r, i) => ({
                measuredSeconds: p.measuredSeconds[i]!,
                ...publishedFields(mode, r, p.tokens[i]!)
              }))
            }
      )
      if (p.kind === "wave_state") continue
      // extended rows are stamped with the time their stats were taken (a rank that never reported
      // is the coordinator's initial zero row, as of the publish); vLLM's carry no time (the front
      // end knows only `now`)
      const loads: Array<RankLoad> = p.rows.map((r, i) => ({
        dpRank: i,
        ...(mode === "extended"
          ? { timestamp: Number.isNaN(p.measuredSeconds[i]!) ? p.atSeconds : p.measuredSeconds[i]! }
          : {}),
        ...publishedFields(mode, r, p.tokens[i]!)
      }))
      this.observe(loads, p.atSeconds)
    }
    emptyList(ev)
    return true
  }
}
