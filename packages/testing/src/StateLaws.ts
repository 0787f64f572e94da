/**
 * Laws on the state a router or a policy keeps about a worker: the state is only what the
 * evidence says. First law here: a pinned rank (`routedDpRank`) is honoured or refused with an
 * error, never silently replaced by another rank.
 *
 * Field reports of the fault: a missing or pinned rank read as rank 0 (ai-dynamo/dynamo #8000,
 * "missing rank stops masquerading as rank 0"; #7214, a router that "always select[s] dp 0" when no
 * rank was passed on), and ranks outside a pod's own range forwarded instead of refused
 * (llm-d/llm-d-router #2922, vllm-project/router #223).
 *
 * @since 0.4.0
 */
import type { Policy, RankLoad } from "@loadledger/policies"

/**
 * One request pinned to `pinned` that a policy placed on `chose` instead (without an error).
 *
 * @category laws
 * @since 0.4.0
 */
export interface PinnedRankViolation {
  readonly policy: string
  readonly pinned: number
  readonly chose: number
}

const idleRows = (dpSize: number): Array<RankLoad> =>
  Array.from({ length: dpSize }, (_, dpRank) => ({
    dpRank,
    timestamp: 1,
    numRunningReqs: 0,
    numWaitingReqs: 0,
    numTotalTokens: 0,
    kvCacheUsage: 0
  }))

/**
 * The pinned-rank law, checked on `policy` over `dpSize` idle ranks (default 4): for every rank
 * `r`, in turn on one state (so earlier placements weigh), a request with `routedDpRank: r` is
 * placed on `r` or answered with a `PolicyError`; a pin past the last rank is an error. Returns
 * the violations (empty: the law holds).
 *
 * **When to use**: over every registered policy (`policyEntries()`), with a list of the known
 * exceptions kept exact, so a policy cannot start ignoring a pin unseen.
 *
 * @example
 * ```ts
 * import { pinnedRankViolations } from "@loadledger/testing"
 * import { totalRequests, findPolicy } from "@loadledger/policies"
 * pinnedRankViolations(totalRequests) // => []
 * pinnedRankViolations(findPolicy("smg/cache-aware")!.make({})) // => []
 * pinnedRankViolations(findPolicy("smg/round-robin")!.make({}))[0] // => { policy: "smg/round-robin", pinned: 3, chose: 0 }
 * ```
 *
 * @category laws
 * @since 0.4.0
 */
export const pinnedRankViolations = <S>(
  policy: Policy<S>,
  dpSize = 4
): ReadonlyArray<PinnedRankViolation> => {
  const out: Array<PinnedRankViolation> = []
  let state = policy.observe(policy.init(dpSize), idleRows(dpSize), 1)
  for (let pinned = dpSize - 1; pinned >= -1; pinned--) {
    // the last round pins past the last rank: only an error is right
    const target = pinned < 0 ? dpSize : pinned
    const r = policy.route(state, { requestId: `pin-${target}`, inputLength: 64, routedDpRank: target }, 1.5)
    if (r._tag !== "Routed") continue
    if (r.rank !== target) out.push({ policy: policy.name, pinned: target, chose: r.rank })
    state = r.state
  }
  return out
}
