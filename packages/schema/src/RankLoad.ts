/**
 * The one load-ledger row: what is known about one DP rank, produced by every decoder and accepted
 * as-is by every policy, the simulator and the live router.
 *
 * @since 0.2.0
 */

/**
 * Why a rank's load is not trusted. Decoders set `duplicate-rank` (the payload reported the rank
 * more than once), `negative-count` (a count, token number or ratio below 0, e.g. the -1 sentinel of
 * sglang#32070), `invalid-number` (NaN, ±Infinity, a non-integer count or an integer above 2^53).
 * Routers set `stale` (the last report is older than their bound), `unreachable` (the last poll
 * failed or timed out) and `not-reported` (the rank exists but never reported).
 *
 * **When to use**: deciding how a policy or router treats a rank whose numbers it cannot use.
 *
 * @category RankLoad
 * @since 0.2.0
 */
export type RankUnknownReason =
  | "duplicate-rank"
  | "negative-count"
  | "invalid-number"
  | "stale"
  | "unreachable"
  | "not-reported"

/**
 * Why a rank's load is unknown, with a message naming the field or the cause.
 *
 * @category RankLoad
 * @since 0.2.0
 */
export interface RankUnknown {
  readonly reason: RankUnknownReason
  readonly message: string
}

/**
 * One DP rank (vLLM: one engine core) of the load ledger.
 *
 * **Identity.** `dpRank` is the rank index the consumer routes over: decoders set it to the wire's
 * `dp_rank` (SGLang) or `engine` label / engine index (vLLM); a router that joins several engines
 * into one rank space re-indexes it and keeps the wire identity in `worker` (which endpoint reported
 * the row: URL, pod or engine id) and `workerDpRank` (the rank inside that worker).
 *
 * **Absent is absent.** Every load field is present only when the source carried it; absent means
 * "not reported", never 0. A row with `unknown` set carries **no** load fields: the rank exists but
 * its load must not be used (and must never make the rank attractive). `timestamp` is float epoch
 * seconds on the publisher's clock, absent when the source carried none.
 *
 * Units: counts are requests; token fields are tokens; `kvCacheUsage`, `tokenUsage`,
 * `cacheHitRate`, `utilization`, `prefixCacheHitRate` are 0..1 fractions; throughputs are tokens/s.
 *
 * Wire names (SGLang `/v1/loads`, LoadSnapshot, `/metrics`; vLLM `/metrics`, logger):
 * `num_running_reqs` / `vllm:num_requests_running` → `numRunningReqs`; `num_waiting_reqs` /
 * `num_queue_reqs` / `vllm:num_requests_waiting` / V0 logger `Pending` → `numWaitingReqs`;
 * `num_total_tokens` → `numTotalTokens`; `token_usage` / `kv_cache_usage_perc` /
 * `gpu_cache_usage_perc` / logger `GPU KV cache usage` → `kvCacheUsage`. Fields added in 0.3.0
 * (paused, retracted, grammar and PD queues, prealloc-ready requests and tokens, KV capacity, vLLM
 * V0 swapped and CPU KV usage) carry their wire names in their docs.
 *
 * **When to use**: everywhere a load report reaches a decision: `decodeLedger` produces it,
 * `policy.observe` consumes it, no mapping in between.
 *
 * @example
 * ```ts
 * import type { RankLoad } from "@loadledger/schema"
 * const row: RankLoad = { dpRank: 0, timestamp: 12.5, numRunningReqs: 3, numWaitingReqs: 1 }
 * row.numTotalTokens // => undefined
 * ```
 *
 * @category RankLoad
 * @since 0.2.0
 */
export interface RankLoad {
  readonly dpRank: number
  /** Which endpoint reported the row (URL, pod, engine id), when the producer knows it. */
  readonly worker?: string | undefined
  /** The rank inside `worker` when `dpRank` was re-indexed over several workers. */
  readonly workerDpRank?: number | undefined
  /** Float epoch seconds: the per-rank timestamp, else the envelope's; absent when none was carried. */
  readonly timestamp?: number | undefined
  readonly numRunningReqs?: number | undefined
  readonly numWaitingReqs?: number | undefined
  readonly numTotalTokens?: number | undefined
  /** KV-cache usage, 0..1. */
  readonly kvCacheUsage?: number | undefined
  readonly numUsedTokens?: number | undefined
  readonly numWaitingUncachedTokens?: number | undefined
  readonly numActiveTokens?: number | undefined
  readonly numPendingTokens?: number | undefined
  readonly numTokens?: number | undefined
  readonly maxTotalNumTokens?: number | undefined
  readonly maxRunningRequests?: number | undefined
  readonly maxPrefillTokens?: number | undefined
  readonly contextLen?: number | undefined
  readonly tokenUsage?: number | undefined
  /** Tokens per second. */
  readonly genThroughput?: number | undefined
  readonly cacheHitRate?: number | undefined
  readonly utilization?: number | undefined
  readonly prefixCacheHitRate?: number | undefined
  readonly avgPromptThroughputTokensPerSecond?: number | undefined
  readonly avgGenerationThroughputTokensPerSecond?: number | undefined
  /** Requests paused (e.g. by async weight sync): `queues.paused`, `sglang:num_paused_reqs`. */
  readonly numPausedReqs?: number | undefined
  /** Requests retracted (preempted) back to the queue: `queues.retracted`, `sglang:num_retracted_reqs`. */
  readonly numRetractedReqs?: number | undefined
  /** Requests waiting for grammar compilation: `queues.grammar`, `sglang:num_grammar_queue_reqs`. */
  readonly numGrammarQueueReqs?: number | undefined
  /** Decode requests whose KV is preallocated and ready: `queues.prealloc_ready`. */
  readonly numPreallocReadyReqs?: number | undefined
  /** Tokens of those prealloc-ready requests: `num_prealloc_ready_tokens` (sglang#38065). */
  readonly numPreallocReadyTokens?: number | undefined
  /** PD prefill bootstrap queue: `disaggregation.prefill_bootstrap_queue_reqs`, `sglang:num_prefill_prealloc_queue_reqs`. */
  readonly numPrefillBootstrapQueueReqs?: number | undefined
  /** PD prefill in-flight queue: `disaggregation.prefill_inflight_queue_reqs`, `sglang:num_prefill_inflight_queue_reqs`. */
  readonly numPrefillInflightQueueReqs?: number | undefined
  /** PD decode prealloc queue: `disaggregation.decode_prealloc_queue_reqs`, `sglang:num_decode_prealloc_queue_reqs`. */
  readonly numDecodePreallocQueueReqs?: number | undefined
  /** PD decode transfer queue: `disaggregation.decode_transfer_queue_reqs`, `sglang:num_decode_transfer_queue_reqs`. */
  readonly numDecodeTransferQueueReqs?: number | undefined
  /** PD decode retracted queue: `disaggregation.decode_retracted_queue_reqs`. */
  readonly numDecodeRetractedQueueReqs?: number | undefined
  /** Share of the KV pool pre-allocated for PD decode requests still in transfer, 0..1: the scheduler log's `pre-allocated usage`. */
  readonly preAllocatedUsage?: number | undefined
  /** KV tokens free now: `kv_capacity.full_available_tokens`, `sglang:kv_available_tokens`. */
  readonly kvAvailableTokens?: number | undefined
  /** KV tokens held by evictable cache: `kv_capacity.full_evictable_tokens`, `sglang:kv_evictable_tokens`. */
  readonly kvEvictableTokens?: number | undefined
  /** KV pool size in tokens from the memory section: `memory.token_capacity`. */
  readonly tokenCapacity?: number | undefined
  /** vLLM V0 requests swapped to CPU: logger `Swapped`, `vllm:num_requests_swapped`. */
  readonly numSwappedReqs?: number | undefined
  /** vLLM V0 CPU KV-cache usage, 0..1: logger `CPU KV cache usage`, `vllm:cpu_cache_usage_perc`. */
  readonly cpuKvCacheUsage?: number | undefined
  /** PD prefill queue, one total (bootstrap/prealloc + in-flight): SMG `prefill_queue_reqs`, `smg_engine_pd_prefill_queue_reqs`. */
  readonly numPrefillQueueReqs?: number | undefined
  /** PD decode queue, one total (prealloc + transfer + retracted): SMG `decode_queue_reqs`, `smg_engine_pd_decode_queue_reqs`. */
  readonly numDecodeQueueReqs?: number | undefined
  /** KV blocks held by decoding requests (Dynamo `active_decode_blocks`, `dynamo_frontend_worker_active_decode_blocks`): blocks, not tokens. */
  readonly activeDecodeBlocks?: number | undefined
  /** Prefill tokens routed and not yet prefilled (Dynamo `active_prefill_tokens`, `dynamo_frontend_worker_active_prefill_tokens`). */
  readonly activePrefillTokens?: number | undefined
  /** KV blocks in use on the worker (Dynamo `kv_used_blocks`; older `kv_stats.kv_active_blocks`): blocks. */
  readonly kvUsedBlocks?: number | undefined
  /** KV blocks of the worker's pool (Dynamo `kv_stats.kv_total_blocks`): blocks. */
  readonly kvTotalBlocks?: number | undefined
  /** Set when the rank's numbers cannot be trusted; the row then has no load fields. */
  readonly unknown?: RankUnknown | undefined
}

/**
 * An engine-level load with no rank: the fields of modelled series that carry no rank label on a
 * page where other samples do (a gateway's or another worker's engine-level gauges beside
 * per-rank ones). The rank is absent, never an invented rank 0; `worker` names the engine when
 * the page says which.
 *
 * **When to use**: reading `LedgerReport.rankless` of `decodeLedgerReport`.
 *
 * @example
 * ```ts
 * import type { RanklessLoad } from "@loadledger/schema"
 * const r: RanklessLoad = { numRunningReqs: 4 }
 * "dpRank" in r // => false
 * ```
 *
 * @category RankLoad
 * @since 0.5.0
 */
export type RanklessLoad = Omit<RankLoad, "dpRank" | "workerDpRank">
