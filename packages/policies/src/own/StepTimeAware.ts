/**
 * The `step-time-aware` policy: place each request where the lockstep DP group's predicted step
 * time, prefill chunks included, grows least, and among such places where its own first token
 * comes soonest.
 *
 * @since 0.4.0
 */
import { packed } from "../internal/packed.js"
import { type Policy, policyError, type RankLoad, type RouteRequest, type RouteResult } from "../Policy.js"
import { freeKvTokens } from "./internal/FreeKv.js"
import { emptyTrie, getTrie, type HashTrie, setTrie } from "./internal/HashTrie.js"
import { emptyLedger, type LedgerState, observeLedger, setLedgerStatus } from "./internal/InflightCharges.js"
import { freshMax, isFresh, ledgerView, unknownBase } from "./internal/LoadView.js"
import {
  emptyRankPrefixes,
  matchRankPrefixes,
  type RankPrefixes,
  recordRankPrefixes
} from "./internal/RankPrefixes.js"
import type { RankView } from "./RankView.js"
import { glm53H200StepCost, prefillSeconds, type StepCostModel } from "./StepCost.js"

/**
 * Options of {@link makeStepTimeAware}. Every field is optional.
 *
 * - `cost` ({@link glm53H200StepCost}): the step cost model, e.g. from `stepCostFrom`.
 * - `decodeWeight` (64): how many decode steps of the rank's decode cost count against a second of
 *   predicted time to first token (the request decodes on the rank it is placed on).
 * - `clientCount` / `clientIndex`: front ends sharing the ranks. Each routed request counts
 *   `clientCount` times until a snapshot includes it (the others are assumed to route alike), the
 *   in-flight floor is `clientCount` times this front end's in-flight requests, and the tie scan
 *   starts at `floor(dpSize * clientIndex / clientCount)`.
 * - `kvPoolTokens`: every rank's KV pool in tokens. Default: per rank, from its rows
 *   (`maxTotalNumTokens`, `tokenCapacity`, `numUsedTokens / kvCacheUsage`, or `numTotalTokens /
 *   kvCacheUsage` while nothing waits).
 * - `cacheTokens`: how many prompt tokens a rank's prefix cache keeps (LRU). Default: its KV pool,
 *   262,144 while that is unknown.
 * - `maxIndexedBlocks` (65,536): bound of the router-side prefix index.
 * - `staleAfterSeconds` (1) / `inclusionMarginSeconds` (0): as in `ledger-balanced`.
 *
 * @category own policies
 * @since 0.4.0
 */
export interface StepTimeAwareOptions {
  readonly cost?: StepCostModel | undefined
  readonly decodeWeight?: number | undefined
  readonly clientCount?: number | undefined
  readonly clientIndex?: number | undefined
  readonly kvPoolTokens?: number | undefined
  readonly cacheTokens?: number | undefined
  readonly maxIndexedBlocks?: number | undefined
  readonly staleAfterSeconds?: number | undefined
  readonly inclusionMarginSeconds?: number | undefined
  /** @internal experiment */
  readonly horizonScale?: number | undefined
  /** @internal experiment */
  readonly snapshotQueue?: boolean | undefined
  /** @internal experiment: weight of the snapshot's queue with several front ends */
  readonly sharedQueueWeight?: number | undefined
  /** @internal experiment */
  readonly inflightFloor?: boolean | undefined
  /** @internal experiment: decode term from this front end's own in flight only (x clientCount) */
  readonly privateDecode?: boolean | undefined
}

/** Per-rank fields of `StepTimeAwareState.ranks`, `FIELDS` numbers per rank. */
const HORIZON = 0 // when this front end's prefills on the rank end (seconds, absolute)
const PENDING_REQUESTS = 1 // requests routed since the rank's snapshot
const PENDING_TOKENS = 2 // their prompt tokens still to prefill
const PENDING_SINCE = 3 // routing time of the newest of them
const INFLIGHT = 4 // requests routed and not finished
const SENT = 5 // prompt tokens sent to the rank so far (the prefix index's clock)
const POOL = 6 // the rank's KV pool in tokens, NaN while unknown
const INFLIGHT_TOKENS = 7 // prompt tokens of the requests in flight
const FIELDS = 8
/** `inflight` values: `tokens * RANK_SPAN + rank`. */
const RANK_SPAN = 1 << 20

/**
 * The state of a `step-time-aware` policy. Opaque and immutable: `ledger` holds the newest
 * snapshot per rank and health (no charges), `ranks` this front end's per-rank bookkeeping
 * (prefill horizon, routes not yet in a snapshot, in-flight count, prefix clock, KV pool),
 * `inflight` the rank of each request in flight, `prefixes` the router-side prefix index.
 *
 * @category own policies
 * @since 0.4.0
 */
export interface StepTimeAwareState {
  readonly ledger: LedgerState
  readonly cursor: number
  readonly ranks: ReadonlyArray<number>
  readonly inflight: HashTrie<number>
  readonly prefixes: RankPrefixes
}

/**
 * A `step-time-aware` policy plus `view`, the per-rank load it reads at `now`.
 *
 * @category own policies
 * @since 0.4.0
 */
export interface StepTimeAwarePolicy extends Policy<StepTimeAwareState> {
  readonly view: (state: StepTimeAwareState, now: number) => ReadonlyArray<RankView>
}

const isCount = (x: number | undefined): x is number => x !== undefined && Number.isFinite(x) && x >= 0

/** A rank's KV pool from its row, `undefined` when the row does not tell. */
const poolOf = (row: RankLoad): number | undefined => {
  if (isCount(row.maxTotalNumTokens) && row.maxTotalNumTokens > 0) return row.maxTotalNumTokens
  if (isCount(row.tokenCapacity) && row.tokenCapacity > 0) return row.tokenCapacity
  const kv = row.kvCacheUsage
  if (kv === undefined || !(kv >= 0.01 && kv <= 1)) return undefined
  if (isCount(row.numUsedTokens) && row.numUsedTokens > 0) return row.numUsedTokens / kv
  if (row.numWaitingReqs === 0 && isCount(row.numTotalTokens) && row.numTotalTokens > 0)
    return row.numTotalTokens / kv
  return undefined
}

/**
 * Build loadledger's step-time-aware policy (`step-time-aware`).
 *
 * **What it optimises**: the predicted lockstep step time of the DP group after admission, prefill
 * chunks included. In a lockstep step every rank waits for the slowest, and a rank's prefill
 * chunk (up to `cost.chunkTokens` tokens) makes the step it runs in many times longer than a
 * decode step: the group's time is the sum over steps of the slowest rank's local time. Placing a
 * prompt on rank `r` therefore costs the group nothing while the prefill ends before the busiest
 * rank's prefill horizon ends (it runs in steps that are long anyway), and the overhang otherwise;
 * in both cases the request's own first token comes when `r` has done its queued prefill and then
 * this one. The policy picks the rank with the least
 *
 *     max(horizon_r - now, prefill(queued_r)) + prefill(uncached_r, cached_r) + decodeWeight * decode_r
 *
 * seconds (`prefill` from `cost`, see `prefillSeconds`): the rank's prefill horizon (when the
 * prompts this front end sent it are prefilled) or the prefill of the tokens its snapshot shows
 * waiting plus the ones routed since (`clientCount` times), whichever is later; then this
 * prompt's uncached tokens after the prefix the rank still caches (router-side index of the blocks
 * sent to each rank, aged by the tokens sent to the rank since, LRU to `cacheTokens`); plus the
 * rank's decode step cost after admission (`(requests + 1) * decodeSecondsPerRequest +
 * (context + prompt) * decodeSecondsPerContextToken`, requests never below `clientCount` times
 * this front end's in-flight requests). Minimising that sum minimises the group's predicted
 * drain time (the overhang) and, among placements with none, the request's predicted time to
 * first token, so a shared prefix attracts only while the prefill it saves outweighs the queue it
 * joins (no herding). Each term is a per-rank cost in seconds, the shape a weighted-scorer
 * combinator sums.
 *
 * **The cost model is an argument** (`cost`, default {@link glm53H200StepCost}): the policies
 * package does not depend on `@loadledger/step-time` (which depends on nothing of ours, so it
 * could without a cycle); a routing decision needs six coefficients, not the step-time model,
 * and keeping the model out keeps the package (and the live router) free of step-time's CSV and
 * matrix dependencies. `stepCostFrom` fits the coefficients from `stepTimeFromAggregates` or any
 * step-time function.
 *
 * **When to use**: DP-attention groups (SGLang DP attention, vLLM DP + EP) whose prefill chunks
 * stall the group: long or uneven prompts, multi-turn chat with prefix reuse, bursts of prompts.
 *
 * **Unknown, absent, stale, unhealthy**: counts as in `ledger-balanced` (an unknown or stale rank
 * is never less busy than the busiest known or fresh one); a field a rank does not report (queued
 * tokens, context tokens, KV pool) takes the busiest reported value; unhealthy ranks are never
 * chosen. KV feasibility: while some healthy rank's known free KV, minus the prompt tokens
 * routed to it since its snapshot, holds the prompt, no other rank is chosen. Exact ties break by
 * a rotating index. The prefix index covers any number of ranks.
 *
 * Errors: `NoRanks`, `InvalidInput` (`inputLength`), `InvalidRoutedRank`, `AllRanksUnavailable`.
 *
 * @example
 * ```ts
 * import { makeStepTimeAware } from "@loadledger/policies"
 * const p = makeStepTimeAware()
 * const idle = (dpRank: number) => ({ dpRank, timestamp: 0, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0 })
 * const s0 = p.observe(p.init(2), [idle(0), idle(1)], 0)
 * const a = p.route(s0, { requestId: "a", inputLength: 60000, prefixHashes: ["x"] }, 0)
 * a._tag === "Routed" && a.rank // => 0
 * // rank 0 prefills a for seconds: b goes to rank 1, where its prefill overlaps a's
 * const b = a._tag === "Routed" ? p.route(a.state, { requestId: "b", inputLength: 2000 }, 0.1) : a
 * b._tag === "Routed" && b.rank // => 1
 * ```
 *
 * @category own policies
 * @since 0.4.0
 */
export const makeStepTimeAware = (options: StepTimeAwareOptions = {}): StepTimeAwarePolicy => {
  const cost = options.cost ?? glm53H200StepCost
  const decodeWeight = options.decodeWeight ?? 64
  const clientCount = options.clientCount !== undefined && options.clientCount >= 1 ? options.clientCount : 1
  const clientIndex = options.clientIndex ?? 0
  const fixedPool = options.kvPoolTokens
  const cacheTokens = options.cacheTokens
  const staleAfter = options.staleAfterSeconds ?? 1
  const margin = options.inclusionMarginSeconds ?? 0
  const maxBlocks = options.maxIndexedBlocks ?? 65_536
  const horizonScale = options.horizonScale ?? 1
  const queueWeight =
    options.snapshotQueue === false ? 0 : clientCount === 1 ? 1 : (options.sharedQueueWeight ?? 1)
  const inflightFloor = options.inflightFloor ?? true
  const privateDecode = options.privateDecode ?? false
  const dReq = cost.decodeSecondsPerRequest
  const dCtx = cost.decodeSecondsPerContextToken

  // per-route working buffers of this policy instance: written and read within one `route` call,
  // never returned (allocating them per route was a fifth of its time, on the built code)
  const makeScratch = (n: number) => ({
    used: new Float64Array(n),
    queued: new Float64Array(n),
    context: new Float64Array(n),
    fits: new Uint8Array(n)
  })
  let scratch = makeScratch(0)

  const init = (dpSize: number): StepTimeAwareState => {
    const ledger = emptyLedger(dpSize)
    const ranks = packed(ledger.dpSize * FIELDS, 0)
    for (let r = 0; r < ledger.dpSize; r++) {
      ranks[r * FIELDS + PENDING_SINCE] = Number.NEGATIVE_INFINITY
      ranks[r * FIELDS + POOL] = fixedPool ?? Number.NaN
    }
    return {
      ledger,
      cursor: 0,
      ranks,
      inflight: emptyTrie(1_000_000),
      prefixes: emptyRankPrefixes(maxBlocks)
    }
  }

  const observe = (
    s: StepTimeAwareState,
    loads: ReadonlyArray<RankLoad>,
    now: number
  ): StepTimeAwareState => {
    const ledger = observeLedger(s.ledger, loads, margin, now)
    if (ledger === s.ledger) return s
    const ranks = s.ranks.slice()
    for (let r = 0; r < ledger.dpSize; r++) {
      if (ledger.snapshots[r] === s.ledger.snapshots[r]) continue
      const o = r * FIELDS
      // a snapshot stamped after the newest pending route includes every pending route
      if (ledger.snapTimestamp[r]! - margin >= ranks[o + PENDING_SINCE]!) {
        ranks[o + PENDING_REQUESTS] = 0
        ranks[o + PENDING_TOKENS] = 0
      }
      const row = ledger.snapshots[r]
      const pool = fixedPool ?? (row === undefined || row.unknown !== undefined ? undefined : poolOf(row))
      if (pool !== undefined) ranks[o + POOL] = pool
    }
    return { ...s, ledger, ranks }
  }

  const finish = (s: StepTimeAwareState, ids: ReadonlyArray<string>): StepTimeAwareState => {
    let inflight = s.inflight
    let ranks: Array<number> | undefined
    for (const id of ids) {
      const x = getTrie(inflight, id)
      if (x === undefined) continue
      const r = x % RANK_SPAN
      ranks ??= s.ranks.slice()
      ranks[r * FIELDS + INFLIGHT] = Math.max(0, ranks[r * FIELDS + INFLIGHT]! - 1)
      ranks[r * FIELDS + INFLIGHT_TOKENS] = Math.max(
        0,
        ranks[r * FIELDS + INFLIGHT_TOKENS]! - (x - r) / RANK_SPAN
      )
      inflight = setTrie(inflight, id, undefined)
    }
    return ranks === undefined ? s : { ...s, ranks, inflight }
  }

  const route = (
    s: StepTimeAwareState,
    request: RouteRequest,
    now: number
  ): RouteResult<StepTimeAwareState> => {
    const ledger = s.ledger
    const n = ledger.dpSize
    if (n === 0) return policyError("NoRanks", "the policy has no ranks")
    if (!(Number.isSafeInteger(request.inputLength) && request.inputLength >= 0))
      return policyError(
        "InvalidInput",
        `inputLength must be a token count, got ${request.inputLength}`,
        "inputLength"
      )
    const input = request.inputLength
    const hashes = request.prefixHashes
    const blocks = hashes?.length ?? 0
    const blockTokens = blocks > 0 ? input / blocks : 0
    const sr = s.ranks
    // an engine computes at least the prompt's last token, however much of it is cached
    const cachedOf = (blocksHeld: number) => Math.max(0, Math.min(input - 1, blocksHeld * blockTokens))
    const matched = packed(n, 0)
    const scores = packed(n, 0)
    const commit = (rank: number, cursor: number): RouteResult<StepTimeAwareState> => {
      const ranks = sr.slice()
      const o = rank * FIELDS
      const cached = cachedOf(matched[rank]!)
      ranks[o + HORIZON] =
        Math.max(now, ranks[o + HORIZON]!) + horizonScale * prefillSeconds(cost, input - cached, cached)
      ranks[o + PENDING_REQUESTS]! += 1
      ranks[o + PENDING_TOKENS]! += input - cached
      ranks[o + PENDING_SINCE] = now
      const sent = ranks[o + SENT]! + input
      ranks[o + SENT] = sent
      let inflight = s.inflight
      if (getTrie(inflight, request.requestId) === undefined) {
        ranks[o + INFLIGHT]! += 1
        ranks[o + INFLIGHT_TOKENS]! += input
        inflight = setTrie(inflight, request.requestId, input * RANK_SPAN + rank)
      }
      return {
        _tag: "Routed",
        rank,
        state: {
          ledger,
          cursor,
          ranks,
          inflight,
          prefixes: recordRankPrefixes(s.prefixes, hashes, rank, sent)
        },
        explanation: {
          scores,
          tieBreak: "least predicted prefill wait + own prefill + decode cost (seconds), then rotating index",
          details: { matchedBlocks: matched }
        }
      }
    }
    if (request.routedDpRank !== undefined) {
      const r = request.routedDpRank
      if (!Number.isInteger(r) || r < 0 || r >= n)
        return policyError("InvalidRoutedRank", `DP rank ${r} is not active.`, "routedDpRank")
      return commit(r, s.cursor)
    }

    // per rank, the prompt tokens waiting to be prefilled (`queued`) and the tokens in KV
    // (`context`), from what its row reports; a field it does not report takes the bound that
    // makes the rank look busiest (total: the busiest known; used: 0 for queued, the busiest known
    // for context; waiting uncached: at least the highest any rank reports), and a rank whose row
    // is unknown or stale is never below the busiest known rank
    const fm = freshMax(ledger, now, staleAfter)
    let maxTotal = 0
    let maxUsed = 0
    let maxUncached = -1
    let maxPool = 0
    if (scratch.used.length < n) scratch = makeScratch(n)
    const { used, queued, context, fits } = scratch
    for (let r = 0; r < n; r++) if (sr[r * FIELDS + POOL]! > maxPool) maxPool = sr[r * FIELDS + POOL]!
    for (let r = 0; r < n; r++) {
      const row = ledger.snapshots[r]
      used[r] = Number.NaN
      if (row === undefined || row.unknown !== undefined) continue
      if (isCount(row.numTotalTokens) && row.numTotalTokens > maxTotal) maxTotal = row.numTotalTokens
      if (isCount(row.numWaitingUncachedTokens) && row.numWaitingUncachedTokens > maxUncached)
        maxUncached = row.numWaitingUncachedTokens
      const kv = row.kvCacheUsage
      // a rank whose pool is not known yet takes the largest known (DP ranks share one config)
      const pool = Number.isNaN(sr[r * FIELDS + POOL]!) ? maxPool : sr[r * FIELDS + POOL]!
      const u = isCount(row.numUsedTokens)
        ? row.numUsedTokens
        : kv !== undefined && kv >= 0 && kv <= 1 && pool > 0
          ? kv * pool
          : Number.NaN
      used[r] = u
      if (u > maxUsed) maxUsed = u
    }
    let maxQueued = 0
    let maxContext = 0
    for (let r = 0; r < n; r++) {
      const row = ledger.snapshots[r]
      const reported = row !== undefined && row.unknown === undefined
      const total = reported && isCount(row.numTotalTokens) ? row.numTotalTokens : maxTotal
      const u = used[r]!
      let q =
        reported && row.numWaitingReqs === 0
          ? 0
          : reported && isCount(row.numWaitingUncachedTokens)
            ? row.numWaitingUncachedTokens
            : Math.max(0, total - (Number.isNaN(u) ? 0 : u))
      if (!(reported && isCount(row.numWaitingUncachedTokens)) && maxUncached > q) q = maxUncached
      queued[r] = q
      context[r] = Number.isNaN(u) ? Math.max(total, maxUsed) : u
      if (isFresh(ledger, r, now, staleAfter)) {
        if (q > maxQueued) maxQueued = q
        if (context[r]! > maxContext) maxContext = context[r]!
      }
    }
    const defaultCache = cacheTokens ?? (maxPool > 0 ? maxPool : 262_144)
    matchRankPrefixes(
      s.prefixes,
      hashes,
      (rank, stamp) => {
        const pool = sr[rank * FIELDS + POOL]!
        const keep = cacheTokens ?? (Number.isNaN(pool) ? defaultCache : pool)
        return clientCount * (sr[rank * FIELDS + SENT]! - stamp) <= keep
      },
      matched
    )
    // KV feasibility: ranks whose known free KV (minus what was routed since) holds the prompt
    let anyFits = false
    for (let r = 0; r < n; r++) {
      const free = freeKvTokens(ledger.snapshots[r])
      const ok =
        ledger.healthy[r] === true &&
        free !== undefined &&
        free - clientCount * sr[r * FIELDS + PENDING_TOKENS]! >= input
      fits[r] = ok ? 1 : 0
      if (ok) anyFits = true
    }
    const start = (Math.floor((n * clientIndex) / clientCount) + s.cursor) % n
    let best = -1
    let bestScore = 0
    for (let i = 0, r = start; i < n; i++, r = r + 1 === n ? 0 : r + 1) {
      const o = r * FIELDS
      // unknown or stale: never less busy than the busiest fresh rank
      const fresh = isFresh(ledger, r, now, staleAfter)
      const q = fresh ? queued[r]! : Math.max(queued[r]!, maxQueued)
      const ctx = fresh ? context[r]! : Math.max(context[r]!, maxContext)
      const pendingTokens = clientCount * sr[o + PENDING_TOKENS]!
      const requests = privateDecode
        ? clientCount * sr[o + INFLIGHT]!
        : Math.max(
            (Number.isNaN(ledger.snapTimestamp[r]!)
              ? unknownBase(ledger.snapshots[r], fm, now, staleAfter)[0]
              : fresh || fm.requests < 0
                ? ledger.snapRequests[r]!
                : Math.max(ledger.snapRequests[r]!, fm.requests)) +
              clientCount * sr[o + PENDING_REQUESTS]!,
            inflightFloor ? clientCount * sr[o + INFLIGHT]! : 0
          )
      const decodeContext = privateDecode ? clientCount * sr[o + INFLIGHT_TOKENS]! : ctx + pendingTokens
      const cached = cachedOf(matched[r]!)
      // this front end's own prefills are in the horizon; the other front ends are taken to have
      // routed alike since the snapshot
      const othersPending = (clientCount - 1) * sr[o + PENDING_TOKENS]!
      const wait = Math.max(sr[o + HORIZON]! - now, queueWeight * prefillSeconds(cost, q + othersPending, 0))
      const decode = (requests + 1) * dReq + (decodeContext + input) * dCtx
      const score = wait + prefillSeconds(cost, input - cached, cached) + decodeWeight * decode
      scores[r] = score
      if (!ledger.healthy[r] || (anyFits && fits[r] === 0)) continue
      if (best < 0 || score < bestScore) {
        best = r
        bestScore = score
      }
    }
    if (best < 0)
      return policyError("AllRanksUnavailable", `Cannot route request: all ${n} DP ranks are unavailable.`)
    return commit(best, (s.cursor + 1) % n)
  }

  return {
    name: "step-time-aware",
    init,
    observe,
    route,
    finish: (s, ids) => finish(s, ids),
    setStatus: (s, status) => {
      const ledger = setLedgerStatus(s.ledger, status)
      return ledger === s.ledger ? s : { ...s, ledger }
    },
    view: (s, now) => ledgerView(s.ledger, now, staleAfter)
  }
}
