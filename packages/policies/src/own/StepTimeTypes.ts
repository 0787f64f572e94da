/**
 * The types of `step-time-aware` (`makeStepTimeAware`): its options and its state, below the policy
 * and its internals (`internal/step*.ts`).
 *
 * @since 0.6.0
 */
import type { HashTrie } from "./internal/HashTrie.js"
import type { LedgerState } from "./internal/LedgerState.js"
import type { Demand } from "./internal/RankDemand.js"
import type { RankPrefixes } from "./internal/RankPrefixes.js"
import type { StepCostModel } from "./StepCost.js"

/**
 * Options of `makeStepTimeAware`, all optional; a weight that is not a finite number >= 0 (a cap
 * >= 1) counts as unset. Why each default: `docs/own-policies.md`.
 *
 * - `cost` (`glm53H200StepCost`): the step cost model, e.g. from `stepCostFrom`.
 * - `clientCount` / `clientIndex`: front ends sharing the ranks; the tie scan starts at
 *   `floor(dpSize * clientIndex / clientCount)`.
 * - `decodeWeight` (8 with one front end, 0 with several): decode steps of a rank's decode cost
 *   counted against a second of time to first token (above 0 with several front ends, the requests
 *   in flight are tracked too).
 * - `maxRunningRequests`: the engines' per-rank running cap (SGLang `--max-running-requests`, vLLM
 *   `--max-num-seqs`); unset, each rank's row's `maxRunningRequests`, else none.
 * - `slotWaitSeconds` (0.3): predicted wait per request beyond that cap.
 * - `homeWeight` (0.3 with several front ends, 0 with one): the share of the own prefill credited to
 *   the request's consistent-hash home.
 * - `sharedQueueQuantumSeconds` (1): with several front ends, a fresh rank's snapshot queue counts in
 *   whole steps of this many seconds (0: not at all).
 * - `kvPoolTokens`: every rank's KV pool; default per rank from its rows (`maxTotalNumTokens`,
 *   `tokenCapacity`, used or total tokens / `kvCacheUsage`).
 * - `cacheTokens`: prompt tokens a rank's prefix cache keeps (LRU); default its pool, else 262,144.
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
 * The state of a `step-time-aware` policy, opaque and immutable: `ledger` the newest snapshot per rank
 * and health, `demand` what they say each rank still has to do (priced once per snapshot), `ranks`
 * this front end's per-rank bookkeeping (prefill horizon, routes since the snapshot, in flight, prefix
 * clock), `inflight` each tracked request's rank and prompt, `prefixes` the router-side prefix index;
 * `routes` / `routedUncached` price rows that count waiting requests but no tokens (at the mean
 * uncached prompt routed; `waitingUnpriced`: such rows came before any route). Any state can be routed
 * from again; the index is cheapest when each is used once, in order, and a state kept alive keeps the
 * index writes made since it. `speeds` (set by `withSpeed`): each rank's terms are divided by its speed.
 *
 * @category own policies
 * @since 0.4.0
 */
export interface StepTimeAwareState {
  readonly ledger: LedgerState
  readonly demand: Demand
  readonly cursor: number
  readonly routes: number
  readonly routedUncached: number
  readonly waitingUnpriced: boolean
  readonly ranks: ReadonlyArray<number>
  readonly inflight: HashTrie<number>
  readonly prefixes: RankPrefixes
  /** Per rank, the speed its seconds are priced at (the speed term, `withSpeed`); absent: all 1. */
  readonly speeds?: ReadonlyArray<number> | undefined
}
