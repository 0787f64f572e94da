/**
 * How a run ends when no event is left, or the next one is past the time limit (`loop.ts`'s
 * step 2).
 */
import type { SimStatus } from "../Result.js"
import type { Arrivals } from "./arrivals.js"
import { blockedReason } from "./rankBlocked.js"
import { noProgress, type Run } from "./run.js"

/**
 * No step in flight and no arrival left: the run is over. Coordinator publishes (heartbeats
 * included) matter only while something is left to happen. A vetoed forward with no event left
 * to fill its empty ranks never runs: NoProgress, naming them.
 */
export const endWithoutEvents = (run: Run): SimStatus | undefined => {
  for (const g of run.groups)
    if (!Number.isNaN(g.vetoSince) && g.ranks.some((r) => r.hasWork)) {
      const empty = g.ranks.filter((r) => !r.formed || r.batchTokens === 0)
      const waiting = g.ranks.filter((r) => r.hasWork && !empty.includes(r)).map((r) => r.id)
      const status = noProgress(
        run,
        g.ranks.filter((r) => r.hasWork).map((r) => r.id),
        empty.map((r) => ({ rank: r.id, cause: r.hasWork ? blockedReason(r) : "no request to run" })),
        ` (without dummy batches the forward of ranks ${waiting.join(",")} waits for the empty ranks, and no request is left to arrive)`
      )
      run.forwardStallSeconds += run.t - g.vetoSince
      g.vetoSince = Number.NaN
      return status
    }
  return undefined
}

/**
 * The next event is past `maxSimulatedSeconds`. Only a limit that leaves requests unfinished is
 * a TimeLimit (trailing wave dummy steps or coordinator publishes after the last request are
 * not); a vetoed forward's wait counts up to the end.
 */
export const endAtTimeLimit = (run: Run, arrivals: Arrivals): SimStatus | undefined => {
  const c = run.c
  let status: SimStatus | undefined
  if (arrivals.peek() !== undefined || run.ranks.some((r) => r.hasWork)) {
    status = { _tag: "TimeLimit", atSeconds: c.maxSimulatedSeconds }
    run.t = c.maxSimulatedSeconds
  }
  for (const g of run.groups)
    if (!Number.isNaN(g.vetoSince)) run.forwardStallSeconds += Math.max(0, run.t - g.vetoSince)
  return status
}
