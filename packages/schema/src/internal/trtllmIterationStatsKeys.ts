/**
 * The keys TensorRT-LLM's `IterationStats` JSON defines (NVIDIA/TensorRT-LLM
 * `cpp/tensorrt_llm/executor/jsonSerialization.cpp` at 086f6921cf23611d51fdb5b06b0acc4ae97aceb8,
 * plus the PyTorch executor's newer `inflightBatchingStats` queued-work fields from
 * `tensorrt_llm/_torch/pyexecutor/py_executor.py`, and the per-iteration KV keys that
 * `tensorrt_llm/metrics/collector.py` `log_iteration_stats` reads at
 * 050f80def8df236e326949c8bd9dee10fd896a83): keys outside these get an `UnknownField`
 * notice; keys inside them that no ledger field models are read silently.
 *
 * @internal
 */

export const iterationStatsKeys: ReadonlySet<string> = new Set([
  "timestamp",
  "iter",
  "iterLatencyMS",
  "newActiveRequestsQueueLatencyMS",
  "numNewActiveRequests",
  "numActiveRequests",
  "numQueuedRequests",
  "numCompletedRequests",
  "maxNumActiveRequests",
  "maxBatchSizeStatic",
  "maxBatchSizeTunerRecommended",
  "maxBatchSizeRuntime",
  "maxNumTokensStatic",
  "maxNumTokensTunerRecommended",
  "maxNumTokensRuntime",
  "gpuMemUsage",
  "cpuMemUsage",
  "pinnedMemUsage",
  "kvCacheStats",
  "staticBatchingStats",
  "inflightBatchingStats",
  "specDecodingStats",
  "scheduledNumPrefillRequests",
  "scheduledSumPrefillTokens",
  "scheduledSumPrefillKvTokens",
  "scheduledNumDecodeRequests",
  "scheduledSumDecodeKvTokens",
  "queuedNumPrefillRequests",
  "queuedSumPrefillTokens",
  "queuedNumDecodeRequests",
  "queuedSumDecodeKvTokens",
  "iterDiskPrefetchBlocks",
  "iterCachedTokensByLevel",
  "kvCacheLevelTiers",
  "kvCacheIterationStats",
  "kvCacheIterationStatsByLifecycle",
  "kvCacheIterationStatsByPoolGroup",
  "kvCacheIterationStatsByColdPoolGroup"
])

/** The keys of each nested section, by the section's key. */
export const sectionKeys: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  [
    "kvCacheStats",
    new Set([
      "maxNumBlocks",
      "freeNumBlocks",
      "usedNumBlocks",
      "tokensPerBlock",
      "allocTotalBlocks",
      "allocNewBlocks",
      "reusedBlocks",
      "missedBlocks",
      "cacheHitRate"
    ])
  ],
  [
    "staticBatchingStats",
    new Set(["numScheduledRequests", "numContextRequests", "numCtxTokens", "numGenTokens", "emptyGenSlots"])
  ],
  [
    "inflightBatchingStats",
    new Set([
      "numScheduledRequests",
      "numContextRequests",
      "numGenRequests",
      "numPausedRequests",
      "numCtxTokens",
      "microBatchId",
      "avgNumDecodedTokensPerIter",
      "numCtxKvTokens",
      "numGenKvTokens",
      "numQueuedContextRequests",
      "numQueuedCtxTokens",
      "numQueuedGenRequests",
      "numQueuedGenKvTokens",
      "numPausedKvTokens"
    ])
  ],
  [
    "specDecodingStats",
    new Set([
      "numDraftTokens",
      "numAcceptedTokens",
      "numRequestsWithDraftTokens",
      "acceptanceLength",
      "iterLatencyMS",
      "draftOverhead"
    ])
  ]
])
