/**
 * One DP rank's continuous-batching scheduler: waiting queue, running set, chunked prefill under a
 * token budget, a KV pool in tokens with retraction (the request stays on its rank and recomputes),
 * and a prefix cache. Mutable on purpose, private to one `simulate` call.
 *
 * A step's completion is `rankEnd.ts`; the request record is `req.ts`, the lazily advanced decoders
 * `decodeSet.ts`; how a batch is filled and what is retracted are the engine's (`RankRules`).
 */
import { DecodeSet } from "./decodeSet.js"
import { Deque } from "./deque.js"
import { BLOCK_TOKENS, PrefixCache } from "./prefixCache.js"
import type { Req } from "./req.js"

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
  /**
   * Whether a throttled step still prefills when the rank's last prefilling step left requests
   * waiting (vLLM's saturation guard, the default). TensorRT-LLM's ADP balance hold has no such
   * guard (`_balance_adp_requests` holds every context request): false.
   */
  readonly prefillBacklogGuard?: boolean | undefined
}

export class Rank {
  /** Requests routed here and not admitted, in queue order (retracted ones at the front). */
  readonly waiting = new Deque<Req>()
  /**
   * Admitted requests, in admission order (`runSeq`), as a doubly linked list through
   * `Req.runPrev` / `runNext`: the prefilling ones (also in `prefilling`) and the decoding ones (in
   * `decoding`). A finish unlinks in O(1) (it was an `indexOf` over the running array and a shift).
   */
  runHead: Req | undefined = undefined
  runTail: Req | undefined = undefined
  /** How many requests are admitted (running). */
  numRunning = 0
  /** The next admission's `runSeq`. */
  private nextRunSeq = 0
  /** The running requests with prompt (or recompute) tokens left, in running order. */
  readonly prefilling: Array<Req> = []
  /** Σ (prefillTarget - prefilled) over the running requests (the decoding ones add 0). */
  pendingPrefill = 0
  /** The running requests that decode, advanced lazily: their fields are exact only after `sync`. */
  readonly decoding: DecodeSet<Req>
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
  /**
   * The step being formed admits only requests queued by then (vLLM's async scheduling, set per
   * step by the engine's `admitCutoffSeconds`; +Infinity: every waiting request).
   */
  admitCutoffSeconds = Number.POSITIVE_INFINITY
  /**
   * The last charged step: its length, this rank's own part of it (the step less its sync wait) and
   * its decodes, seconds and tokens: what SGLang's `utilization` and `gen_throughput` report.
   */
  lastStepSeconds = 0
  lastBusySeconds = 0
  lastDecodes = 0
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
  readonly chunkCap: number

  constructor(
    readonly id: number,
    readonly p: RankParams,
    readonly rules: RankRules
  ) {
    this.chunkCap = p.pooledChunkTokens ?? Number.POSITIVE_INFINITY
    this.decoding = new DecodeSet<Req>(p.sparseTopK, p.slo?.itlSeconds !== undefined)
  }

  get hasWork(): boolean {
    return this.waiting.length > 0 || this.numRunning > 0
  }

  /** Append `r` to the running list (it is admitted now). */
  link(r: Req): void {
    r.runSeq = this.nextRunSeq++
    r.runPrev = this.runTail
    r.runNext = undefined
    if (this.runTail === undefined) this.runHead = r
    else this.runTail.runNext = r
    this.runTail = r
    this.numRunning++
  }

  /** Remove `r` from the running list. */
  unlink(r: Req): void {
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

  maxMatch(r: Req): number {
    // at least one prompt token is always computed
    return Math.min(r.fullBlocks, Math.floor((r.prefillTarget - 1) / BLOCK_TOKENS))
  }

  /** Real tokens of the formed batch. */
  get batchTokens(): number {
    return this.extendTokens + this.numDecodes
  }

  /** Bring every decoding request's fields up to date (for reading them after the run). */
  settle(): void {
    for (let r = this.runHead; r !== undefined; r = r.runNext) if (!isPrefilling(r)) this.decoding.sync(r)
  }
}
