/**
 * The TensorRT-LLM engine model (its PyTorch executor, `trtllm-serve`, attention DP). Every
 * iteration the executor fetches new requests from its queue (at most the ranks' free active slots,
 * `max_num_active_requests` each), the ranks allgather their state and the batch is assigned at
 * once by the ADP router (`EngineRun.fetch`: the held arrivals in upstream's batch order, strict
 * `attention_dp_rank` pins first, then the longest prompt first, each routed by the run's policy over
 * the state its predecessors updated; `trtllm/*` are upstream's routers). A rank schedules its
 * generation requests then its context requests under the token budget (`max_num_tokens`; context
 * chunking as configured) and pauses the newest request when KV runs out; a rank with nothing to
 * run pads with a dummy request (`_pad_attention_dp_dummy_request`, the simulator's `dummyBatches`).
 * With `attentionDpEnableBalance` the ranks hold their context requests as the ADP balance strategy
 * decides (`balance.ts`). The ranks publish a snapshot at each step end (as SGLang's do), so every
 * other registered policy can run behind it too.
 *
 * Upstream: NVIDIA/TensorRT-LLM `tensorrt_llm/_torch/pyexecutor/py_executor.py`,
 * `executor_request_queue.py`, `scheduler/adp_router.py` @1addeb3d and
 * `scheduler/unified_scheduler.py` (`_balance_adp_requests`); tech blog 10, "ADP Balance Strategy".
 */
import type { RankLoad } from "@loadledger/policies"
import type { Rank } from "../../internal/rank.js"
import { addDecodes, addPrefills } from "../../internal/rankBatch.js"
import type { Req } from "../../internal/req.js"
import type { EngineModel, EngineRun, EngineSetup } from "../Engine.js"
import { type BalanceCounters, holdContexts } from "./balance.js"
import { trtllmOptions } from "./options.js"

const snapshot = (rank: Rank, now: number, kvPoolTokens: number): RankLoad => ({
  dpRank: rank.id,
  timestamp: now,
  numRunningReqs: rank.numRunning,
  numWaitingReqs: rank.waiting.length,
  numTotalTokens: rank.usedTokens() + rank.waitingUncached,
  kvCacheUsage: rank.usedTokens() / kvPoolTokens
})

const nothing = (): undefined => undefined
const no = (): boolean => false

/** A rank's active requests (running and waiting for their context): what its executor holds. */
const activeOf = (rank: Rank): number => rank.numRunning + rank.waiting.length

/**
 * The executor's fetch: as many held requests as the ranks have free active slots, first come
 * first served, in the order the ADP router assigns them (pinned first, then longest prompt first,
 * stable).
 */
const fetchBatch = (held: Array<Req>, ranks: ReadonlyArray<Rank>, maxActive: number): Array<Req> => {
  let free = 0
  for (const r of ranks) free += Math.max(0, maxActive - activeOf(r))
  const batch = held.splice(0, Math.min(free, held.length))
  const pinned = batch.filter((r) => r.t.dpRank !== undefined)
  const relaxed = batch
    .filter((r) => r.t.dpRank === undefined)
    .map((r, i) => ({ r, i }))
    .sort((a, b) => b.r.t.inputLength - a.r.t.inputLength || a.i - b.i)
    .map((x) => x.r)
  return [...pinned, ...relaxed]
}

const start = (setup: EngineSetup): EngineRun => {
  const { groups, observe } = setup
  const c = setup.config
  const own = c as unknown as Readonly<Record<string, unknown>>
  const balance = own["attentionDpEnableBalance"] === true
  const timeoutIters = own["attentionDpTimeoutIters"] as number
  const batchingWaitIters = own["attentionDpBatchingWaitIters"] as number
  const counters: Array<BalanceCounters> = groups.map(() => ({ ctxWaitingIters: 0, ctxBatchingIters: 0 }))
  const ranks = groups.flat()
  return {
    queued: nothing,
    keepsStepping: no,
    idle: nothing,
    throttlePrefills: (group) =>
      balance &&
      holdContexts(
        counters[group]!,
        groups[group]!.map((r) => ({
          numContext: r.waiting.length,
          numGeneration: r.numRunning - r.prefilling.length
        })),
        c.maxRunningRequests,
        timeoutIters,
        batchingWaitIters
      ),
    stepStarted: nothing,
    stepEnding: nothing,
    stepEnded: (group: number, now: number): undefined => {
      const rs = groups[group]!
      observe(
        rs.map((r) => snapshot(r, now, c.kvPoolTokens)),
        now
      )
      return undefined
    },
    nextPublishSeconds: Number.POSITIVE_INFINITY,
    publish: nothing,
    fault: undefined,
    publishLog: undefined,
    fetch: (held) => fetchBatch(held, ranks, c.maxRunningRequests)
  }
}

/**
 * The TensorRT-LLM engine: per-iteration batch assignment, generation-first batches, the ADP
 * balance strategy as options, snapshots at step ends.
 *
 * @example
 * ```ts
 * import { trtllmEngine } from "./index.js"
 * trtllmEngine.name // => "trtllm"
 * trtllmEngine.options.map((o) => o.field)
 * // => ["attentionDpEnableBalance", "attentionDpTimeoutIters", "attentionDpBatchingWaitIters"]
 * ```
 *
 * @category engines
 * @since 0.7.0
 */
export const trtllmEngine: EngineModel<"trtllm"> = {
  name: "trtllm",
  label: "TensorRT-LLM",
  options: trtllmOptions,
  rank: {
    fill: (rank, budget, now) => {
      const n = addDecodes(rank)
      addPrefills(rank, budget - n, now)
    },
    retractVictim: (tail) => tail,
    // the balance hold is global and unconditional (no vLLM-style saturation guard)
    prefillBacklogGuard: false
  },
  start
}
