/**
 * Three laws about where work goes over time: no systematic tie winner, no starvation under
 * affinity, and KV feasibility.
 *
 * @since 0.3.0
 */
import type { Policy, RankLoad } from "@loadledger/policies"
import { affinityBurstCounts, t0, tieRoundCounts } from "./internal/fairness.js"

/**
 * One case of the tie law: `rounds` times, every rank publishes the same `load` (stamped one second
 * after the previous round, so every earlier route is included), then `perRound` equal requests of
 * `inputLength` tokens are routed 1 ms apart.
 *
 * @category models
 * @since 0.3.0
 */
export interface TieRounds {
  readonly dpSize: number
  readonly load: RankLoad
  readonly rounds: number
  readonly perRound: number
  readonly inputLength: number
}

/**
 * One case of the affinity law: `streams` (at least `dpSize`) concurrent requests arrive at an idle
 * group (every rank reports 0 running, 0 waiting and the same `numTotalTokens`), 0.1 ms apart;
 * stream `i` belongs to group `i mod groups` and carries that group's prefix hashes (`prefixBlocks`
 * blocks, as RL rollouts sharing one prompt do).
 *
 * @category models
 * @since 0.3.0
 */
export interface AffinityBurst {
  readonly dpSize: number
  readonly streams: number
  readonly groups: number
  readonly prefixBlocks: number
  readonly numTotalTokens: number
  readonly inputLength: number
}

/**
 * One case of the KV law: each rank reports `kvAvailableTokens` free tokens (of
 * `maxTotalNumTokens`), counts and usage consistent with it; one request of `inputLength` tokens.
 *
 * @category models
 * @since 0.3.0
 */
export interface KvCase {
  readonly loads: ReadonlyArray<RankLoad>
  readonly inputLength: number
}

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
