/**
 * The keys of one rank's entry of SGLang's `/v1/loads`, any era: the per-rank load gauges (read
 * by the JSON projection from an entry and by the Prometheus decoder from
 * `/v1/loads?format=prometheus`, where each is the series `sglang_<key>{dp_rank="N"}`), and every
 * key an entry may carry. One list, so the two formats of the same endpoint read the same gauges.
 *
 * Upstream: SGLang `python/sglang/srt/managers/load_snapshot.py` (`LoadSnapshot` v1..v3 fields,
 * 025177e4) and the 2026 additions (`num_prealloc_ready_tokens`, `snapshot_monotonic_s`,
 * `kv_capacity`) named in `fixtures/reference/sglang/README.md`.
 */
import type { Field } from "./ledgerRows.js"
import { snake } from "./wire.js"

/**
 * The numeric per-rank load gauges of an entry, as ledger fields (their wire key is `snake(field)`),
 * in the order a ledger row takes them.
 */
export const v1LoadsGauges: ReadonlyArray<Field> = [
  "numRunningReqs",
  "numWaitingReqs",
  "numTotalTokens",
  "numUsedTokens",
  "numWaitingUncachedTokens",
  "numActiveTokens",
  "numPreallocReadyTokens",
  "maxTotalNumTokens",
  "maxRunningRequests",
  "tokenUsage",
  "genThroughput",
  "cacheHitRate",
  "utilization"
]

/** Every wire key of an entry of any era (LoadEntryV1..V3 and the 2026 additions). */
export const v1LoadsEntryKeys: ReadonlySet<string> = new Set([
  "timestamp",
  "dp_rank",
  ...v1LoadsGauges.map(snake),
  "total_prefill_uncached_tokens",
  "total_prefill_busy_us",
  "decode_moments",
  "decode_metrics_windows",
  "snapshot_monotonic_s",
  "num_total_reqs",
  "memory",
  "speculative",
  "lora",
  "disaggregation",
  "queues",
  "kv_capacity"
])
