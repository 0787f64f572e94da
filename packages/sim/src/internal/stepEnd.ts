/**
 * Completing a group's step at its end time (step 5 of the step rule, see `loop.ts`): the
 * batches' tokens and finishes apply, the vLLM wave model steps, the ranks report their load at
 * the step boundary (after the wave notices of the step), and the load samples are taken.
 */
import type { SimStatus } from "../Result.js"
import type { VllmWaveMessage } from "../vllm/VllmWaveTypes.js"
import { clientSync, coordinatorError, type Group, type Run } from "./run.js"
import { stepWave } from "./waveMachine.js"

const noNotices: ReadonlyArray<VllmWaveMessage> = []

/** Log a completed step (`recordSteps`): only completed steps, a step cut off by the limit ran no tokens. */
const logStep = (run: Run, g: Group): void => {
  run.stepLog?.push({
    startSeconds: g.startSeconds,
    stepSeconds: g.stepSeconds,
    ranks: g.works.map((w, i) => ({
      rank: g.ranks[i]!.id,
      tokens: w.tokens,
      dummyTokens: w.tokens === 0 ? 1 : 0
    }))
  })
}

/**
 * The wave model's step for a vLLM lockstep group (which ranks ran real tokens is read before the
 * batches complete, which hold requests after): its notices, or the status to end with.
 */
const stepWaveModel = (
  run: Run,
  g: Group,
  gi: number,
  executed: ReadonlyArray<boolean>
): ReadonlyArray<VllmWaveMessage> | SimStatus => {
  for (let i = 0; i < g.ranks.length; i++) g.unfinished[i] = g.ranks[i]!.hasWork
  const o = g.waveOut
  const e = stepWave(g.wave!, { localUnfinished: g.unfinished, executed, events: g.stepEvents }, o)
  if (e)
    return {
      _tag: "NoProgress",
      atSeconds: run.t,
      ranks: g.ranks.map((r) => r.id),
      message: `vLLM wave model rejected step ${run.steps} of group ${gi}: ${e.message}`
    }
  return o.eventLog.length === 0 ? o.emitted : [...o.eventLog, ...o.emitted]
}

/** Every `sampleEvery` seconds up to now: each rank's requests (running + waiting). */
const sampleLoads = (run: Run): void => {
  while (run.t >= run.nextSample) {
    run.sampleSeconds.push(run.nextSample)
    for (const r of run.ranks) run.samplePerRank[r.id]!.push(r.numRunning + r.waiting.length)
    run.nextSample += run.sampleEvery
  }
}

/** The step of group `gi` ends at `run.t`. */
export const completeStep = (run: Run, gi: number, g: Group): SimStatus | undefined => {
  logStep(run, g)
  const wave = g.wave
  if (wave)
    for (let i = 0; i < g.ranks.length; i++) {
      const r = g.ranks[i]!
      g.executed[i] = r.extend.length + r.numDecodes > 0
    }
  for (const r of g.ranks) r.complete(run.t, run.itl, run.hooks)
  g.busy = false
  let notices = noNotices
  if (wave) {
    const w = stepWaveModel(run, g, gi, g.executed)
    if ("_tag" in w) return w
    notices = w
  }
  // ranks report at the step boundary, after the wave notices of the step, with their step
  // counter and wave after it
  if (run.router.stepEnd(g.ranks, run.t, notices, wave?.ranks)) clientSync(run)
  const ce = coordinatorError(run)
  if (ce) return ce
  sampleLoads(run)
  return undefined
}
