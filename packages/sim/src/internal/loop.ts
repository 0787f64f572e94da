/**
 * The discrete-event loop: arrivals -> router -> ranks; groups of ranks step (all ranks in one
 * lockstep group, or one group per rank); the step model charges each step.
 */
import type { Policy, PolicyOptions } from "@loadledger/policies"
import type { ResolvedSimConfig } from "../Config.js"
import { checkConfig } from "../Config.js"
import type { PublishRecord, SimStatus, StepRecord } from "../Result.js"
import { IMBALANCE_BUCKETS } from "../Result.js"
import type { RankWork } from "../StepModel.js"
import type { TraceRequest } from "../Trace.js"
import { vllmWaveInit } from "../vllm/VllmWave.js"
import type { VllmWaveEvent, VllmWaveMessage } from "../vllm/VllmWaveTypes.js"
import { Rank, Req } from "./rank.js"
import { randomRooms } from "./rng.js"
import { Router } from "./router.js"
import { CountedSamples } from "./stats.js"
import { newOut, stepWave, thaw, type WaveOut, type WaveWork } from "./waveMachine.js"

interface Group {
  readonly ranks: ReadonlyArray<Rank>
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
  pendingEvents: Array<VllmWaveEvent>
  stepEvents: Array<VllmWaveEvent>
  /** Steps since the group last went idle (the prefill cadence counter of non-wave groups). */
  cadenceStep: number
  /** When the current forward veto began (NaN: not vetoed). */
  vetoSince: number
}

export interface RawRun {
  readonly status: SimStatus
  readonly reqs: ReadonlyArray<Req>
  readonly ranks: ReadonlyArray<Rank>
  readonly itl: CountedSamples
  readonly steps: number
  readonly endSeconds: number
  readonly rankSeconds: number
  readonly syncWaitSeconds: number
  readonly forwardStallSeconds: number
  readonly idleRankSteps: number
  readonly rankSteps: number
  readonly imbalanceCounts: ReadonlyArray<number>
  readonly sampleSeconds: ReadonlyArray<number>
  readonly samplePerRank: ReadonlyArray<Array<number>>
  readonly stepLog: ReadonlyArray<StepRecord> | undefined
  readonly publishLog: ReadonlyArray<PublishRecord> | undefined
}

const noNotices: ReadonlyArray<VllmWaveMessage> = []

/** A fresh wave model for a lockstep group of `n` ranks, as a working copy. */
const waveWork = (n: number, profile?: Parameters<typeof vllmWaveInit>[1]): WaveWork => {
  const s = vllmWaveInit(n, profile)
  return thaw(s.profile, s.ranks, s.coord, s.client)
}

export const runLoop = (
  c: ResolvedSimConfig,
  trace: ReadonlyArray<TraceRequest>,
  make: (o: PolicyOptions) => Policy<unknown>,
  onProgress?: (done: number, total: number) => void
): RawRun => {
  const n = c.dpSize
  const rooms = randomRooms(c.seed, trace.length)
  const reqs = trace.map((t, i) => new Req(i, t, t.bootstrapRoom ?? rooms[i]!))
  const ranks = Array.from({ length: n }, (_, i) => new Rank(i, c))
  const groups: Array<Group> = (c.lockstep ? [ranks] : ranks.map((r) => [r])).map((rs) => ({
    ranks: rs,
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
  const groupOf = ranks.map((_, i) => (c.lockstep ? 0 : i))
  const router = new Router(
    make,
    c.engine,
    n,
    c.frontEnds,
    c.seed,
    c.coordinatorIntervalSeconds,
    // vLLM coordinates waves for MoE (lockstep) DP
    groups.some((g) => g.wave !== undefined),
    c.kvPoolTokens,
    c.recordPublishes
  )
  const coordinatorError = (): SimStatus | undefined =>
    router.error === undefined
      ? undefined
      : {
          _tag: "NoProgress",
          atSeconds: t,
          ranks: [],
          message: `vLLM coordinator rejected a message at t=${t}s: ${router.error.message}`
        }
  /** The front ends got a coordinator publish: the wave model's client takes on its wave view. */
  const clientSync = (): void => {
    for (const g of groups) if (g.wave) g.pendingEvents.push({ ev: "client_sync" })
  }
  const itl = new CountedSamples()
  const progress = (): void => {
    done++
    if (onProgress && done % progressEvery === 0) onProgress(done, reqs.length)
  }
  const hooks = {
    onFinish: (r: Req, now: number) => {
      router.finish(r, now)
      progress()
    }
  }
  const imbalanceCounts = new Array<number>(IMBALANCE_BUCKETS.length + 1).fill(0)
  const stepLog: Array<StepRecord> | undefined = c.recordSteps ? [] : undefined
  const span = trace.length > 0 ? trace[trace.length - 1]!.arrivalSeconds : 0
  const sampleEvery = Math.max(span / Math.max(1, c.loadSamples), 1e-3)
  const sampleSeconds: Array<number> = []
  const samplePerRank: Array<Array<number>> = ranks.map(() => [])
  let nextSample = 0
  let steps = 0
  let rankSeconds = 0
  let syncWaitSeconds = 0
  let forwardStallSeconds = 0
  let idleRankSteps = 0
  let rankSteps = 0
  let next = 0
  let done = 0
  let t = 0
  let status: SimStatus = { _tag: "Completed" }
  type MutableWork = { -readonly [K in keyof RankWork]: RankWork[K] }
  // one reusable work row per rank (the step model reads them and keeps nothing)
  const works: Array<Array<MutableWork>> = groups.map((g) =>
    g.ranks.map(() => ({
      attentionPairs: 0,
      tokens: 0,
      numDecodes: 0,
      extendTokens: 0,
      numRequests: 0,
      numExtends: 0,
      kvReadPairs: undefined,
      denseKvReadPairs: undefined
    }))
  )
  const progressEvery = Math.max(1, Math.floor(trace.length / 200))

  /** NoProgress: `held` ranks hold requests that cannot run; `causes` names each empty rank and why. */
  const noProgress = (
    held: ReadonlyArray<number>,
    causes: ReadonlyArray<{ readonly rank: number; readonly cause: string }>,
    why: string
  ): SimStatus => {
    return {
      _tag: "NoProgress",
      atSeconds: t,
      ranks: held,
      causes,
      message: `no progress at t=${t}s: ${causes.map((x) => `rank ${x.rank}: ${x.cause}`).join("; ")}${why}`
    }
  }

  /** The group's step counter for the prefill cadence (vLLM's `step_counter`, reset per wave). */
  const cadenceCounter = (g: Group): number => (g.wave ? g.wave.ranks[0]!.step : g.cadenceStep)

  /**
   * Try to start a step of group `gi` at `t` (the step rule, see `simulate`): every rank forms its
   * batch; a rank that holds requests but forms an empty batch counts an empty attempt (`stallSteps`
   * in a row end the run); with dummy batches the step runs when any rank has tokens (or a vLLM
   * wave is running), the others run a dummy; without them a lockstep group runs only when every
   * rank has tokens, else the forward is vetoed and the formed batches wait for the next event.
   */
  const startStep = (gi: number, g: Group): SimStatus | undefined => {
    let work = false
    for (const r of g.ranks) if (r.hasWork) work = true
    // no work: SGLang groups and non-lockstep ranks wait; a vLLM wave keeps running dummy batches
    // until a finish-sync step finds every rank done
    if (!work && !(c.dummyBatches && g.wave?.ranks.some((r) => r.running))) {
      g.cadenceStep = 0
      return undefined
    }
    const veto = !c.dummyBatches && c.lockstep && g.ranks.length > 1
    const throttle = c.prefillIntervalSteps > 1 && cadenceCounter(g) % c.prefillIntervalSteps !== 0
    const ws = works[gi]!
    let total = 0
    let empty = 0
    // a batch that formed no token changed nothing but its rank's queue order (a retraction): form
    // again at the same instant, at most stallSteps times, before calling the rank stuck
    for (;;) {
      total = 0
      empty = 0
      let maxEmpty = 0
      for (let i = 0; i < g.ranks.length; i++) {
        const r = g.ranks[i]!
        const w = ws[i]!
        // a batch formed for a vetoed forward is kept (its KV is allocated) until the step runs
        const tokens = veto && r.formed && r.batchTokens > 0 ? r.batchTokens : r.form(t, throttle)
        total += tokens
        if (tokens === 0) empty++
        w.attentionPairs = r.attentionPairs
        w.tokens = tokens
        w.numDecodes = r.numDecodes
        w.extendTokens = r.extendTokens
        w.numRequests = r.running.length
        w.numExtends = r.extend.length
        if (c.sparseTopK !== undefined) {
          w.kvReadPairs = r.kvReadPairs
          w.denseKvReadPairs = r.denseKvReadPairs
        }
        r.emptyAttempts = tokens === 0 && r.hasWork ? r.emptyAttempts + 1 : 0
        if (r.emptyAttempts > maxEmpty) maxEmpty = r.emptyAttempts
      }
      if (maxEmpty >= c.stallSteps) {
        const stuck = g.ranks.filter((r) => r.emptyAttempts >= c.stallSteps)
        return noProgress(
          // without dummy batches every rank holding requests waits for the stuck ones
          (veto ? g.ranks.filter((r) => r.hasWork) : stuck).map((r) => r.id),
          stuck.map((r) => ({ rank: r.id, cause: r.blockedReason() })),
          ` (an empty batch in ${c.stallSteps} consecutive step attempts${veto ? ", and without dummy batches no rank's forward runs" : ""})`
        )
      }
      if (total > 0 || !work) break
    }
    if (veto && empty > 0) {
      // the forward veto: ranks that formed a batch wait in the forward for the empty ranks
      if (Number.isNaN(g.vetoSince)) g.vetoSince = t
      return undefined
    }
    if (!Number.isNaN(g.vetoSince)) {
      forwardStallSeconds += t - g.vetoSince
      g.vetoSince = Number.NaN
    }
    if (c.faults.zeroTokenRanksReturnEarly && c.expertParallel && g.ranks.length > 1 && total > 0) {
      const busy = g.ranks.filter((_, i) => ws[i]!.tokens > 0).map((r) => r.id)
      const skipping = g.ranks.filter((_, i) => ws[i]!.tokens === 0).map((r) => r.id)
      if (skipping.length > 0)
        return {
          _tag: "Deadlock",
          atSeconds: t,
          busyRanks: busy,
          skippingRanks: skipping,
          message:
            `deadlock at t=${t}s: ranks ${busy.join(",")} wait in the expert all-to-all while ` +
            `ranks ${skipping.join(",")} returned early with no tokens`
        }
    }
    const cost = c.stepModel(ws)
    if (!(cost.stepSeconds > 0) || !Number.isFinite(cost.stepSeconds))
      return {
        _tag: "NoProgress",
        atSeconds: t,
        ranks: g.ranks.map((r) => r.id),
        message: `the step model returned a step of ${cost.stepSeconds}s at t=${t}s`
      }
    steps++
    rankSteps += g.ranks.length
    rankSeconds += cost.stepSeconds * g.ranks.length
    const waits = cost.syncWaitSeconds
    for (let i = 0; i < ws.length; i++) {
      if (ws[i]!.tokens === 0) idleRankSteps++
      syncWaitSeconds += (waits === undefined ? cost.ranks[i]?.syncWaitSeconds : waits[i]) ?? 0
    }
    if (total > 0) {
      let b = 0
      while (b < IMBALANCE_BUCKETS.length && cost.tokenImbalanceRatio > IMBALANCE_BUCKETS[b]!) b++
      imbalanceCounts[b]!++
    }
    g.busy = true
    g.cadenceStep++
    g.stepEvents = g.pendingEvents
    g.pendingEvents = []
    g.startSeconds = t
    g.stepSeconds = cost.stepSeconds
    g.endSeconds = t + cost.stepSeconds
    return undefined
  }

  const completeStep = (gi: number, g: Group): SimStatus | undefined => {
    // only completed steps are logged: a step cut off by maxSimulatedSeconds ran no tokens
    stepLog?.push({
      startSeconds: g.startSeconds,
      stepSeconds: g.stepSeconds,
      ranks: works[gi]!.map((w, i) => ({
        rank: g.ranks[i]!.id,
        tokens: w.tokens,
        dummyTokens: w.tokens === 0 ? 1 : 0
      }))
    })
    const wave = g.wave
    // which ranks ran real tokens (the wave model's `executed`), read before the batches complete
    if (wave)
      for (let i = 0; i < g.ranks.length; i++) {
        const r = g.ranks[i]!
        g.executed[i] = r.extend.length + r.numDecodes > 0
      }
    for (const r of g.ranks) r.complete(t, itl, hooks)
    g.busy = false
    let notices: ReadonlyArray<VllmWaveMessage> = noNotices
    if (wave) {
      for (let i = 0; i < g.ranks.length; i++) g.unfinished[i] = g.ranks[i]!.hasWork
      const o = g.waveOut
      const e = stepWave(
        wave,
        { localUnfinished: g.unfinished, executed: g.executed, events: g.stepEvents },
        o
      )
      if (e)
        return {
          _tag: "NoProgress",
          atSeconds: t,
          ranks: g.ranks.map((r) => r.id),
          message: `vLLM wave model rejected step ${steps} of group ${gi}: ${e.message}`
        }
      notices = o.eventLog.length === 0 ? o.emitted : [...o.eventLog, ...o.emitted]
    }
    // ranks report at the step boundary, after the wave notices of the step, with their step
    // counter and wave after it
    if (router.stepEnd(g.ranks, t, notices, wave?.ranks)) clientSync()
    const ce = coordinatorError()
    if (ce) return ce
    while (t >= nextSample) {
      sampleSeconds.push(nextSample)
      for (const r of ranks) samplePerRank[r.id]!.push(r.running.length + r.waiting.length)
      nextSample += sampleEvery
    }
    return undefined
  }

  const arrive = (r: Req): void => {
    const size = r.t.inputLength + r.outputTarget
    if (size > c.maxRequestTokens) {
      r.rejected =
        c.maxRequestTokens === c.kvPoolTokens
          ? `needs ${size} tokens of KV, the pool holds ${c.kvPoolTokens}`
          : `needs ${size} tokens, the request limit (maxRequestTokens) is ${c.maxRequestTokens}`
      progress()
      return
    }
    const rank = router.route(r, t)
    if (typeof rank !== "number") {
      r.rejected = `policy error (${rank.reason}): ${rank.message}`
      progress()
      return
    }
    if (!Number.isInteger(rank) || rank < 0 || rank >= n) {
      r.rejected = `policy chose rank ${rank}, outside 0..${n - 1}`
      progress()
      return
    }
    ranks[rank]!.routed++
    ranks[rank]!.enqueue(r)
    const g = groups[groupOf[rank]!]!
    if (g.wave) g.pendingEvents.push({ ev: "client_request", rank })
  }

  const invalid = checkConfig(c)
  status = invalid ? { _tag: "InvalidConfig", ...invalid } : (coordinatorError() ?? status)
  outer: while (status._tag === "Completed") {
    for (let gi = 0; gi < groups.length; gi++) {
      const g = groups[gi]!
      if (g.busy) continue
      const s = startStep(gi, g)
      if (s) {
        status = s
        break outer
      }
    }
    let tStep = Number.POSITIVE_INFINITY
    for (const g of groups) if (g.busy && g.endSeconds < tStep) tStep = g.endSeconds
    const tArr = next < reqs.length ? reqs[next]!.t.arrivalSeconds : Number.POSITIVE_INFINITY
    // coordinator publishes (heartbeats included) matter only while something is left to happen
    if (tStep === Number.POSITIVE_INFINITY && tArr === Number.POSITIVE_INFINITY) {
      // a vetoed forward with no event left to fill its empty ranks never runs
      for (const g of groups)
        if (!Number.isNaN(g.vetoSince) && g.ranks.some((r) => r.hasWork)) {
          const empty = g.ranks.filter((r) => !r.formed || r.batchTokens === 0)
          const waiting = g.ranks.filter((r) => r.hasWork && !empty.includes(r)).map((r) => r.id)
          status = noProgress(
            g.ranks.filter((r) => r.hasWork).map((r) => r.id),
            empty.map((r) => ({ rank: r.id, cause: r.hasWork ? r.blockedReason() : "no request to run" })),
            ` (without dummy batches the forward of ranks ${waiting.join(",")} waits for the empty ranks, and no request is left to arrive)`
          )
          forwardStallSeconds += t - g.vetoSince
          g.vetoSince = Number.NaN
          break
        }
      break
    }
    const tPub = router.nextPublish
    const tNext = Math.min(tStep, tArr, tPub)
    if (tNext > c.maxSimulatedSeconds) {
      // only a limit that leaves requests unfinished is a TimeLimit (trailing wave dummy steps or
      // coordinator publishes after the last request are not)
      if (next < reqs.length || ranks.some((r) => r.hasWork)) {
        status = { _tag: "TimeLimit", atSeconds: c.maxSimulatedSeconds }
        t = c.maxSimulatedSeconds
      }
      for (const g of groups)
        if (!Number.isNaN(g.vetoSince)) forwardStallSeconds += Math.max(0, t - g.vetoSince)
      break
    }
    t = tNext
    if (tStep === tNext) {
      for (let gi = 0; gi < groups.length; gi++) {
        const g = groups[gi]!
        if (!g.busy || g.endSeconds !== t) continue
        const s = completeStep(gi, g)
        if (s) {
          status = s
          break outer
        }
      }
    } else if (tPub === tNext) {
      if (router.publish()) clientSync()
      const ce = coordinatorError()
      if (ce) {
        status = ce
        break
      }
    } else while (next < reqs.length && reqs[next]!.t.arrivalSeconds === t) arrive(reqs[next++]!)
  }
  onProgress?.(done, reqs.length)
  for (const r of ranks) r.settle()
  return {
    status,
    reqs,
    ranks,
    itl,
    steps,
    endSeconds: t,
    rankSeconds,
    syncWaitSeconds,
    forwardStallSeconds,
    idleRankSteps,
    rankSteps,
    imbalanceCounts,
    sampleSeconds,
    samplePerRank,
    stepLog,
    publishLog: router.publishLog
  }
}
