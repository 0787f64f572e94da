/**
 * Three laws about where work goes over time: no systematic tie winner, no starvation under
 * affinity, and KV feasibility.
 *
 * @since 0.3.0
 */
import type { Policy } from "@loadledger/policies"
import { affinityBurstCounts, t0, tieRoundCounts } from "./internal/fairness.js"
import type { AffinityBurst, KvCase, TieRounds } from "./LawTypes.js"

/**
 * The three laws' predicates for `policy` (`true` where the law holds):
 * - `noSystematicTieWinner`: at the end of a {@link TieRounds} case, per-rank counts differ by at
 *   most one (a rotating or load-charging tie-break, not "lowest index wins every time");
 * - `noStarvationUnderAffinity`: every rank receives at least one stream of an
 *   {@link AffinityBurst} (no prefix "herding" while a rank idles);
 * - `kvFeasibility`: when some rank's free KV (`kvAvailableTokens`) holds the request's prompt, the
 *   chosen rank's does too.
 *
 * **When to use**: through {@link policyLawPredicates} / `registryLawCases`, or alone to show a
 * counterexample.
 *
 * @example
 * ```ts
 * import { totalRequests, ledgerBalanced } from "@loadledger/policies"
 * import { fairnessLawPredicates } from "@loadledger/testing"
 * const c = { dpSize: 4, load: { dpRank: 0, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0 }, rounds: 4, perRound: 1, inputLength: 10 }
 * fairnessLawPredicates(totalRequests).noSystematicTieWinner(c) // => false
 * fairnessLawPredicates(ledgerBalanced).noSystematicTieWinner(c) // => true
 * ```
 *
 * @category laws
 * @since 0.3.0
 */
export const fairnessLawPredicates = <S>(policy: Policy<S>) => ({
  noSystematicTieWinner: (c: TieRounds): boolean => {
    const counts = tieRoundCounts(policy, c)
    return Math.max(...counts) - Math.min(...counts) <= 1
  },
  noStarvationUnderAffinity: (c: AffinityBurst): boolean =>
    affinityBurstCounts(policy, c).every((k) => k > 0),
  kvFeasibility: (c: KvCase): boolean => {
    const n = c.loads.length
    const s = policy.observe(policy.init(n), c.loads, t0)
    const out = policy.route(s, { requestId: "kv", inputLength: c.inputLength }, t0 + 0.001)
    if (out._tag !== "Routed") return true
    const fits = (r: number) => (c.loads[r]!.kvAvailableTokens ?? 0) >= c.inputLength
    return fits(out.rank) || !c.loads.some((_, r) => fits(r))
  }
})
