/**
 * `makeStepTimeAware`; its terms: `internal/stepTerms.ts`, route `stepRoute.ts`, state `stepState.ts`.
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
 * `step-time-aware`: the rank with the least predicted seconds of lockstep step time, summed from
 * the named terms of `stepTimeTerms` (per rank: `wait` before this prefill starts, `own` prefill
 * after the cached prefix, `decode` x `decodeWeight`, `slot` wait past the running cap, minus the
 * `home` credit), then KV admission, then a rotating tie-break; priced by `cost` (default
 * {@link glm53H200StepCost}, or `stepCostFrom`). Stale, unknown and unhealthy ranks as
 * `ledger-balanced`. Formula, defaults and measurements: docs/own-policies.md.
 *
 * **When to use**: DP-attention groups (SGLang DP attention, vLLM DP + EP) whose prefill chunks
 * stall the group: long or uneven prompts, prefix reuse, bursts. Explanation (seconds):
 * `scores[r]`, `details.matchedBlocks[r]`, `details.terms[5 * r + k]` in `details.termNames` order.
 * Errors: `InvalidInput` (`clientCount` / `clientIndex`, `inputLength`), `NoRanks`,
 * `InvalidRoutedRank`, `AllRanksUnavailable`.
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
