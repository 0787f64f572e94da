/**
 * The `step-time-aware` policy: place each request where the lockstep DP group's predicted step
 * time, prefill chunks included, grows least, then where its own first token comes soonest. Its terms:
 * `internal/stepTerms.ts`; its route `internal/stepRoute.ts`; its state `internal/stepState.ts`.
 *
 * @since 0.4.0
 */
import type { Policy } from "../Policy.js"
import { ledgerView } from "./internal/LoadView.js"
import { route } from "./internal/stepRoute.js"
import { finish, init, observe, setStatus, stepSettings } from "./internal/stepState.js"
import type { RankView } from "./RankView.js"
import type { StepTimeAwareOptions, StepTimeAwareState } from "./StepTimeTypes.js"

/**
 * A `step-time-aware` policy plus `view`, the per-rank load it reads at `now`.
 *
 * @category own policies
 * @since 0.4.0
 */
export interface StepTimeAwarePolicy extends Policy<StepTimeAwareState> {
  readonly view: (state: StepTimeAwareState, now: number) => ReadonlyArray<RankView>
  /** The state with each rank's seconds priced at `speeds[r]` (the speed term, `withSpeed`). @since 0.8.0 */
  readonly withSpeeds: (state: StepTimeAwareState, speeds: ReadonlyArray<number>) => StepTimeAwareState
}

/**
 * Build loadledger's step-time-aware policy (`step-time-aware`): the rank with the least predicted
 * seconds, summed from named terms (`stepTimeTerms` names their weights):
 *
 *     wait (max(horizon_r - now, prefill(queued_r))) + own (prefill(uncached_r after cached_r))
 *       + home (-homeWeight x own on the home rank) + decode (decodeWeight x decode step) + slot
 *
 * `wait`: this front end's prefill horizon on `r` or the snapshot's queue (with several front ends in
 * whole `sharedQueueQuantumSeconds`); `own`: this prompt's prefill after the prefix a router-side index
 * takes `r` to cache (LRU of `cacheTokens`); `decode` (8 with one front end, 0 with several); `slot`
 * (`slotWaitSeconds` per request beyond the running cap); `home` (several front ends: the request's
 * consistent-hash home). Then KV admission, then a rotating tie-break. Priced by `cost` (default
 * {@link glm53H200StepCost}; `stepCostFrom` fits one). Why each default: `docs/own-policies.md`.
 *
 * **When to use**: DP-attention groups (SGLang DP attention, vLLM DP + EP) whose prefill chunks stall
 * the group: long or uneven prompts, multi-turn chat with prefix reuse, bursts.
 *
 * **Unknown, stale, unhealthy**: as `ledger-balanced` (never less busy than the busiest known or
 * fresh rank, chosen only while no fresh rank is healthy; unhealthy never); a row with counts but no
 * tokens (vLLM's) queues its waiting requests x the mean uncached prompt routed.
 *
 * **Explanation** (seconds): `scores[r]`, `details.matchedBlocks[r]`, `details.terms[5 * r + k]` in
 * the order of `details.termNames` (`wait`, `own`, `decode`, `slot`, `home`), summed as above into
 * `scores[r]` exactly. A pinned request is not scored. Errors: `InvalidInput` (`clientCount` /
 * `clientIndex`, `inputLength`), `NoRanks`, `InvalidRoutedRank`, `AllRanksUnavailable`.
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
    setStatus,
    view: (s, now) => ledgerView(s.ledger, now, st.staleAfter),
    withSpeeds: (s, speeds) => (s.speeds === speeds ? s : { ...s, speeds })
  }
}
