/**
 * The end of a run of the event loop (`loop.ts`): what is still on the ranks is settled and
 * counted, a stream left unread is read to its end for its token ids' tally, and the run's state
 * becomes a `RawRun` (which `resultOf.ts` turns into the public result).
 */
import type { PublishRecord, SimStatus, StepRecord } from "../Result.js"
import { MAX_SYNTHETIC_TOKEN_IDS, traceTokenIds } from "../TokenIds.js"
import type { TraceTokenIds } from "../TokenIdsTypes.js"
import type { TraceRequest } from "../Trace.js"
import type { Arrivals, TraceShape } from "./arrivals.js"
import type { CountedSamples } from "./countedSamples.js"
import type { Rank } from "./rank.js"
import type { Req } from "./req.js"
import { laterOf, type Run } from "./run.js"
import type { LatencySummary } from "./stats.js"
import { tokenIdsTally } from "./tokenTally.js"

/** A finished run's raw figures and logs, before `resultOf` summarises them. */
export interface RawRun {
  readonly status: SimStatus
  /** The trace's request count, first and last arrival (0 for a trace that cannot run). */
  readonly count: number
  readonly firstArrivalSeconds: number
  readonly lastArrivalSeconds: number
  /** Where the requests' token ids come from (`traceTokenIds`). */
  readonly tokenIds: TraceTokenIds
  /**
   * The requests by trace index when they are at hand: an array trace, or a streamed one with
   * `recordRequests` (none of a trace that cannot run).
   */
  readonly rows: ReadonlyArray<TraceRequest> | undefined
  /** Every request's record by trace index (`recordRequests`; undefined: it never arrived). */
  readonly kept: ReadonlyArray<Req | undefined> | undefined
  readonly ranks: ReadonlyArray<Rank>
  readonly itl: CountedSamples
  readonly ttft: LatencySummary
  readonly e2e: LatencySummary
  readonly finished: number
  readonly rejected: number
  /** Unfinished requests on the ranks a NoProgress or Deadlock status names. */
  readonly stalled: number
  /** The latest finish (0: none). */
  readonly lastFinishSeconds: number
  /** The latest time a request was first scheduled (NaN: none was). */
  readonly lastScheduledSeconds: number
  readonly slo: Run["slo"]
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

/** Settle and summarise a run that ended with status `s` (see the module header). */
export const endLoop = (
  run: Run,
  arrivals: Arrivals,
  s: SimStatus,
  shape: TraceShape,
  isArray: boolean,
  invalid: boolean,
  ran: ReadonlyArray<TraceRequest>
): RawRun => {
  const onProgress = run.onProgress
  let status = s
  // a stream left unread (a run that stopped early) is read to its end: its token ids' tally
  if (!isArray && !invalid) {
    arrivals.drain()
    if (arrivals.problem && status._tag !== "InvalidConfig")
      status = { _tag: "InvalidConfig", ...arrivals.problem }
  }
  onProgress?.(run.done, shape.count)
  for (const r of run.ranks) r.settle()
  // what is still on the ranks: unfinished (stalled when its rank is stuck), maybe scheduled
  const stuck = new Set(
    status._tag === "NoProgress"
      ? status.ranks
      : status._tag === "Deadlock"
        ? [...status.busyRanks, ...status.skippingRanks]
        : []
  )
  let stalled = 0
  let lastScheduled = run.lastScheduledSeconds
  for (const rank of run.ranks)
    rank.forEachHeld((r) => {
      if (stuck.has(rank.id)) stalled++
      lastScheduled = laterOf(lastScheduled, r.firstScheduledSeconds)
    })
  return {
    status,
    count: shape.count,
    firstArrivalSeconds: isArray
      ? (ran[0]?.arrivalSeconds ?? 0)
      : Number.isNaN(arrivals.firstArrivalSeconds)
        ? 0
        : arrivals.firstArrivalSeconds,
    lastArrivalSeconds: shape.count > 0 ? shape.lastArrivalSeconds : 0,
    tokenIds: isArray
      ? traceTokenIds(ran)
      : tokenIdsTally(arrivals.fromTrace, arrivals.blockHashes, shape.count, MAX_SYNTHETIC_TOKEN_IDS),
    rows: isArray ? ran : arrivals.rows,
    kept: run.kept,
    ranks: run.ranks,
    itl: run.itl,
    ttft: run.ttft.summary(),
    e2e: run.e2e.summary(),
    finished: run.finished,
    rejected: run.rejected,
    stalled,
    lastFinishSeconds: run.lastFinishSeconds,
    lastScheduledSeconds: lastScheduled,
    slo: run.slo,
    steps: run.steps,
    endSeconds: run.t,
    rankSeconds: run.rankSeconds,
    syncWaitSeconds: run.syncWaitSeconds,
    forwardStallSeconds: run.forwardStallSeconds,
    idleRankSteps: run.idleRankSteps,
    rankSteps: run.rankSteps,
    imbalanceCounts: run.imbalanceCounts,
    sampleSeconds: run.sampleSeconds,
    samplePerRank: run.samplePerRank,
    stepLog: run.stepLog,
    publishLog: run.engine.publishLog
  }
}
