/**
 * The types of the `step-time-aware` policy (`makeStepTimeAware`): its options, its state and the
 * per-snapshot prices it routes on, below the policy and its internals (`internal/step*.ts`).
 *
 * @since 0.6.0
 */
import type { HashTrie } from "./internal/HashTrie.js"
import type { LedgerState } from "./internal/LedgerState.js"
import type { FreshMax } from "./internal/LoadView.js"
import type { RankDemand } from "./internal/RankDemand.js"
import type { RankPrefixes } from "./internal/RankPrefixes.js"
import type { StepCostModel } from "./StepCost.js"

/**
 * Options of `makeStepTimeAware`. Every field is optional.
 *
 * - `cost` (`glm53H200StepCost`): the step cost model, e.g. from `stepCostFrom`.
 * - `clientCount` / `clientIndex`: front ends sharing the ranks (see "Several front ends" on
 *   `makeStepTimeAware`); the tie scan starts at `floor(dpSize * clientIndex / clientCount)`.
 * - `decodeWeight` (8 with one front end, 0 with several; a value that is not a number >= 0 counts
 *   as unset): how many decode steps of a rank's
 *   decode cost count against a second of predicted time to first token (see "Decode" on
 *   `makeStepTimeAware`). 0 leaves decode balance to the rotating tie-break; above 0 with
 *   several front ends the policy also tracks its requests in flight (the `clientCount` x
 *   in-flight floor).
 * - `maxRunningRequests`: the engines' per-rank cap on running requests (SGLang
 *   `--max-running-requests`, vLLM `--max-num-seqs`); unset, a rank's own row's
 *   `maxRunningRequests` when it reports one, else no cap (see "Running slots" on
 *   `makeStepTimeAware`). A value that is not a number >= 1 counts as
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
