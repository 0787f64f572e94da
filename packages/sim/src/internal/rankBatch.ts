/**
 * Forming a rank's batch for a step (`formBatch`): the engine's rule (`RankRules.fill`) fills it
 * from `addPrefills` (chunks of the prefills in progress, then admissions, KV-aware) and
 * `addDecodes` (every decoding request, retracting when KV runs out), each charging its attention
 * pairs and KV reads; a throttled step (vLLM's prefill cadence) runs decodes only.
 */
import { extendKvReadTokens } from "@loadledger/step-time"
import { emptyList, removeAt } from "./lists.js"
import { BLOCK_TOKENS } from "./prefixCache.js"
import type { Rank } from "./rank.js"
import type { Req } from "./req.js"

/** Free at least `tokens` of KV, evicting unheld prefix blocks (LRU) when needed. */
const ensureFree = (rank: Rank, tokens: number): boolean => {
  const free = rank.p.kvPoolTokens - rank.kvOwned - rank.cache.blocks * BLOCK_TOKENS
  if (free >= tokens) return true
  // evict only when it can succeed (a failed attempt would throw away cache for nothing)
  if (free + rank.cache.evictableBlocks * BLOCK_TOKENS < tokens) return false
  const freed = rank.cache.evict(Math.ceil((tokens - free) / BLOCK_TOKENS))
  return free + freed * BLOCK_TOKENS >= tokens
}

const alloc = (rank: Rank, r: Req, tokens: number): void => {
  r.kvTokens += tokens
  rank.kvOwned += tokens
}

/**
 * Retract one running request (the engine's `retractVictim`) back to the front of this rank's
 * queue; it recomputes prompt + generated tokens when readmitted.
 */
const retractOne = (rank: Rank): boolean => {
  const r = rank.rules.retractVictim(rank.runTail!)
  rank.unlink(r)
  const wasDecoding = r.prefilled >= r.prefillTarget
  if (wasDecoding) rank.decoding.leave(r)
  else {
    removeAt(rank.prefilling, rank.prefilling.indexOf(r))
    rank.pendingPrefill -= r.prefillTarget - r.prefilled
  }
  rank.kvOwned -= r.kvTokens
  if (r.t.hashIds) rank.cache.release(r.t.hashIds, r.heldBlocks)
  r.kvTokens = 0
  r.heldBlocks = 0
  r.ctx = 0
  r.prefilled = 0
  r.prefillTarget = r.t.inputLength + r.generated
  r.retractions++
  rank.retractions++
  rank.enqueue(r, true)
  return wasDecoding
}

/** Admit the head of the waiting queue with a first chunk of at most `budget` tokens. */
const admit = (rank: Rank, budget: number, now: number): number => {
  const r = rank.waiting.at(0)!
  const ids = r.t.hashIds
  const m = ids ? rank.cache.match(ids, rank.maxMatch(r)) : 0
  if (ids && m > 0) rank.cache.acquire(ids, m)
  const chunk = Math.min(budget, r.prefillTarget - m * BLOCK_TOKENS, rank.chunkCap)
  // admit only when the whole prompt fits next to what the prefills in progress still need
  // (SGLang's PrefillAdder checks the full input against the remaining tokens), so admitted
  // prefills cannot block each other
  const pending = r.prefillTarget - m * BLOCK_TOKENS + rank.pendingPrefill
  const available = rank.p.kvPoolTokens - rank.kvOwned - rank.cache.pinnedBlocks * BLOCK_TOKENS
  if (pending > available || !ensureFree(rank, chunk)) {
    if (ids && m > 0) rank.cache.release(ids, m)
    return 0
  }
  rank.waiting.shift()
  rank.waitingUncached -= r.pendingUncached
  r.heldBlocks = m
  r.ctx = m * BLOCK_TOKENS
  r.prefilled = r.ctx
  rank.admittedPromptTokens += r.prefillTarget
  rank.cachedPromptTokens += r.ctx
  if (r.retractions === 0) r.cachedTokens = r.ctx
  if (Number.isNaN(r.firstScheduledSeconds)) r.firstScheduledSeconds = now
  rank.link(r)
  rank.prefilling.push(r)
  rank.pendingPrefill += r.prefillTarget - r.prefilled
  addExtend(rank, r, chunk)
  return chunk
}

const addExtend = (rank: Rank, r: Req, chunk: number): void => {
  alloc(rank, r, chunk)
  r.chunk = chunk
  rank.extend.push(r)
  rank.extendTokens += chunk
  rank.attentionPairs += r.ctx * chunk + (chunk * (chunk + 1)) / 2
  const k = rank.p.sparseTopK
  if (k !== undefined) {
    // query i (1..chunk) reads min(ctx + i, k) keys
    const uncapped = Math.max(0, Math.min(chunk, k - r.ctx))
    rank.kvReadPairs += r.ctx * uncapped + (uncapped * (uncapped + 1)) / 2 + (chunk - uncapped) * k
    rank.denseKvReadPairs += extendKvReadTokens({ prefix: r.ctx, tokens: chunk })
  }
}

/** Prefill chunks of the running prefills, then admissions, under `budget` tokens; returns what is left. */
export const addPrefills = (rank: Rank, budget: number, now: number): number => {
  for (const r of rank.prefilling) {
    if (budget <= 0) break
    const rest = r.prefillTarget - r.prefilled
    const chunk = Math.min(budget, rest, rank.chunkCap)
    if (!ensureFree(rank, chunk)) break
    addExtend(rank, r, chunk)
    budget -= chunk
  }
  while (budget > 0 && admissible(rank) && rank.numRunning < rank.p.maxRunningRequests) {
    const used = admit(rank, budget, now)
    if (used === 0) break
    budget -= used
  }
  return budget
}

/**
 * Whether the head of the rank's queue may be admitted in the step being formed: it was queued by
 * `admitCutoffSeconds` (vLLM's async scheduling: a step is scheduled while the one before it runs,
 * so a request that arrived during that step waits one more; +Infinity otherwise).
 */
const admissible = (rank: Rank): boolean => {
  const head = rank.waiting.at(0)
  return head !== undefined && head.queuedSeconds <= rank.admitCutoffSeconds
}

/** Every decoding request decodes one token (one token of KV each, lazily); returns how many. */
export const addDecodes = (rank: Rank): number => {
  const d = rank.decoding
  let n = d.count
  while (n > 0 && !ensureFree(rank, n)) {
    if (retractOne(rank)) n--
  }
  rank.kvOwned += n
  d.allocs++
  rank.numDecodes = n
  if (n === 0) return 0
  rank.attentionPairs += d.decodePairs
  const k = rank.p.sparseTopK
  if (k !== undefined) {
    rank.denseKvReadPairs += d.decodePairs
    // Σ min(ctx + 1, k) over the decoding requests (integers: exact in any order)
    rank.kvReadPairs += d.cappedReadPairs
  }
  return n
}

/**
 * Form this step's batch. Returns the real tokens it runs (0: an idle/dummy batch).
 *
 * `throttlePrefills` is vLLM's prefill cadence signal (`EngineCore._should_throttle_prefills`,
 * vllm `v1/engine/core.py` @00080ee1): on a throttled step the rank defers every prefill (new
 * admissions and chunks in progress) and runs only its decodes, unless the last step that
 * admitted prefills left requests waiting (`prefillCapacityBound`, the saturation guard) or no
 * running request can decode (the step would otherwise be empty) — `Scheduler.schedule`'s
 * `defer_prefills`, vllm `v1/core/sched/scheduler.py`. An engine whose rank rules set
 * `prefillBacklogGuard: false` (TensorRT-LLM's balance hold) defers without the saturation guard.
 */
export const formBatch = (rank: Rank, now: number, throttlePrefills = false): number => {
  emptyList(rank.extend)
  rank.numDecodes = 0
  rank.attentionPairs = 0
  rank.kvReadPairs = 0
  rank.denseKvReadPairs = 0
  rank.extendTokens = 0
  if (rank.numRunning === 0 && rank.waiting.length === 0) {
    // an idle rank forms an empty batch (the decode set's allocation stamp is skipped: it has no
    // member to charge)
    rank.prefillCapacityBound = false
    rank.formed = true
    return 0
  }
  const guarded = rank.rules.prefillBacklogGuard !== false && rank.prefillCapacityBound
  const defer = throttlePrefills && !guarded && rank.decoding.count > 0
  if (defer) addDecodes(rank)
  else rank.rules.fill(rank, rank.p.chunkedPrefillTokens, now)
  if (!defer) rank.prefillCapacityBound = admissible(rank)
  rank.formed = true
  return rank.extendTokens + rank.numDecodes
}
