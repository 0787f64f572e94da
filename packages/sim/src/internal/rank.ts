/**
 * One DP rank's continuous-batching scheduler: waiting queue, running set, chunked prefill under a
 * token budget, a KV pool in tokens with retraction (the request stays on its rank and recomputes),
 * and a prefix cache. Mutable on purpose, private to one `simulate` call.
 *
 * Over 300 lines: one concept, one class whose private queues, KV accounting and counters every
 * method shares (admission, chunked prefill, decodes with retraction, completion); the request
 * record is `req.ts`, the lazily advanced decoders `decodeSet.ts`.
 */
import { extendKvReadTokens } from "@loadledger/step-time"
import { DecodeSet } from "./decodeSet.js"
import { Deque } from "./deque.js"
import { emptyList, removeAt } from "./lists.js"
import { BLOCK_TOKENS, PrefixCache } from "./prefixCache.js"
import type { Req } from "./req.js"
import type { CountedSamples } from "./stats.js"

export interface RankParams {
  readonly maxRunningRequests: number
  readonly chunkedPrefillTokens: number
  readonly kvPoolTokens: number
  readonly sparseTopK: number | undefined
  /** With an SLO that bounds the worst inter-token gap, each request's worst gap is tracked. */
  readonly slo?: { readonly itlSeconds?: number | undefined } | undefined
  /**
   * The balance bound's pooled rank (`Bound.ts`): batches mix decodes and prefill chunks, the
   * decodes outside the prefill budget `chunkedPrefillTokens`, and no request's chunk exceeds this
   * many tokens (one real rank's chunk). Undefined on every real rank.
   */
  readonly pooledChunkTokens?: number | undefined
}

/** Whether a request still has prompt (or recompute) tokens to prefill. */
const isPrefilling = (r: Req): boolean => r.prefilled < r.prefillTarget

export interface Hooks {
  readonly onFinish: (r: Req, now: number) => void
}

/**
 * What an engine decides for each of its ranks (`EngineModel` in `engines/Engine.ts`): how a step's
 * batch is filled from the rank's primitives (`addPrefills`, `addDecodes`) under the token budget,
 * and which running request is retracted when KV runs out.
 */
export interface RankRules {
  readonly fill: (rank: Rank, budget: number, now: number) => void
  /** The request to retract, given the running list's tail (its newest admission). */
  readonly retractVictim: (tail: Req) => Req
}

/**
 * The balance bound's pooled rank (`Bound.ts`), whatever the engine: every decode, and prefill
 * chunks under the whole group's budget.
 */
const pooledFill = (rank: Rank, budget: number, now: number): void => {
  rank.addDecodes()
  rank.addPrefills(budget, now)
}

export class Rank {
  /** Requests routed here and not admitted, in queue order (retracted ones at the front). */
  readonly waiting = new Deque<Req>()
  /**
   * Admitted requests, in admission order (`runSeq`), as a doubly linked list through
   * `Req.runPrev` / `runNext`: the prefilling ones (also in `prefilling`) and the decoding ones (in
   * `decoding`). A finish unlinks in O(1) (it was an `indexOf` over the running array and a shift).
   */
  private runHead: Req | undefined = undefined
  private runTail: Req | undefined = undefined
  /** How many requests are admitted (running). */
  numRunning = 0
  /** The next admission's `runSeq`. */
  private nextRunSeq = 0
  /** The running requests with prompt (or recompute) tokens left, in running order. */
  private readonly prefilling: Array<Req> = []
  /** Σ (prefillTarget - prefilled) over the running requests (the decoding ones add 0). */
  private pendingPrefill = 0
  /** The running requests that decode, advanced lazily: their fields are exact only after `sync`. */
  private readonly decoding: DecodeSet<Req>
  readonly cache = new PrefixCache()
  kvOwned = 0
  waitingUncached = 0
  routed = 0
  // the batch of the step in flight: its extends, and how many decodes (every decoding request)
  readonly extend: Array<Req> = []
  numDecodes = 0
  attentionPairs = 0
  kvReadPairs = 0
  denseKvReadPairs = 0
  extendTokens = 0
  /** The batch in `extend`/`decodes` is formed and not yet run (a vetoed forward keeps it). */
  formed = false
  /** vLLM's `prefill_capacity_bound`: the last step that admitted prefills left requests waiting. */
  prefillCapacityBound = false
  /** Consecutive step attempts in which this rank held requests but formed an empty batch. */
  emptyAttempts = 0
  // counters
  retractions = 0
  admittedPromptTokens = 0
  cachedPromptTokens = 0
  prefillComputed = 0
  decodeTokens = 0
  outputTokens = 0
  prefillEmitted = 0

  /** The largest chunk one request may take in a step (only the pooled bound rank caps it). */
  private readonly chunkCap: number
  /** How a step's batch is filled (the engine's rule, or the pooled bound rank's). */
  private readonly fill: RankRules["fill"]

  constructor(
    readonly id: number,
    private readonly p: RankParams,
    private readonly rules: RankRules
  ) {
    this.chunkCap = p.pooledChunkTokens ?? Number.POSITIVE_INFINITY
    this.fill = p.pooledChunkTokens === undefined ? rules.fill : pooledFill
    this.decoding = new DecodeSet<Req>(p.sparseTopK, p.slo?.itlSeconds !== undefined)
  }

  get hasWork(): boolean {
    return this.waiting.length > 0 || this.numRunning > 0
  }

  /** Append `r` to the running list (it is admitted now). */
  private link(r: Req): void {
    r.runSeq = this.nextRunSeq++
    r.runPrev = this.runTail
    r.runNext = undefined
    if (this.runTail === undefined) this.runHead = r
    else this.runTail.runNext = r
    this.runTail = r
    this.numRunning++
  }

  /** Remove `r` from the running list. */
  private unlink(r: Req): void {
    if (r.runPrev === undefined) this.runHead = r.runNext
    else r.runPrev.runNext = r.runNext
    if (r.runNext === undefined) this.runTail = r.runPrev
    else r.runNext.runPrev = r.runPrev
    r.runPrev = undefined
    r.runNext = undefined
    this.numRunning--
  }

  /** Every request held here, admitted (in admission order) then waiting (in queue order). */
  forEachHeld(f: (r: Req) => void): void {
    for (let r = this.runHead; r !== undefined; r = r.runNext) f(r)
    for (let i = 0; i < this.waiting.length; i++) f(this.waiting.at(i)!)
  }

  usedTokens(): number {
    return this.kvOwned + this.cache.pinnedBlocks * BLOCK_TOKENS
  }

  enqueue(r: Req, front = false): void {
    r.rank = this.id
    const hit = r.t.hashIds ? this.cache.match(r.t.hashIds, this.maxMatch(r)) * BLOCK_TOKENS : 0
    r.pendingUncached = r.prefillTarget - hit
    this.waitingUncached += r.pendingUncached
    if (front) this.waiting.unshift(r)
    else this.waiting.push(r)
  }

  private maxMatch(r: Req): number {
    // at least one prompt token is always computed
    return Math.min(r.fullBlocks, Math.floor((r.prefillTarget - 1) / BLOCK_TOKENS))
  }

  /** Free at least `tokens` of KV, evicting unheld prefix blocks (LRU) when needed. */
  private ensureFree(tokens: number): boolean {
    const free = this.p.kvPoolTokens - this.kvOwned - this.cache.blocks * BLOCK_TOKENS
    if (free >= tokens) return true
    // evict only when it can succeed (a failed attempt would throw away cache for nothing)
    if (free + this.cache.evictableBlocks * BLOCK_TOKENS < tokens) return false
    const freed = this.cache.evict(Math.ceil((tokens - free) / BLOCK_TOKENS))
    return free + freed * BLOCK_TOKENS >= tokens
  }

  private alloc(r: Req, tokens: number): void {
    r.kvTokens += tokens
    this.kvOwned += tokens
  }

  /**
   * Retract one running request (the engine's `retractVictim`) back to the front of this rank's
   * queue; it recomputes prompt + generated tokens when readmitted.
   */
  private retractOne(): boolean {
    const r = this.rules.retractVictim(this.runTail!)
    this.unlink(r)
    const wasDecoding = r.prefilled >= r.prefillTarget
    if (wasDecoding) this.decoding.leave(r)
    else {
      removeAt(this.prefilling, this.prefilling.indexOf(r))
      this.pendingPrefill -= r.prefillTarget - r.prefilled
    }
    this.kvOwned -= r.kvTokens
    if (r.t.hashIds) this.cache.release(r.t.hashIds, r.heldBlocks)
    r.kvTokens = 0
    r.heldBlocks = 0
    r.ctx = 0
    r.prefilled = 0
    r.prefillTarget = r.t.inputLength + r.generated
    r.retractions++
    this.retractions++
    this.enqueue(r, true)
    return wasDecoding
  }

  /** Admit the head of the waiting queue with a first chunk of at most `budget` tokens. */
  private admit(budget: number, now: number): number {
    const r = this.waiting.at(0)!
    const ids = r.t.hashIds
    const m = ids ? this.cache.match(ids, this.maxMatch(r)) : 0
    if (ids && m > 0) this.cache.acquire(ids, m)
    const chunk = Math.min(budget, r.prefillTarget - m * BLOCK_TOKENS, this.chunkCap)
    // admit only when the whole prompt fits next to what the prefills in progress still need
    // (SGLang's PrefillAdder checks the full input against the remaining tokens), so admitted
    // prefills cannot block each other
    const pending = r.prefillTarget - m * BLOCK_TOKENS + this.pendingPrefill
    const available = this.p.kvPoolTokens - this.kvOwned - this.cache.pinnedBlocks * BLOCK_TOKENS
    if (pending > available || !this.ensureFree(chunk)) {
      if (ids && m > 0) this.cache.release(ids, m)
      return 0
    }
    this.waiting.shift()
    this.waitingUncached -= r.pendingUncached
    r.heldBlocks = m
    r.ctx = m * BLOCK_TOKENS
    r.prefilled = r.ctx
    this.admittedPromptTokens += r.prefillTarget
    this.cachedPromptTokens += r.ctx
    if (r.retractions === 0) r.cachedTokens = r.ctx
    if (Number.isNaN(r.firstScheduledSeconds)) r.firstScheduledSeconds = now
    this.link(r)
    this.prefilling.push(r)
    this.pendingPrefill += r.prefillTarget - r.prefilled
    this.addExtend(r, chunk)
    return chunk
  }

  private addExtend(r: Req, chunk: number): void {
    this.alloc(r, chunk)
    r.chunk = chunk
    this.extend.push(r)
    this.extendTokens += chunk
    this.attentionPairs += r.ctx * chunk + (chunk * (chunk + 1)) / 2
    const k = this.p.sparseTopK
    if (k !== undefined) {
      // query i (1..chunk) reads min(ctx + i, k) keys
      const uncapped = Math.max(0, Math.min(chunk, k - r.ctx))
      this.kvReadPairs += r.ctx * uncapped + (uncapped * (uncapped + 1)) / 2 + (chunk - uncapped) * k
      this.denseKvReadPairs += extendKvReadTokens({ prefix: r.ctx, tokens: chunk })
    }
  }

  /** Prefill chunks of the running prefills, then admissions, under `budget` tokens; returns what is left. */
  addPrefills(budget: number, now: number): number {
    for (const r of this.prefilling) {
      if (budget <= 0) break
      const rest = r.prefillTarget - r.prefilled
      const chunk = Math.min(budget, rest, this.chunkCap)
      if (!this.ensureFree(chunk)) break
      this.addExtend(r, chunk)
      budget -= chunk
    }
    while (budget > 0 && this.waiting.length > 0 && this.numRunning < this.p.maxRunningRequests) {
      const used = this.admit(budget, now)
      if (used === 0) break
      budget -= used
    }
    return budget
  }

  /** Every decoding request decodes one token (one token of KV each, lazily); returns how many. */
  addDecodes(): number {
    const d = this.decoding
    let n = d.count
    while (n > 0 && !this.ensureFree(n)) {
      if (this.retractOne()) n--
    }
    this.kvOwned += n
    d.allocs++
    this.numDecodes = n
    if (n === 0) return 0
    this.attentionPairs += d.decodePairs
    const k = this.p.sparseTopK
    if (k !== undefined) {
      this.denseKvReadPairs += d.decodePairs
      // Σ min(ctx + 1, k) over the decoding requests (integers: exact in any order)
      this.kvReadPairs += d.cappedReadPairs
    }
    return n
  }

  /** Real tokens of the formed batch. */
  get batchTokens(): number {
    return this.extendTokens + this.numDecodes
  }

  /** Bring every decoding request's fields up to date (for reading them after the run). */
  settle(): void {
    for (let r = this.runHead; r !== undefined; r = r.runNext) if (!isPrefilling(r)) this.decoding.sync(r)
  }

  /**
   * Form this step's batch. Returns the real tokens it runs (0: an idle/dummy batch).
   *
   * `throttlePrefills` is vLLM's prefill cadence signal (`EngineCore._should_throttle_prefills`,
   * vllm `v1/engine/core.py` @00080ee1): on a throttled step the rank defers every prefill (new
   * admissions and chunks in progress) and runs only its decodes, unless the last step that
   * admitted prefills left requests waiting (`prefillCapacityBound`, the saturation guard) or no
   * running request can decode (the step would otherwise be empty) — `Scheduler.schedule`'s
   * `defer_prefills`, vllm `v1/core/sched/scheduler.py`.
   */
  form(now: number, throttlePrefills = false): number {
    if (this.numRunning === 0 && this.waiting.length === 0) {
      // an idle rank forms an empty batch (what the paths below give with nothing to run; the
      // decode set's allocation stamp is skipped: it has no member to charge)
      if (this.extend.length > 0) emptyList(this.extend)
      this.numDecodes = 0
      this.attentionPairs = 0
      this.kvReadPairs = 0
      this.denseKvReadPairs = 0
      this.extendTokens = 0
      this.prefillCapacityBound = false
      this.formed = true
      return 0
    }
    emptyList(this.extend)
    this.numDecodes = 0
    this.attentionPairs = 0
    this.kvReadPairs = 0
    this.denseKvReadPairs = 0
    this.extendTokens = 0
    const defer = throttlePrefills && !this.prefillCapacityBound && this.decoding.count > 0
    if (defer) this.addDecodes()
    else this.fill(this, this.p.chunkedPrefillTokens, now)
    if (!defer) this.prefillCapacityBound = this.waiting.length > 0
    this.formed = true
    return this.extendTokens + this.numDecodes
  }

  /**
   * Why this rank, holding requests, formed an empty batch: the waiting head cannot be admitted
   * (its prompt does not fit the free KV next to the prefills in progress, or never fits the
   * pool), the running set is full, or the running requests cannot get KV for their next tokens.
   */
  blockedReason(): string {
    const pool = this.p.kvPoolTokens
    const head = this.waiting.at(0)
    if (head !== undefined && this.numRunning < this.p.maxRunningRequests) {
      let pending = 0
      for (let x = this.runHead; x !== undefined; x = x.runNext) pending += x.prefillTarget - x.prefilled
      const free = pool - this.kvOwned - this.cache.pinnedBlocks * BLOCK_TOKENS - pending
      const need = head.pendingUncached
      return need > pool
        ? `request ${head.t.requestId} needs ${need} tokens of KV for its prompt, more than the rank's pool of ${pool}: it can never be admitted`
        : `request ${head.t.requestId} needs ${need} tokens of KV for its prompt, ${Math.max(0, free)} of ${pool} are free`
    }
    if (this.numRunning >= this.p.maxRunningRequests && this.waiting.length > 0)
      return `its running set is full (maxRunningRequests ${this.p.maxRunningRequests}) and none of its ${this.numRunning} running requests can run`
    return `its ${this.numRunning} running requests cannot get KV for their next tokens (${pool - this.kvOwned - this.cache.blocks * BLOCK_TOKENS} of ${pool} free)`
  }

  /** A request emits a token from its prefill: it finishes, or starts decoding. */
  private emit(r: Req, now: number, itl: CountedSamples, hooks: Hooks): void {
    r.generated++
    this.outputTokens++
    if (Number.isNaN(r.firstTokenSeconds)) r.firstTokenSeconds = now
    else {
      const gap = now - r.lastTokenSeconds
      itl.push(gap)
      if (gap > r.worstGapSeconds) r.worstGapSeconds = gap
    }
    r.lastTokenSeconds = now
    if (r.generated >= r.outputTarget) this.finish(r, now, hooks)
    else this.decoding.join(r)
  }

  private finish(r: Req, now: number, hooks: Hooks): void {
    this.unlink(r)
    this.kvOwned -= r.kvTokens
    r.kvTokens = 0
    if (r.t.hashIds) this.cache.release(r.t.hashIds, r.heldBlocks)
    r.heldBlocks = 0
    r.finishSeconds = now
    hooks.onFinish(r, now)
  }

  /**
   * Apply the step that ends at `now`: the batch's decoding requests gain a token each, its prefill
   * chunks complete (a finished prompt emits its first token), and requests that reached their
   * output length finish — prefills first, then decodes in running order.
   */
  complete(now: number, itl: CountedSamples, hooks: Hooks): void {
    this.formed = false
    const decodes = this.numDecodes
    // the batch's decoding requests advance before a request finishing its prompt joins them
    const finishing = decodes > 0 ? this.decoding.decodeStep(now, itl) : undefined
    for (const r of this.extend) {
      r.ctx += r.chunk
      r.prefilled += r.chunk
      this.pendingPrefill -= r.chunk
      this.prefillComputed += r.chunk
      if (r.prefilled < r.prefillTarget) continue
      removeAt(this.prefilling, this.prefilling.indexOf(r))
      // the prompt's full blocks join the prefix cache, held by this request until it ends
      const ids = r.t.hashIds
      const to = Math.min(r.fullBlocks, Math.floor(r.prefillTarget / BLOCK_TOKENS))
      if (ids && to > r.heldBlocks) {
        this.cache.insertHeld(ids, r.heldBlocks, to)
        const moved = (to - r.heldBlocks) * BLOCK_TOKENS
        r.kvTokens -= moved
        this.kvOwned -= moved
        r.heldBlocks = to
      }
      this.prefillEmitted++
      this.emit(r, now, itl, hooks)
    }
    if (finishing === undefined) return
    this.decodeTokens += decodes
    this.outputTokens += decodes
    if (finishing.length === 0) return
    if (finishing.length === 1) {
      // the common case: one request finishes, nothing to order
      const r = finishing[0]!
      this.decoding.leave(r)
      this.finish(r, now, hooks)
      return
    }
    // in running (admission) order: an insertion sort by `runSeq`, in place (the array is the
    // decode set's, reused; a few finish per step)
    for (let i = 1; i < finishing.length; i++) {
      const r = finishing[i]!
      let j = i - 1
      while (j >= 0 && finishing[j]!.runSeq > r.runSeq) {
        finishing[j + 1] = finishing[j]!
        j--
      }
      finishing[j + 1] = r
    }
    for (const r of finishing) {
      this.decoding.leave(r)
      this.finish(r, now, hooks)
    }
  }
}
