/**
 * The types of `step-time-aware` (`makeStepTimeAware`): its options, its state and its named terms
 * (`stepTimeTerms`), below the policy and its internals (`internal/step*.ts`).
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
 * The state of a `step-time-aware` policy, opaque and immutable: the `ledger` (newest rows, health),
 * the `demand` they imply (priced once per snapshot), per-rank bookkeeping `ranks` (horizon, routes
 * since the snapshot, in flight, prefix clock), the `inflight` requests, the router-side `prefixes`;
 * `routes` / `routedUncached` price rows with waiting requests but no tokens (`waitingUnpriced`:
 * such rows came before any route); `speeds` (set by `withSpeed`) divide each rank's terms. Any
 * state can be routed from again.
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

/**
 * The terms of a `"step-time"` configuration, in seconds of lockstep step time, and the option each
 * one's weight sets: `queuedPrefill` (the wait before this prefill starts; weight 1 only),
 * `ownPrefill` (this prompt after its cached prefix; weight 1 only), `decodeLoad` (`decodeWeight`),
 * `slotWait` (`slotWaitSeconds`, per request past the running cap), `homeCredit` (`homeWeight`).
 *
 * @example
 * ```ts
 * import { stepTimeTerms } from "@loadledger/policies"
 * stepTimeTerms.decodeLoad // => "decodeWeight"
 * ```
 *
 * @category own policies
 * @since 0.6.0
 */
export const stepTimeTerms: Readonly<Record<string, string | undefined>> = {
  queuedPrefill: undefined,
  ownPrefill: undefined,
  decodeLoad: "decodeWeight",
  slotWait: "slotWaitSeconds",
  homeCredit: "homeWeight"
}
