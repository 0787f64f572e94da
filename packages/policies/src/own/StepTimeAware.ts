/**
 * The `step-time-aware` policy: place each request where the lockstep DP group's predicted step
 * time, prefill chunks included, grows least, and among such places where its own first token
 * comes soonest.
 *
 * Its cost terms are named functions with their units (`internal/stepTerms.ts`; their weights
 * are the options `stepTimeTerms` names), its route `internal/stepRoute.ts`, its state machine
 * `internal/stepState.ts`. Over 300 lines (312): the options, the state's types and the docstring
 * that explains the rule, half of it measured evidence for each term; no code beyond the wiring.
 *
 * @since 0.4.0
 */
import type { Policy } from "../Policy.js"
import type { HashTrie } from "./internal/HashTrie.js"
import { type LedgerState, setLedgerStatus } from "./internal/InflightCharges.js"
import type { FreshMax } from "./internal/LoadView.js"
import { ledgerView } from "./internal/LoadView.js"
import type { RankDemand } from "./internal/RankDemand.js"
import type { RankPrefixes } from "./internal/RankPrefixes.js"
import { route } from "./internal/stepRoute.js"
import { finish, init, observe, stepSettings } from "./internal/stepState.js"
import type { RankView } from "./RankView.js"
import type { StepCostModel } from "./StepCost.js"

/**
 * Options of {@link makeStepTimeAware}. Every field is optional.
 *
 * - `cost` ({@link glm53H200StepCost}): the step cost model, e.g. from `stepCostFrom`.
 * - `clientCount` / `clientIndex`: front ends sharing the ranks (see "Several front ends" on
 *   {@link makeStepTimeAware}); the tie scan starts at `floor(dpSize * clientIndex / clientCount)`.
 * - `decodeWeight` (8 with one front end, 0 with several; a value that is not a number >= 0 counts
 *   as unset): how many decode steps of a rank's
 *   decode cost count against a second of predicted time to first token (see "Decode" on
 *   {@link makeStepTimeAware}). 0 leaves decode balance to the rotating tie-break; above 0 with
 *   several front ends the policy also tracks its requests in flight (the `clientCount` x
 *   in-flight floor).
 * - `maxRunningRequests`: the engines' per-rank cap on running requests (SGLang
 *   `--max-running-requests`, vLLM `--max-num-seqs`); unset, a rank's own row's
 *   `maxRunningRequests` when it reports one, else no cap (see "Running slots" on
 *   {@link makeStepTimeAware}). A value that is not a number >= 1 counts as
 *   unset.
 * - `slotWaitSeconds` (0.3): the predicted wait per request a rank holds beyond that cap (a value
 *   that is not a number >= 0 counts as unset).
 * - `homeWeight` (0.3 with several front ends, 0 with one): the share of a request's own prefill
 *   its home rank is credited with (see "Shared prefixes across front ends"; a value that is not a
 *   number >= 0 counts as unset).
 * - `sharedQueueQuantumSeconds` (1): with several front ends, a fresh rank's snapshot queue
 *   counts in whole steps of this many seconds of predicted prefill (0: not at all).
 * - `kvPoolTokens`: every rank's KV pool in tokens. Default: per rank, from its rows
 *   (`maxTotalNumTokens`, `tokenCapacity`, `numUsedTokens / kvCacheUsage`, or `numTotalTokens /
 *   kvCacheUsage` while nothing waits).
 * - `cacheTokens`: how many prompt tokens a rank's prefix cache keeps (LRU). Default: its KV pool,
 *   262,144 while no pool is known.
 * - `maxIndexedBlocks` (65,536): bound of the router-side prefix index.
 * - `staleAfterSeconds` (1) / `inclusionMarginSeconds` (0): as in `ledger-balanced`.
 *
 * @category own policies
 * @since 0.4.0
 */
export interface StepTimeAwareOptions {
  readonly cost?: StepCostModel | undefined
  readonly clientCount?: number | undefined
  readonly clientIndex?: number | undefined
  readonly decodeWeight?: number | undefined
  readonly maxRunningRequests?: number | undefined
  readonly slotWaitSeconds?: number | undefined
  readonly homeWeight?: number | undefined
  readonly sharedQueueQuantumSeconds?: number | undefined
  readonly kvPoolTokens?: number | undefined
  readonly cacheTokens?: number | undefined
  readonly maxIndexedBlocks?: number | undefined
  readonly staleAfterSeconds?: number | undefined
  readonly inclusionMarginSeconds?: number | undefined
}

/**
 * The state of a `step-time-aware` policy. Opaque and immutable: `ledger` holds the newest
 * snapshot per rank and health (no charges), `demand` what those snapshots say each rank still
 * has to do (and `priced`, what routing reads of it, priced once per snapshot), `ranks` this
 * front end's per-rank bookkeeping (prefill horizon, routes not yet in a snapshot, requests in
 * flight, prefix clock), `inflight` the rank and prompt of each request in flight, `prefixes` the
 * router-side prefix index. Any state can be routed from again, in any order; the prefix index is
 * cheapest when each state is used once, in order (as a router threads it), and a state kept alive
 * while its successors route on keeps the index writes made since it (one small record per
 * recorded block).
 *
 * @category own policies
 * @since 0.4.0
 */
export interface StepTimeAwareState {
  readonly ledger: LedgerState
  readonly demand: RankDemand
  readonly priced: PricedDemand
  readonly cursor: number
  /**
   * Requests this front end routed, and their uncached prompt tokens: the mean prompt a waiting
   * request is taken to have where a row counts waiting requests but no tokens.
   */
  readonly routes: number
  readonly routedUncached: number
  /**
   * The snapshot has rows that count waiting requests but no tokens and arrived before this front
   * end routed anything (no mean prompt to price them with): `route` prices them at the mean of
   * the prompts routed since, the prompt being routed for the first, until the next `observe`.
   */
  readonly waitingUnpriced: boolean
  readonly ranks: ReadonlyArray<number>
  readonly inflight: HashTrie<number>
  readonly prefixes: RankPrefixes
}

/**
 * What `route` reads of the snapshots, derived once per `observe` rather than once per route:
 * per rank the seconds of prefill its snapshot shows queued and the prompt tokens its prefix cache
 * keeps (its KV pool; the largest known while its own is unknown); over the ranks that published
 * a known load, the oldest snapshot time (`Infinity`: none) and the largest queue and context
 * (while all of them are fresh, what a stale or unknown rank is never below).
 *
 * @category own policies
 * @since 0.4.0
 */
export interface PricedDemand {
  readonly queuedSeconds: ReadonlyArray<number>
  readonly cacheTokens: ReadonlyArray<number>
  readonly oldestTimestamp: number
  readonly maxQueued: number
  readonly maxContext: number
  /** `freshMax` while every rank that published is fresh (the decode term's floors). */
  readonly freshMax: FreshMax
  /**
   * Per rank, the running-request cap the slot term uses (`maxRunningRequests` of the options, else
   * of the rank's row; `Infinity`: none), and whether any rank has one.
   */
  readonly slotCaps: ReadonlyArray<number>
  readonly anyCap: boolean
  /** Some rank has no row with request counts (never published, or only unknown rows). */
  readonly anyUndated: boolean
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

/**
 * Build loadledger's step-time-aware policy (`step-time-aware`).
 *
 * **What it optimises**: the predicted lockstep step time of the DP group after admission, prefill
 * chunks included. In a lockstep step every rank waits for the slowest, and a rank's prefill
 * chunk (up to `cost.chunkTokens` tokens) makes the step it runs in many times longer than a
 * decode step: the group's time is the sum over steps of the slowest rank's local time. Placing a
 * prompt on rank `r` therefore costs the group nothing while its prefill ends before the busiest
 * rank's prefill ends (it runs in steps that are long anyway), and the overhang otherwise; in both
 * cases the request's first token comes once `r` has done the prefill queued before it and then
 * this one. The policy picks the rank with the least
 *
 *     max(horizon_r - now, prefill(queued_r)) + prefill(uncached_r, cached_r)  [+ decodeWeight * decode_r]
 *
 * seconds (`prefill` priced by `cost`, see `prefillSeconds`): the rank's prefill horizon (when the
 * prompts this front end sent it are prefilled, as the cost model predicts) or the prefill of the
 * tokens its snapshot shows waiting, whichever is later; then this prompt's uncached tokens after
 * the prefix the rank is taken to still cache (a router-side index of the blocks sent to each
 * rank, aged by the tokens sent to the rank since: LRU of `cacheTokens`). Minimising it minimises
 * the overhang and, among placements with none, the request's predicted time to first token: a
 * long prompt's neighbours go where their prefill overlaps it, and a shared prefix attracts only
 * while the prefill it saves outweighs the queue it joins (no herding). Exact ties (ranks with
 * nothing left to prefill) break by a rotating index, so idle ranks take turns, as vLLM's rotating
 * `eng_start_index`. Each term is a per-rank cost in seconds, the shape a weighted-scorer
 * combinator sums.
 *
 * **Decode.** Every step is as long as the slowest rank's, decode included, so a rank's decode
 * load (its requests and their context) also sets the group's step time. With `decodeWeight` w
 * above 0 the score adds w x the rank's decode step cost after admission (`(requests + 1) *
 * decodeSecondsPerRequest + (context + prompt) * decodeSecondsPerContextToken`; with several front
 * ends, requests never below `clientCount` x this front end's in flight). The default is 8 with one
 * front end, whose snapshot is fresh at every step: in the simulator, on the Mooncake traces at 70%
 * of capacity behind one SGLang controller, any w from 4 to 16 lowered TTFT p99 by 2-4% and ITL p99
 * by up to 3% against w = 0 (w = 2 did not). With several front ends the default is 0: the decode
 * term is read from the shared stale snapshot, and on the Azure conversation trace behind four
 * vLLM front ends w = 0.5 to 32 raised TTFT p99 by 30-50% (herding, as for the queue below).
 *
 * **Running slots.** An engine runs at most `maxRunningRequests` requests per rank; a request
 * routed to a rank at that cap waits for a running request to finish before its prefill starts,
 * however short the rank's prefill queue. With a cap (the option, else the rank's row's
 * `maxRunningRequests`, as SGLang's load reports publish it), a rank whose requests (its
 * snapshot's running and waiting plus the routes since, `clientCount` times) would exceed the cap
 * with this one adds `slotWaitSeconds` per request beyond it. In the simulator (cap 64), on the Azure
 * 2023 conversation trace at 2.05, 2.15, 2.25, 2.65, 2.76 and 2.85x of its rate (70-95% of
 * capacity), 0.3 s gave a lower TTFT p99 than no slot term at all six rates behind one SGLang
 * controller (by 1-150 points of the best other policy's) and lower or equal behind four vLLM front
 * ends, at an ITL p99 up to 3 points higher; 0.15, 0.2, 0.4, 0.5, 0.7 and 1.0 s were each worse than
 * no term at one rate or more (bursts at the cap make TTFT p99 jumpy in this term). The Mooncake
 * traces never reach the cap at their compare rates and are unchanged. The registry entry takes the
 * cap from `PolicyOptions.maxRunningRequests`, which the simulator sets to its engines' cap.
 *
 * **Several front ends** (`clientCount` > 1, vLLM API servers): they all read the same snapshot,
 * published every 100 ms or so, and a fine-grained term every front end reads from the same stale
 * view sends them all to the same rank until the next publish (herding; in the simulator, behind
 * four vLLM front ends on the Azure conversation trace, counting the snapshot's queue in full cost
 * 15-20% on TTFT p99). So each front end scores a fresh rank on what only it knows (its own
 * prefill horizon) plus the snapshot's queue rounded down to whole `sharedQueueQuantumSeconds`
 * (1 s) of predicted prefill: below that, differences are what herding is made of and ties go
 * round the rotating index, whose scan starts at `floor(dpSize * clientIndex / clientCount)`;
 * above it (an overloaded rank) the queue counts. The snapshot still bounds stale and unknown
 * ranks in full and excludes KV-infeasible ones, counting this front end's routes since it
 * `clientCount` times. One front end (SGLang's controller) reads a fresh snapshot per step: there
 * the queue counts in full.
 *
 * **Shared prefixes across front ends.** Each front end's prefix index knows only the routes it
 * made, and the turns of one conversation arrive at different front ends: a turn's prefix usually
 * sits on a rank this front end never sent it to. Front ends agree on where a prefix lives without
 * talking to each other by hashing it (consistent hashing, as SMG's `prefix-hash`): a request's
 * home is the rank `fnv1a(key) mod dpSize`, `key` being its first prefix block that at most one
 * rank holds in this front end's index (blocks two or more ranks hold, such as a system prompt every
 * conversation starts with, say nothing about where one conversation lives), and the home's score
 * is lowered by `homeWeight` x the request's own prefill there, the share of it a prefix cached
 * there would save. Bounded: a home whose queue is longer than that is passed over. Only fresh,
 * healthy ranks whose request counts are known get the credit (unknown is never attractive). In the
 * simulator, behind four vLLM front ends, `homeWeight` 0.3 lowered ITL p99 on the Mooncake synthetic trace
 * at six rates from 0.24x to 0.35x (from 1-7% above the best other policy's to 2-7% below) and
 * TTFT p99 at all six; on the Mooncake conversation trace, at six rates from 0.29x to 0.42x, ITL p99
 * by 0.6-2.2 points (relative to the best other's) at all six and TTFT p99 at four (by up to 14
 * points at the busiest; equal at 0.307x, 1.2 points higher at 0.29x). The price: a sync-wait
 * share 0.3-4.5 points higher (prefix families gather on their homes). Bounding the credit to
 * homes with at most 1.25-3x the mean requests in flight (as consistent hashing with bounded loads
 * does) kept sync wait down but gave back the ITL gain on the synthetic trace. With one front end
 * (whose index sees every route) the credit raised TTFT p99, so it is off there. A request without
 * `prefixHashes` has no home.
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
 * chosen. A row that counts requests but no tokens (vLLM's coordinator publishes `[waiting,
 * running, KV usage]`, no time) is dated when observed and read as fresh for the queue, the pending
 * prefill it includes and the home credit; its queue is its waiting requests x the mean uncached
 * prompt of the requests this front end routed (before it routed any, the prompt being routed: a
 * rank with eleven waiting requests is not an idle one, miles PR #2012's snapshot, S16). In the simulator, behind four vLLM front ends on
 * such rows, this took TTFT p99 on the Mooncake synthetic trace at 70% and 90% of capacity from
 * 17.5 s and 38.9 s to 9.89 s and 14.1 s (before, the pending prefill never left). KV
 * feasibility: while some healthy rank's known free KV, minus the prompt tokens routed to it since
 * its snapshot, holds the prompt, no other rank is chosen. Exact ties break by
 * a rotating index. The prefix index covers any number of ranks.
 *
 * **Explanation** (why a rank won; seconds throughout): `scores[r]` is rank `r`'s score (lower
 * wins); `details.matchedBlocks[r]` the prompt's prefix blocks the index takes `r` to cache;
 * `details.terms` the score's terms, five per rank in one array (`terms[5 * r + k]`, `k` in the
 * order of `details.termNames`, `["wait", "own", "decode", "slot", "home"]`):
 * - `wait`: `max(horizon_r - now, queue_r)`, the wait before this prompt's prefill could start
 *   (this front end's prefill horizon, or the snapshot's queue as counted above);
 * - `own`: this prompt's prefill after the prefix `r` is taken to cache;
 * - `decode`: `decodeWeight` x `r`'s decode step cost after admission (0 when the weight is 0);
 * - `slot`: `slotWaitSeconds` x the requests beyond `r`'s running-request cap (0 below the cap);
 * - `home`: minus `homeWeight` x `own` on the request's home rank, 0 elsewhere (never positive).
 *
 * `scores[r]` equals `wait + own + home + decode + slot` summed in that order, exactly (the order
 * the score is summed in); the terms explain, they decide nothing. Unhealthy and KV-infeasible
 * ranks are scored too (never chosen). A pinned request (`routedDpRank`) is not scored: `terms`
 * and `termNames` are absent. Cost: one array of `5 x dpSize` doubles per route, 7-11% of a route
 * at 8 ranks on the built package (about 60-80 ns; interleaved with the code before, 2026-12-02).
 *
 * Errors: `InvalidInput` naming `clientCount` / `clientIndex` when `checkClientOptions` refuses
 * them (every route, first), `NoRanks`, `InvalidInput` (`inputLength`), `InvalidRoutedRank`,
 * `AllRanksUnavailable`.
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
 * // why: per rank [wait, own, decode, slot, home]; rank 0 waits for a's prefill, rank 1 for nothing
 * const terms = b._tag === "Routed" ? (b.explanation.details?.["terms"] as Array<number>) : []
 * terms.slice(5, 10) // => [0, 0.1081, 0.00091296, 0, 0]
 * terms[0]! > 3.6 && terms[1] === terms[6] // => true
 * ```
 *
 * @category own policies
 * @since 0.4.0
 */
export const makeStepTimeAware = (options: StepTimeAwareOptions = {}): StepTimeAwarePolicy => {
  const st = stepSettings(options)
  return {
    name: "step-time-aware",
    init: (dpSize) => init(st, dpSize),
    observe: (s, loads, now) => observe(st, s, loads, now),
    route: (s, request, now) => route(st, s, request, now),
    finish: (s, ids) => finish(st, s, ids),
    setStatus: (s, status) => {
      const ledger = setLedgerStatus(s.ledger, status)
      return ledger === s.ledger ? s : { ...s, ledger }
    },
    view: (s, now) => ledgerView(s.ledger, now, st.staleAfter)
  }
}
