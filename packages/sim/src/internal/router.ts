/**
 * The router in front of the ranks, with a ledger exactly as stale as the engine's:
 * - sglang: each scheduler writes its snapshot at its step boundary (`observe` = the shared-memory
 *   write); the controller's policy reads them on arrival, at most once per 20 ms (the throttle is
 *   the SGLang policies' own `refresh`, sglang `data_parallel_controller.py`, see
 *   fixtures/reference/sglang/README.md).
 * - vllm: engines send stats `[waiting, running, kv]` with their step counter and wave to the
 *   coordinator at each step boundary, and the wave model's notices reach it as they are emitted;
 *   the coordinator (the pure machine of @loadledger/policies, vllm `DPCoordinatorProc` @00080ee1)
 *   publishes on its own cadence: 100 ms after a change, a 5 s heartbeat, the 50 ms minimum in wave
 *   mode, step-boundary snapshots. Each front end applies a publish with `observe`, and routes its
 *   share of the arrivals with its own policy state and in-flight counts. The rows it is handed
 *   carry the fields `coordinatorRows` names (`SimConfig.coordinatorRows`; absent fields are
 *   absent, never 0).
 */
import type { Policy, PolicyError, PolicyOptions, RankLoad } from "@loadledger/policies"
import type { CoordinatorRows } from "../Config.js"
import type { PublishRecord } from "../Result.js"
import type { VllmCoordMessage } from "../vllm/VllmCoordTypes.js"
import type { VllmWaveMessage } from "../vllm/VllmWaveTypes.js"
import { type CoordEvent, Coordinator } from "./coordinator.js"
import { emptyList } from "./lists.js"
import type { Rank } from "./rank.js"
import type { Req } from "./req.js"

/**
 * What a simulated rank publishes: a `RankLoad` with every field the policies read present (the
 * simulator knows its ranks exactly), handed to `observe` as it is.
 */
type SimLoad = RankLoad & {
  readonly timestamp: number
  readonly numRunningReqs: number
  readonly numWaitingReqs: number
  readonly numTotalTokens: number
  readonly kvCacheUsage: number
}

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

/** A stats message the router rewrites in place. */
type StatsMessage = {
  -readonly [K in keyof Extract<VllmCoordMessage, { type: "stats" }>]: Extract<
    VllmCoordMessage,
    { type: "stats" }
  >[K]
}

interface FrontEnd {
  readonly policy: Policy<unknown>
  state: unknown
}

export class Router {
  private readonly fronts: Array<FrontEnd> = []
  private readonly shm: Array<SimLoad | undefined>
  private readonly coordinator: Coordinator | undefined
  private readonly stepsDone: Array<number>
  private readonly events: Array<CoordEvent> = []
  private readonly msgs: Array<VllmCoordMessage> = []
  private readonly tokens: Array<number> = []
  /** Each rank's stats message, rewritten at each of its step ends (the coordinator keeps none). */
  private readonly stats: Array<StatsMessage>
  /** Every coordinator publish, when recorded (vllm). */
  readonly publishLog: Array<PublishRecord> | undefined
  /** Set when the coordinator rejected a message (a simulator bug, reported as a status). */
  error: PolicyError | undefined = undefined

  constructor(
    make: (o: PolicyOptions) => Policy<unknown>,
    private readonly engine: "sglang" | "vllm",
    dpSize: number,
    frontEnds: number,
    seed: number,
    coordinatorIntervalSeconds: number,
    waveCoordination: boolean,
    private readonly kvPoolTokens: number,
    recordPublishes: boolean,
    private readonly coordinatorRows: CoordinatorRows = "extended"
  ) {
    for (let i = 0; i < frontEnds; i++) {
      const policy = make({ clientCount: frontEnds, clientIndex: i, seed })
      this.fronts.push({ policy, state: policy.init(dpSize) })
    }
    this.shm = new Array<SimLoad | undefined>(dpSize).fill(undefined)
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
    this.publishLog = recordPublishes && engine === "vllm" ? [] : undefined
    if (engine === "vllm") {
      const c = Coordinator.make(dpSize, waveCoordination, coordinatorIntervalSeconds)
      if ("_tag" in c) this.error = c
      else this.coordinator = c
    }
  }

  /** When the coordinator publishes next if nothing reaches it first (vllm; never for sglang). */
  get nextPublish(): number {
    return this.coordinator?.nextPublishSeconds ?? Number.POSITIVE_INFINITY
  }

  /** Place one arrival; the chosen rank, or the policy's error. */
  route(r: Req, now: number): number | PolicyError {
    const f = this.fronts[r.index % this.fronts.length]!
    r.frontEnd = r.index % this.fronts.length
    const res = f.policy.route(f.state, r.routeRequest(), now)
    if (res._tag === "PolicyError") {
      // upstream effects before the failure (e.g. a consumed refresh window) still count
      if (res.state !== undefined) f.state = res.state
      return res
    }
    f.state = res.state
    return res.rank
  }

  finish(r: Req, now: number): void {
    const f = this.fronts[r.frontEnd]!
    f.state = f.policy.finish(f.state, [r.t.requestId], now)
  }

  /**
   * Ranks finished a step at `now`: they publish (sglang) or report to the coordinator (vllm),
   * after the wave model's notices of that step (`notices`, in the order they were sent) and with
   * the ranks' step counter and wave after the step (`waves[i]` for `ranks[i]`; absent without
   * wave coordination: each rank's own step count, wave 0). Returns true when the front ends got a
   * publish (vllm).
   */
  stepEnd(
    ranks: ReadonlyArray<Rank>,
    now: number,
    notices: ReadonlyArray<VllmWaveMessage> = [],
    waves?: ReadonlyArray<{ readonly step: number; readonly wave: number }>
  ): boolean {
    if (this.engine === "sglang") {
      for (const rank of ranks) this.snapshot(rank, now)
      const loads = ranks.map((r) => this.shm[r.id]!)
      for (const f of this.fronts) f.state = f.policy.observe(f.state, loads, now)
      return false
    }
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
      // the rank's stats, as `snapshot` takes them (a vLLM rank's row goes only to the coordinator)
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

  /** An SGLang rank writes its load row (the shared-memory snapshot the controller reads). */
  private snapshot(rank: Rank, now: number): void {
    this.shm[rank.id] = {
      dpRank: rank.id,
      timestamp: now,
      numRunningReqs: rank.numRunning,
      numWaitingReqs: rank.waiting.length,
      numTotalTokens: rank.usedTokens() + rank.waitingUncached,
      kvCacheUsage: rank.usedTokens() / this.kvPoolTokens
    }
  }

  /** The coordinator publishes what is due now (vllm). Returns true when the front ends got one. */
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
      for (const f of this.fronts) f.state = f.policy.observe(f.state, loads, p.atSeconds)
    }
    emptyList(ev)
    return true
  }
}
