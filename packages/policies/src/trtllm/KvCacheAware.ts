/**
 * TensorRT-LLM's KV-cache-aware attention-DP router (`KVCacheAwareADPRouter.route_requests`) as a
 * pure batch function. Each request scores every eligible rank `effective + w * load`, with
 * `effective = inputLength - matchLength` (the rank's radix-tree prefix match, zeroed when the best
 * match rate is at or below `matchRateThreshold`) and `load = rankTokens / max(eligibleTokens,
 * inputLength) * inputLength`; the lowest (score, rank tokens) wins, ties to the first rank of a
 * `random.Random(requestId)` shuffle of the eligible ranks. Ranks leave the batch's eligible set at
 * the cap `ceil(fairShareMultiplier * fairShare)` (capped at `maxNumActiveRequests`).
 *
 * Upstream: NVIDIA/TensorRT-LLM `tensorrt_llm/_torch/pyexecutor/scheduler/adp_router.py`
 * (`KVCacheAwareADPRouter`), the revision with `cold_start_warmup` (a warmup rank counts as
 * targeted only once a request lands on it) and `account_for_in_transfer` (default off), as read
 * on 2026-12-07 through the reference index (its file version 56141410210, 37,409 characters;
 * the index records no commit for it): after the router's pull request NVIDIA/TensorRT-LLM#12315
 * and the warmup's #14307, and with `ConversationAwareADPRouter` (#14983) beside it. The nearest
 * pinned commit, @02385f29bd8e10555b781d4ab00a262a54a95aa3, has the same scoring, sort, cap,
 * shuffle and tie-break without the warmup and with in-transfer requests always counted.
 * Checked against that version line by line: score `inputLength - match + beta * load`, the
 * affinity gate `bestMatch / max(inputLength, 1) > threshold`, ties to the lower rank tokens, a
 * rank leaving the batch at the cap, the strict pass charging `inputLength - match` tokens.
 * Tests: `tests/unittest/_torch/executor/test_adp_router.py`'s KV-cache-aware cases.
 * Implemented from the behaviour, not copied.
 *
 * @since 0.7.0
 */
import {
  type AdpAssignment,
  type AdpRankState,
  type AdpRequest,
  expectedNumActiveRequests,
  strictFirst
} from "./AdpRouter.js"
import { pyShuffle, seedOfId } from "./internal/pyRandom.js"

/**
 * The KV-cache-aware router's knobs, `AttentionDpConfig`'s `kv_cache_routing_*` fields:
 * `loadBalanceWeight` (β, default 1), `matchRateThreshold` (default 0.1), `fairShareMultiplier`
 * (default 2).
 *
 * @example
 * ```ts
 * import { Trtllm } from "@loadledger/policies"
 * Trtllm.kvCacheAwareDefaults.fairShareMultiplier // => 2
 * ```
 *
 * @category trtllm
 * @since 0.7.0
 */
export interface KvCacheAwareOptions {
  readonly loadBalanceWeight: number
  readonly matchRateThreshold: number
  readonly fairShareMultiplier: number
}

/**
 * Upstream's defaults for {@link KvCacheAwareOptions}.
 *
 * @example
 * ```ts
 * import { Trtllm } from "@loadledger/policies"
 * Trtllm.kvCacheAwareDefaults // => { loadBalanceWeight: 1, matchRateThreshold: 0.1, fairShareMultiplier: 2 }
 * ```
 *
 * @category trtllm
 * @since 0.7.0
 */
export const kvCacheAwareDefaults: KvCacheAwareOptions = {
  loadBalanceWeight: 1,
  matchRateThreshold: 0.1,
  fairShareMultiplier: 2
}

/** The first 64 token ids, compared as Python compares tuples (shorter prefix first). */
const fingerprintCompare = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): number => {
  const n = Math.min(a.length, b.length, 64)
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!
  return Math.min(a.length, 64) - Math.min(b.length, 64)
}

/**
 * One batch through the KV-cache-aware router. `matches[rank]` maps a request id to its prefix
 * match length on that rank (absent: 0); `pendingWarmup` the ranks not yet targeted
 * (`cold_start_warmup`; empty when off): a relaxed request with no target goes to the smallest of
 * them first. Returns the assignment and the ranks still pending.
 *
 * @example
 * ```ts
 * import { Trtllm } from "@loadledger/policies"
 * const states = [0, 1].map((rank) => ({ rank, numActiveRequests: 0, numActiveTokens: 0 }))
 * const out = Trtllm.assignKvCacheAware(states, [{ id: 1, inputLength: 100 }], 10, [new Map([[1, 80]]), new Map()])
 * out.assignment.assigned // => [[1], []]
 * ```
 *
 * @category trtllm
 * @since 0.7.0
 */
export const assignKvCacheAware = (
  states: ReadonlyArray<AdpRankState>,
  reqs: ReadonlyArray<AdpRequest>,
  maxNumActiveRequests: number,
  matches: ReadonlyArray<ReadonlyMap<number | string, number>>,
  options: KvCacheAwareOptions = kvCacheAwareDefaults,
  pendingWarmup: ReadonlyArray<number> = []
): { readonly assignment: AdpAssignment; readonly pendingWarmup: ReadonlyArray<number> } => {
  const n = states.length
  const assigned: Array<Array<number | string>> = states.map(() => [])
  const active = states.map((s) => s.numActiveRequests)
  const tokens = states.map((s) => s.numActiveTokens)
  const matchOf = (rank: number, id: number | string): number => matches[rank]?.get(id) ?? 0
  const pending = new Set(pendingWarmup)
  const rest: Array<AdpRequest> = []
  for (const r of strictFirst(reqs)) {
    let target = r.attentionDpRank
    if (target === undefined && pending.size > 0) target = Math.min(...pending)
    if (target !== undefined && target >= 0 && target < n && active[target]! < maxNumActiveRequests) {
      active[target]!++
      tokens[target]! += Math.max(r.inputLength - matchOf(target, r.id), 0)
      assigned[target]!.push(r.id)
      pending.delete(target)
    } else rest.push(r)
  }
  const order = rest
    .map((r, i) => ({ r, i }))
    .sort(
      (a, b) =>
        fingerprintCompare(a.r.tokenIds ?? [], b.r.tokenIds ?? []) ||
        b.r.inputLength - a.r.inputLength ||
        a.i - b.i
    )
  const expected = expectedNumActiveRequests(
    active,
    order.length,
    options.fairShareMultiplier,
    maxNumActiveRequests
  )
  const eligible: Array<number> = []
  for (let i = 0; i < n; i++) if (active[i]! < expected) eligible.push(i)
  const unassigned: Array<number | string> = []
  for (const { r } of order) {
    if (eligible.length === 0) {
      unassigned.push(r.id)
      continue
    }
    const ranks = pyShuffle(eligible, seedOfId(r.id))
    let total = 0
    let bestMatch = 0
    for (const k of eligible) {
      total += tokens[k]!
      bestMatch = Math.max(bestMatch, matchOf(k, r.id))
    }
    const denom = Math.max(total, r.inputLength)
    const affinity = bestMatch / Math.max(r.inputLength, 1) > options.matchRateThreshold
    let best = ranks[0]!
    let bestScore = Number.POSITIVE_INFINITY
    for (const k of ranks) {
      const m = affinity ? matchOf(k, r.id) : 0
      const score = r.inputLength - m + options.loadBalanceWeight * ((tokens[k]! / denom) * r.inputLength)
      if (score < bestScore || (score === bestScore && tokens[k]! < tokens[best]!)) {
        bestScore = score
        best = k
      }
    }
    assigned[best]!.push(r.id)
    active[best]!++
    tokens[best]! += Math.max(r.inputLength - matchOf(best, r.id), 0)
    if (active[best]! >= expected) eligible.splice(eligible.indexOf(best), 1)
  }
  return {
    assignment: { assigned, unassigned, expectedNumActiveRequests: expected },
    pendingWarmup: [...pending].sort((a, b) => a - b)
  }
}
