/**
 * The SGLang engine model. A rank runs an extend batch when it can, otherwise a decode batch
 * (`Scheduler.get_next_batch_to_run`), and retracts a decoding request, the newest first, when KV
 * runs out (`retract_decode`), sglang `python/sglang/srt/managers/scheduler.py` and
 * `schedule_batch.py`. Each scheduler writes its load snapshot at its step boundary (the
 * shared-memory write of the DP controller, `observe`); the controller's policy reads the rows on
 * arrival, at most once per 20 ms (the throttle is the SGLang policies' own `refresh`, sglang
 * `data_parallel_controller.py`, see fixtures/reference/sglang/README.md). The row carries what
 * SGLang's `/v1/loads` carries (`numRunningReqs`, `numWaitingReqs`, tokens, KV usage,
 * `genThroughput`, `utilization`: the last two over the rank's last step, where SGLang averages
 * over its logging interval; `utilization` the simulator's reading, the share of the step the rank
 * spent in its own forward work rather than waiting for the group). One front end, no engine
 * options, no group protocol.
 */
import type { RankLoad } from "@loadledger/policies"
import type { Rank } from "../../internal/rank.js"
import { addDecodes, addPrefills } from "../../internal/rankBatch.js"
import type { Req } from "../../internal/req.js"
import type { EngineModel, EngineRun, EngineSetup } from "../Engine.js"

/** A rank's row as its scheduler writes it: every field the policies read is present. */
type SimLoad = RankLoad & {
  readonly timestamp: number
  readonly numRunningReqs: number
  readonly numWaitingReqs: number
  readonly numTotalTokens: number
  readonly kvCacheUsage: number
  readonly genThroughput: number
  readonly utilization: number
}

const snapshot = (rank: Rank, now: number, kvPoolTokens: number): SimLoad => ({
  dpRank: rank.id,
  timestamp: now,
  numRunningReqs: rank.numRunning,
  numWaitingReqs: rank.waiting.length,
  numTotalTokens: rank.usedTokens() + rank.waitingUncached,
  kvCacheUsage: rank.usedTokens() / kvPoolTokens,
  // over the rank's last step (SGLang reports both over its last logging interval)
  genThroughput: rank.lastStepSeconds > 0 ? rank.lastDecodes / rank.lastStepSeconds : 0,
  utilization: rank.lastStepSeconds > 0 ? Math.min(1, rank.lastBusySeconds / rank.lastStepSeconds) : 0
})

const nothing = (): undefined => undefined
const no = (): boolean => false

const start = (setup: EngineSetup): EngineRun => {
  const { groups, observe } = setup
  const pool = setup.config.kvPoolTokens
  const shm = new Array<SimLoad | undefined>(setup.config.dpSize).fill(undefined)
  return {
    queued: nothing,
    keepsStepping: no,
    idle: nothing,
    throttlePrefills: no,
    stepStarted: nothing,
    stepEnding: nothing,
    stepEnded: (group: number, now: number): undefined => {
      // the ranks that stepped write their snapshots; the controller reads those rows
      const ranks = groups[group]!
      for (const rank of ranks) shm[rank.id] = snapshot(rank, now, pool)
      observe(
        ranks.map((r) => shm[r.id]!),
        now
      )
      return undefined
    },
    nextPublishSeconds: Number.POSITIVE_INFINITY,
    publish: nothing,
    fault: undefined,
    publishLog: undefined
  }
}

/** SGLang retracts a decoding request: from the running list's tail, the newest that decodes. */
const retractVictim = (tail: Req): Req => {
  let r = tail
  while (r.runPrev !== undefined && r.prefilled < r.prefillTarget) r = r.runPrev
  return r
}

/**
 * The SGLang engine: extend-or-decode batches, snapshots at step boundaries, one front end.
 *
 * @example
 * ```ts
 * import { sglangEngine } from "./index.js"
 * sglangEngine.name // => "sglang"
 * sglangEngine.options // => []
 * ```
 *
 * @category engines
 * @since 0.6.0
 */
export const sglangEngine: EngineModel<"sglang"> = {
  name: "sglang",
  label: "SGLang",
  options: [],
  rank: {
    fill: (rank, budget, now) => {
      addPrefills(rank, budget, now)
      if (rank.extend.length === 0) addDecodes(rank)
    },
    retractVictim
  },
  start
}
