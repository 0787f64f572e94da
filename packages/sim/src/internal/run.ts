/**
 * One simulation run's state, shared by the loop's named steps (`loop.ts`, `stepStart.ts`,
 * `stepEnd.ts`, `events.ts`): the requests, ranks, lockstep groups, router, clock, counters and
 * samples. Mutable on purpose and private to one `simulate` call (as `Rank` is): each step is a
 * function of this record that advances it.
 */
import { type Policy, type PolicyOptions, stepCostFrom } from "@loadledger/policies"
import type { ResolvedSimConfig } from "../Config.js"
import type { SimStatus, StepRecord } from "../Result.js"
import { IMBALANCE_BUCKETS } from "../Result.js"
import type { RankWork } from "../StepModel.js"
import type { TraceRequest } from "../Trace.js"
import { vllmWaveInit } from "../vllm/VllmWave.js"
import type { VllmWaveEvent } from "../vllm/VllmWaveTypes.js"
import { type Hooks, Rank } from "./rank.js"
import { Req } from "./req.js"
import { randomRooms } from "./rng.js"
import { Router } from "./router.js"
import { SloCount } from "./sloCount.js"
import { CountedSamples } from "./stats.js"
import { newOut, thaw, type WaveOut, type WaveWork } from "./waveMachine.js"

/** A step model's input row, reused across steps (the step model reads it and keeps nothing). */
export type MutableWork = { -readonly [K in keyof RankWork]: RankWork[K] }

/** Ranks that step together: all of them under `lockstep`, else each rank alone. */
export interface Group {
  readonly ranks: ReadonlyArray<Rank>
  /** One work row per rank of the group, reused every step. */
  readonly works: ReadonlyArray<MutableWork>
  busy: boolean
  startSeconds: number
  stepSeconds: number
  endSeconds: number
  /** The vLLM wave model's working copy (vLLM lockstep groups of more than one rank). */
  readonly wave: WaveWork | undefined
  /** What the wave model's last step did (reused). */
  readonly waveOut: WaveOut
  /** Per rank: ran real tokens in the step / holds requests after it (the wave model's inputs, reused). */
  readonly executed: Array<boolean>
  readonly unfinished: Array<boolean>
  /** Wave events since the step in flight started, and those of the step in flight. */
  pendingEvents: Array<VllmWaveEvent>
  stepEvents: Array<VllmWaveEvent>
  /** Steps since the group last went idle (the prefill cadence counter of non-wave groups). */
  cadenceStep: number
  /** When the current forward veto began (NaN: not vetoed). */
  vetoSince: number
}

export interface Run {
  readonly c: ResolvedSimConfig
  readonly reqs: ReadonlyArray<Req>
  readonly ranks: ReadonlyArray<Rank>
  readonly groups: ReadonlyArray<Group>
  /** The group of each rank. */
  readonly groupOf: ReadonlyArray<number>
  readonly router: Router
  readonly itl: CountedSamples
  readonly hooks: Hooks
  /** Per-request SLO judgement (with `c.slo`). */
  readonly slo: SloCount | undefined
  readonly imbalanceCounts: Array<number>
  readonly stepLog: Array<StepRecord> | undefined
  readonly sampleEvery: number
  readonly sampleSeconds: Array<number>
  readonly samplePerRank: ReadonlyArray<Array<number>>
  readonly onProgress: ((done: number, total: number) => void) | undefined
  readonly progressEvery: number
  /** Simulated time (seconds). */
  t: number
  /** The next arrival (index into `reqs`). */
  next: number
  /** Requests finished or rejected. */
  done: number
  nextSample: number
  steps: number
  rankSeconds: number
  syncWaitSeconds: number
  forwardStallSeconds: number
  idleRankSteps: number
  rankSteps: number
}

/** A fresh wave model for a lockstep group of `n` ranks, as a working copy. */
const waveWork = (n: number, profile: ResolvedSimConfig["vllmWaveProfile"]): WaveWork => {
  const s = vllmWaveInit(n, profile)
  return thaw(s.profile, s.ranks, s.coord, s.client)
}

const newWork = (): MutableWork => ({
  attentionPairs: 0,
  tokens: 0,
  numDecodes: 0,
  extendTokens: 0,
  numRequests: 0,
  numExtends: 0,
  kvReadPairs: undefined,
  denseKvReadPairs: undefined
})

/** The run at t = 0: requests (with their bootstrap rooms), idle ranks and groups, the router. */
export const newRun = (
  c: ResolvedSimConfig,
  trace: ReadonlyArray<TraceRequest>,
  make: (o: PolicyOptions) => Policy<unknown>,
  onProgress: ((done: number, total: number) => void) | undefined
): Run => {
  const n = c.dpSize
  const rooms = randomRooms(c.seed, trace.length)
  const reqs = trace.map((t, i) => new Req(i, t, t.bootstrapRoom ?? rooms[i]!))
  const ranks = Array.from({ length: n }, (_, i) => new Rank(i, c))
  const groups: Array<Group> = (c.lockstep ? [ranks] : ranks.map((r) => [r])).map((rs) => ({
    ranks: rs,
    works: rs.map(newWork),
    busy: false,
    startSeconds: 0,
    stepSeconds: 0,
    endSeconds: 0,
    wave:
      c.engine === "vllm" && c.lockstep && rs.length > 1 ? waveWork(rs.length, c.vllmWaveProfile) : undefined,
    waveOut: newOut(),
    executed: rs.map(() => false),
    unfinished: rs.map(() => false),
    pendingEvents: [],
    stepEvents: [],
    cadenceStep: 0,
    vetoSince: Number.NaN
  }))
  // the engines' running-request cap and step cost, as a router's operator configures them (the
  // cost fitted from this run's step model by probing it, as `stepCostFrom` documents)
  const stepCost = stepCostFrom(
    (probe) => c.stepModel(probe.map((r) => ({ ...r, numRequests: r.numDecodes + r.numExtends }))),
    { dpSize: n, chunkTokens: c.chunkedPrefillTokens }
  )
  const router = new Router(
    (o) => make({ ...o, maxRunningRequests: c.maxRunningRequests, stepCost }),
    c.engine,
    n,
    c.frontEnds,
    c.seed,
    c.coordinatorIntervalSeconds,
    // vLLM coordinates waves for MoE (lockstep) DP
    groups.some((g) => g.wave !== undefined),
    c.kvPoolTokens,
    c.recordPublishes,
    c.coordinatorRows
  )
  const span = trace.length > 0 ? trace[trace.length - 1]!.arrivalSeconds : 0
  const run: Run = {
    c,
    reqs,
    ranks,
    groups,
    groupOf: ranks.map((_, i) => (c.lockstep ? 0 : i)),
    router,
    itl: new CountedSamples(),
    hooks: {
      onFinish: (r: Req, now: number) => {
        router.finish(r, now)
        progress(run, r)
      }
    },
    slo: c.slo === undefined ? undefined : new SloCount(c.slo, trace.length),
    imbalanceCounts: new Array<number>(IMBALANCE_BUCKETS.length + 1).fill(0),
    stepLog: c.recordSteps ? [] : undefined,
    sampleEvery: Math.max(span / Math.max(1, c.loadSamples), 1e-3),
    sampleSeconds: [],
    samplePerRank: ranks.map(() => []),
    onProgress,
    progressEvery: Math.max(1, Math.floor(trace.length / 200)),
    t: 0,
    next: 0,
    done: 0,
    nextSample: 0,
    steps: 0,
    rankSeconds: 0,
    syncWaitSeconds: 0,
    forwardStallSeconds: 0,
    idleRankSteps: 0,
    rankSteps: 0
  }
  return run
}

/** A request finished or was rejected: count it (and judge it against the SLO), and report progress every `progressEvery`. */
export const progress = (run: Run, r: Req): void => {
  run.done++
  run.slo?.judge(r)
  if (run.onProgress && run.done % run.progressEvery === 0) run.onProgress(run.done, run.reqs.length)
}

const clientSyncEvent: VllmWaveEvent = { ev: "client_sync" }

/** The front ends got a coordinator publish: the wave model's client takes on its wave view. */
export const clientSync = (run: Run): void => {
  for (const g of run.groups) if (g.wave) g.pendingEvents.push(clientSyncEvent)
}

/** The status to end with when the vLLM coordinator rejected a message (a simulator bug). */
export const coordinatorError = (run: Run): SimStatus | undefined =>
  run.router.error === undefined
    ? undefined
    : {
        _tag: "NoProgress",
        atSeconds: run.t,
        ranks: [],
        message: `vLLM coordinator rejected a message at t=${run.t}s: ${run.router.error.message}`
      }

/** NoProgress: `held` ranks hold requests that cannot run; `causes` names each empty rank and why. */
export const noProgress = (
  run: Run,
  held: ReadonlyArray<number>,
  causes: ReadonlyArray<{ readonly rank: number; readonly cause: string }>,
  why: string
): SimStatus => ({
  _tag: "NoProgress",
  atSeconds: run.t,
  ranks: held,
  causes,
  message: `no progress at t=${run.t}s: ${causes.map((x) => `rank ${x.rank}: ${x.cause}`).join("; ")}${why}`
})
