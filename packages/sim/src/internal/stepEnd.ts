/**
 * Completing a group's step at its end time (step 5 of the step rule, see `loop.ts`): the
 * batches' tokens and finishes apply, the engine's group protocol steps and the ranks publish or
 * report their load at the step boundary (`EngineRun.stepEnding` / `stepEnded`), and the load
 * samples are taken.
 */
import type { SimStatus } from "../Result.js"
import { completeRank } from "./rankEnd.js"
import { engineFault, type Group, type Run } from "./run.js"

/** Log a completed step (`recordSteps`): only completed steps, a step cut off by the limit ran no tokens. */
const logStep = (run: Run, g: Group): void => {
  if (run.stepLog === undefined) return
  const loads = run.c.recordSteps === "loads"
  run.stepLog.push({
    startSeconds: g.startSeconds,
    stepSeconds: g.stepSeconds,
    ranks: g.works.map((w, i) => {
      const r = g.ranks[i]!
      const row = { rank: r.id, tokens: w.tokens, dummyTokens: w.tokens === 0 ? 1 : 0 }
      return loads
        ? {
            ...row,
            numDecodes: w.numDecodes,
            numRunningReqs: w.numRequests,
            numWaitingReqs: r.waiting.length,
            attentionPairs: w.attentionPairs,
            numUsedTokens: r.kvOwned,
            cachedPromptTokens: r.cachedPromptTokens,
            admittedPromptTokens: r.admittedPromptTokens,
            syncWaitSeconds: g.waits?.[i] ?? 0
          }
        : row
    })
  })
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
  run.engine.stepEnding(gi)
  for (const r of g.ranks) completeRank(r, run.t, run.itl, run.hooks)
  g.busy = false
  const fault = engineFault(run, run.engine.stepEnded(gi, run.t, run.steps))
  if (fault) return fault
  sampleLoads(run)
  return undefined
}
