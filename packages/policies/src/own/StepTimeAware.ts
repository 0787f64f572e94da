/**
 * The `step-time-aware` policy: place each request where the lockstep DP group's predicted step
 * time, prefill chunks included, grows least, and among such places where its own first token
 * comes soonest.
 *
 * Its cost terms are named functions with their units (`internal/stepTerms.ts`; their weights
 * are the options `stepTimeTerms` names), its route `internal/stepRoute.ts`, its state machine
 * `internal/stepState.ts`, its types `StepTimeTypes.ts`.
 *
 * @since 0.4.0
 */
import type { Policy } from "../Policy.js"
import { setLedgerStatus } from "./internal/InflightCharges.js"
import { ledgerView } from "./internal/LoadView.js"
import { FORGET_TOKENS } from "./internal/RankPrefixes.js"
import { route } from "./internal/stepRoute.js"
import { FIELDS, finish, init, observe, SENT, stepSettings } from "./internal/stepState.js"
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
}

/**
 * Build loadledger's step-time-aware policy (`step-time-aware`).
 *
 * **What it optimises**: the predicted lockstep step time of the DP group after admission, prefill
 * chunks included (every rank waits for the slowest, and a prefill chunk makes its step many times
 * longer than a decode step), then the request's own time to first token. It picks the least
 *
 *     max(horizon_r - now, prefill(queued_r)) + prefill(uncached_r, cached_r)
 *       [+ decode_r + slot_r - home_r]
 *
 * seconds (priced by `cost`, see `prefillSeconds`): the later of this front end's prefill horizon
 * on `r` and the prefill its snapshot shows queued, then this prompt's prefill after the prefix
 * `r` is taken to cache (a router-side index aged by the tokens sent since: LRU of
 * `cacheTokens`). The terms (`stepTimeTerms`; `internal/stepTerms.ts`): `decodeLoad`
 * (`decodeWeight` x the decode step cost after admission: 8 with one front end, 0 with several),
 * `slotWait` (`slotWaitSeconds` per request beyond the running-request cap), `homeCredit` (with
 * several front ends, `homeWeight` x the own prefill off the request's consistent-hash home).
 * With several front ends a fresh rank's snapshot queue counts only in whole
 * `sharedQueueQuantumSeconds` (a term every front end reads from the same stale snapshot herds).
 * Exact ties break by a rotating index. Why each default, with the simulator's figures:
 * `docs/own-policies.md`.
 *
 * **The cost model is an argument** (`cost`, default {@link glm53H200StepCost}; `stepCostFrom`
 * fits one from any step-time function): the package does not depend on `@loadledger/step-time`.
 *
 * **When to use**: DP-attention groups (SGLang DP attention, vLLM DP + EP) whose prefill chunks
 * stall the group: long or uneven prompts, multi-turn chat with prefix reuse, bursts.
 *
 * **Unknown, absent, stale, unhealthy**: as `ledger-balanced` (never less busy than the busiest
 * known or fresh rank; a field not reported takes the busiest reported value; unhealthy ranks are
 * never chosen); a row with counts but no tokens (vLLM's) prices its queue as its waiting requests x
 * the mean uncached prompt routed. KV feasibility as `makeScored`.
 *
 * **Explanation** (seconds): `scores[r]`; `details.matchedBlocks[r]`; `details.terms`, five per
 * rank (`terms[5 * r + k]`, `k` in the order of `details.termNames`: `wait`, `own`, `decode`,
 * `slot`, `home`); `wait + own + home + decode + slot`, summed in that order, is `scores[r]` exactly. A pinned request is not scored.
 *
 * Errors: `InvalidInput` (`clientCount` / `clientIndex`, every route first; `inputLength`),
 * `NoRanks`, `InvalidRoutedRank`, `AllRanksUnavailable`.
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
      if (ledger === s.ledger) return s
      // a rank marked unhealthy keeps none of its prefix entries (the stale-prefix law): its
      // prefix clock jumps past any cache, so every block recorded before reads as evicted
      const ranks = s.ranks.slice()
      for (let r = 0; r < ledger.dpSize; r++)
        if (s.ledger.healthy[r] !== false && ledger.healthy[r] === false)
          ranks[r * FIELDS + SENT]! += FORGET_TOKENS
      return { ...s, ledger, ranks }
    },
    view: (s, now) => ledgerView(s.ledger, now, st.staleAfter)
  }
}
