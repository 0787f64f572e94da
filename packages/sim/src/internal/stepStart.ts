/**
 * Starting a step of a group (steps 1-4 of the step rule, see `loop.ts`): every rank forms its
 * batch (re-formed at once when no rank formed a token, up to `stallSteps` attempts), the forward
 * veto without dummy batches, the expert-parallel early-return fault, and the step model's charge.
 */
import { applyRankFaults } from "../faults/RankFaults.js"
import type { SimStatus } from "../Result.js"
import { IMBALANCE_BUCKETS } from "../Result.js"
import { formBatch } from "./rankBatch.js"
import { blockedReason } from "./rankBlocked.js"
import { type Group, noProgress, type Run } from "./run.js"

/** Whether any rank of the group holds a request. */
const holdsWork = (g: Group): boolean => {
  for (const r of g.ranks) if (r.hasWork) return true
  return false
}

/**
 * Every rank forms its batch into its work row; returns the tokens formed over the group, or the
 * NoProgress status once a rank holding requests has formed `stallSteps` empty batches in a row.
 * A batch that formed no token changed nothing but its rank's queue order (a retraction): the
 * group forms again at the same instant (while it holds work) before calling a rank stuck.
 */
const formBatches = (
  run: Run,
  g: Group,
  veto: boolean,
  throttle: boolean,
  work: boolean
): number | SimStatus => {
  const c = run.c
  const ws = g.works
  for (;;) {
    let total = 0
    let maxEmpty = 0
    for (let i = 0; i < g.ranks.length; i++) {
      const r = g.ranks[i]!
      const w = ws[i]!
      // a batch formed for a vetoed forward is kept (its KV is allocated) until the step runs
      const tokens = veto && r.formed && r.batchTokens > 0 ? r.batchTokens : formBatch(r, run.t, throttle)
      total += tokens
      w.attentionPairs = r.attentionPairs
      w.tokens = tokens
      w.numDecodes = r.numDecodes
      w.extendTokens = r.extendTokens
      w.numRequests = r.numRunning
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
        run,
        // without dummy batches every rank holding requests waits for the stuck ones
        (veto ? g.ranks.filter((r) => r.hasWork) : stuck).map((r) => r.id),
        stuck.map((r) => ({ rank: r.id, cause: blockedReason(r) })),
        ` (an empty batch in ${c.stallSteps} consecutive step attempts${veto ? ", and without dummy batches no rank's forward runs" : ""})`
      )
    }
    if (total > 0 || !work) return total
  }
}

/**
 * The `zeroTokenRanksReturnEarly` fault under expert parallelism: ranks with no token return
 * before the expert all-to-all while the others wait in it, a Deadlock.
 */
const expertDeadlock = (run: Run, g: Group): SimStatus | undefined => {
  const ws = g.works
  const busy = g.ranks.filter((_, i) => ws[i]!.tokens > 0).map((r) => r.id)
  const skipping = g.ranks.filter((_, i) => ws[i]!.tokens === 0).map((r) => r.id)
  if (skipping.length === 0) return undefined
  const t = run.t
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

/** Charge the formed batches with the step model, count the step, and start it. */
const chargeStep = (run: Run, g: Group, total: number): SimStatus | undefined => {
  const ws = g.works
  const t = run.t
  const base = run.c.stepModel(ws)
  const faults = run.c.rankFaults
  const cost = faults.length === 0 ? base : applyRankFaults(base, g.ids, faults, t)
  if (!(cost.stepSeconds > 0) || !Number.isFinite(cost.stepSeconds))
    return {
      _tag: "NoProgress",
      atSeconds: t,
      ranks: g.ranks.map((r) => r.id),
      message: `the step model returned a step of ${cost.stepSeconds}s at t=${t}s`
    }
  run.steps++
  run.rankSteps += g.ranks.length
  run.rankSeconds += cost.stepSeconds * g.ranks.length
  const waits = cost.syncWaitSeconds
  if (run.c.recordSteps === "loads") g.waits = waits ?? cost.ranks.map((r) => r.syncWaitSeconds)
  for (let i = 0; i < ws.length; i++) {
    if (ws[i]!.tokens === 0) run.idleRankSteps++
    const wait = (waits === undefined ? cost.ranks[i]?.syncWaitSeconds : waits[i]) ?? 0
    run.syncWaitSeconds += wait
    const rank = g.ranks[i]!
    rank.lastStepSeconds = cost.stepSeconds
    rank.lastBusySeconds = cost.stepSeconds - wait
    rank.lastDecodes = ws[i]!.numDecodes
  }
  if (total > 0) {
    let b = 0
    while (b < IMBALANCE_BUCKETS.length && cost.tokenImbalanceRatio > IMBALANCE_BUCKETS[b]!) b++
    run.imbalanceCounts[b]!++
  }
  g.busy = true
  run.engine.stepStarted(g.index)
  g.startSeconds = t
  g.stepSeconds = cost.stepSeconds
  g.endSeconds = t + cost.stepSeconds
  return undefined
}

/**
 * Try to start a step of an idle group at `run.t`: a group with no request waits (unless its engine
 * keeps it stepping: a running vLLM wave with dummy batches, until a finish-sync step finds every
 * rank done); else
 * the ranks form their batches, and the step starts unless the forward is vetoed (without dummy
 * batches a lockstep group runs only when every rank has tokens: the formed batches then wait
 * for the next event) or the run ends (stuck ranks, a fault, a bad step model).
 */
export const startStep = (run: Run, g: Group): SimStatus | undefined => {
  const c = run.c
  const work = holdsWork(g)
  if (!work && !(c.dummyBatches && run.engine.keepsStepping(g.index))) {
    run.engine.idle(g.index)
    return undefined
  }
  const veto = !c.dummyBatches && c.lockstep && g.ranks.length > 1
  const throttle = run.engine.throttlePrefills(g.index)
  // vLLM's async scheduling: a step that follows the last one at once was scheduled when that one
  // started (g still holds its times), so a rank with requests running admits only what was queued by then
  const cutoff =
    run.engine.admitCutoffSeconds !== undefined && g.endSeconds === run.t && g.endSeconds > g.startSeconds
      ? run.engine.admitCutoffSeconds(g.index, g.startSeconds)
      : Number.POSITIVE_INFINITY
  for (const r of g.ranks) r.admitCutoffSeconds = r.numRunning > 0 ? cutoff : Number.POSITIVE_INFINITY
  const total = formBatches(run, g, veto, throttle, work)
  if (typeof total !== "number") return total
  if (veto && g.works.some((w) => w.tokens === 0)) {
    // the forward veto: ranks that formed a batch wait in the forward for the empty ranks
    if (Number.isNaN(g.vetoSince)) g.vetoSince = run.t
    return undefined
  }
  if (!Number.isNaN(g.vetoSince)) {
    run.forwardStallSeconds += run.t - g.vetoSince
    g.vetoSince = Number.NaN
  }
  if (c.faults.zeroTokenRanksReturnEarly && c.expertParallel && g.ranks.length > 1 && total > 0) {
    const deadlock = expertDeadlock(run, g)
    if (deadlock) return deadlock
  }
  return chargeStep(run, g, total)
}
