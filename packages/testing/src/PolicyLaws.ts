/**
 * Reusable fast-check laws every loadledger routing policy can be held to.
 *
 * @since 0.1.0
 */
import type { Policy, RankLoad, RouteRequest } from "@loadledger/policies"
import fc from "fast-check"
import type { AffinityBurst, KvCase, TieRounds } from "./FairnessLaws.js"
import { affinityBurstArb, kvCaseArb, tieRoundsArb } from "./internal/fairness.js"
import { allHealthy, loadFields, scenarioArb } from "./internal/scenario.js"
import { policyLawPredicates } from "./LawPredicates.js"

/**
 * One generated situation: `dpSize` ranks with health `status`, one snapshot per rank observed at
 * `startSeconds`, then `requests` routed at `startSeconds + gapsSeconds[0]`,
 * `+ gapsSeconds[1]`, ... (times in seconds). Half the generated scenarios give every rank the same
 * snapshot (an idle or freshly started cluster), where tie-breaking decides.
 *
 * @category models
 * @since 0.1.0
 */
export interface PolicyScenario {
  readonly dpSize: number
  readonly status: ReadonlyArray<boolean>
  readonly loads: ReadonlyArray<RankLoad>
  readonly requests: ReadonlyArray<RouteRequest>
  readonly startSeconds: number
  readonly gapsSeconds: ReadonlyArray<number>
}

/**
 * Overrides for the generators: `dpSize` (default 1..16), `request` (default: prompt of 1..8192
 * tokens, not pinned, no bootstrap room), `load(dpRank)` (default: timestamp 1..1000 s, 0..64
 * running and waiting, 0..200000 tokens, every field present), `maxRequests` per scenario
 * (default 24).
 *
 * @category models
 * @since 0.1.0
 */
export interface PolicyArbitraries {
  readonly dpSize?: fc.Arbitrary<number> | undefined
  readonly request?: fc.Arbitrary<RouteRequest> | undefined
  readonly load?: ((dpRank: number) => fc.Arbitrary<RankLoad>) | undefined
  readonly maxRequests?: number | undefined
}

/**
 * A load field the unknown law can hide.
 *
 * @category models
 * @since 0.2.0
 */
export type LoadField =
  | "numRunningReqs"
  | "numWaitingReqs"
  | "numTotalTokens"
  | "kvCacheUsage"
  | "numWaitingUncachedTokens"

/**
 * How the unknown law hides a rank's load: an `unknown` row (no load fields, the timestamp kept), or
 * the row without the listed fields.
 *
 * @category models
 * @since 0.2.0
 */
export type HiddenLoad =
  | { readonly kind: "unknown" }
  | { readonly kind: "absent"; readonly fields: ReadonlyArray<LoadField> }

/**
 * One case of the unknown law: in `scenario`, rank `rank` (taken modulo `dpSize`) has its load
 * hidden as `hidden`; the donor is another rank (`donor` picks it: rank
 * `(rank + 1 + donor mod (dpSize - 1)) mod dpSize`), whose values fill the hidden fields. With
 * `heavier` and an `unknown` row, each filled count is one step heavier than the donor's (+ 1;
 * `kvCacheUsage` is copied: a step across a KV threshold is no tie): the tie case. A hidden rank that is chosen then either beat the
 * donor outright or won a tie against it, and an unknown load must never win a tie against an
 * equal known one.
 *
 * @category models
 * @since 0.2.0
 */
export interface UnknownCase {
  readonly rank: number
  readonly donor: number
  readonly hidden: HiddenLoad
  /** Fill an `unknown` row's counts one step heavier than the donor's (absent: `false`). @since 0.2.0 */
  readonly heavier?: boolean | undefined
}

/**
 * The ten laws as fast-check properties over a {@link PolicyScenario}; run one with `fc.assert`, or
 * show that an upstream policy breaks one on purpose with `fc.check(...).failed`.
 *
 * @category models
 * @since 0.1.0
 */
export interface PolicyLaws {
  /** Every `route` gives an integer rank in `[0, dpSize)` or a `PolicyError`; nothing throws. */
  readonly validRankOrTypedError: fc.IPropertyWithHooks<[PolicyScenario]>
  /** Same state and inputs, same decision and next state (run twice; also catches mutated state). */
  readonly deterministic: fc.IPropertyWithHooks<[PolicyScenario]>
  /** An unpinned request never lands on a rank marked unhealthy (for policies that honour status). */
  readonly healthyRanksOnly: fc.IPropertyWithHooks<[PolicyScenario]>
  /** Equal stale snapshots, k equal requests inside one refresh window: per-rank counts differ by at most 1. */
  readonly burstSpread: fc.IPropertyWithHooks<[PolicyScenario]>
  /** Relabelling ranks (loads, status, pinned ranks) relabels every decision. */
  readonly permutationEquivariant: fc.IPropertyWithHooks<[readonly [PolicyScenario, ReadonlyArray<number>]]>
  /** Adding load to rank j never turns a first decision for another rank into one for j. */
  readonly monotoneInLoad: fc.IPropertyWithHooks<[PolicyScenario, number, [number, number, number]]>
  /**
   * Unknown is never attractive: if the first decision goes to a rank whose load is hidden
   * (`unknown` row or absent fields), it still goes there when the hidden fields carry another
   * rank's reported values, or values one step heavier (so an unknown rank never wins a tie
   * against an equal known one; see {@link UnknownCase}).
   */
  readonly unknownNeverAttractive: fc.IPropertyWithHooks<[PolicyScenario, UnknownCase]>
  /** Repeated tied snapshots with a few requests between: per-rank counts within one (see `FairnessLaws`). */
  readonly noSystematicTieWinner: fc.IPropertyWithHooks<[TieRounds]>
  /** At least `dpSize` concurrent streams sharing prefixes on an idle group: every rank gets work. */
  readonly noStarvationUnderAffinity: fc.IPropertyWithHooks<[AffinityBurst]>
  /** Never a rank whose free KV cannot hold the prompt while another rank's can. */
  readonly kvFeasibility: fc.IPropertyWithHooks<[KvCase]>
}

/**
 * The name of one law of {@link PolicyLaws}.
 *
 * @category models
 * @since 0.2.0
 */
export type LawName = keyof PolicyLaws

/**
 * The input each law is checked on (what fast-check generates for it, and what an exception's
 * counterexample gives).
 *
 * @category models
 * @since 0.2.0
 */
export type LawInput = {
  readonly [K in LawName]: PolicyLaws[K] extends fc.IPropertyWithHooks<infer Ts> ? Ts : never
}

/**
 * Each law as a plain predicate over its input: `true` when the law holds there.
 *
 * @category models
 * @since 0.2.0
 */
export type PolicyLawPredicates = {
  readonly [K in LawName]: (...input: LawInput[K]) => boolean
}

/**
 * Every law's name, in the order the laws are listed: the keys of what `policyLaws` returns and of
 * `policyLawPredicates`, and the `law` of a registry law case or a law exception.
 *
 * @example
 * ```ts
 * import { lawNames } from "@loadledger/testing"
 * lawNames.length // => 10
 * lawNames.slice(0, 3) // => ["validRankOrTypedError", "deterministic", "healthyRanksOnly"]
 * lawNames.includes("unknownNeverAttractive") // => true
 * ```
 *
 * @category laws
 * @since 0.2.0
 */
export const lawNames: ReadonlyArray<LawName> = [
  "validRankOrTypedError",
  "deterministic",
  "healthyRanksOnly",
  "burstSpread",
  "permutationEquivariant",
  "monotoneInLoad",
  "unknownNeverAttractive",
  "noSystematicTieWinner",
  "noStarvationUnderAffinity",
  "kvFeasibility"
]

const hiddenArb: fc.Arbitrary<HiddenLoad> = fc.oneof(
  fc.constant<HiddenLoad>({ kind: "unknown" }),
  fc.subarray([...loadFields], { minLength: 1 }).map((fields): HiddenLoad => ({ kind: "absent", fields }))
)

/**
 * Build the policy laws for `policy`, over generated scenarios (see {@link PolicyArbitraries}).
 * fast-check is an optional peer dependency of `@loadledger/testing`; this needs it installed.
 *
 * **When to use**: in a policy's test suite, `fc.assert` the laws the policy should hold; for a law an
 * upstream policy breaks on purpose (ties to the lowest index break equivariance), assert that
 * `fc.check(law).failed` is true next to a concrete counterexample, rather than skipping it. Every
 * policy of the registry is held to every law by {@link registryLawCases}.
 *
 * @example
 * ```ts
 * import { totalRequests } from "@loadledger/policies"
 * import { policyLaws } from "@loadledger/testing"
 * import fc from "fast-check"
 * const laws = policyLaws(totalRequests)
 * fc.assert(laws.burstSpread)
 * // ties go to the lowest index, so relabelling the ranks can change the choice
 * fc.check(laws.permutationEquivariant).failed // => true
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const policyLaws = <S>(policy: Policy<S>, arbitraries: PolicyArbitraries = {}): PolicyLaws => {
  const scenario = scenarioArb(arbitraries)
  const holds = policyLawPredicates(policy)
  return {
    validRankOrTypedError: fc.property(scenario, holds.validRankOrTypedError),
    deterministic: fc.property(scenario, holds.deterministic),
    healthyRanksOnly: fc.property(scenario, holds.healthyRanksOnly),
    burstSpread: fc.property(
      scenario.chain((sc) =>
        fc.integer({ min: 1, max: 4 * sc.dpSize }).map((k): PolicyScenario => {
          const l = sc.loads[0]!
          const req = sc.requests[0]!
          return {
            ...allHealthy(sc),
            loads: sc.loads.map((_, dpRank) => ({ ...l, dpRank })),
            requests: Array.from({ length: k }, (_, i) => ({ ...req, requestId: `${req.requestId}-${i}` })),
            gapsSeconds: [0, ...new Array<number>(k).fill(0.0001)]
          }
        })
      ),
      holds.burstSpread
    ),
    permutationEquivariant: fc.property(
      scenario.chain((sc) =>
        fc.tuple(
          fc.constant(sc),
          fc.shuffledSubarray(
            Array.from({ length: sc.dpSize }, (_, i) => i),
            { minLength: sc.dpSize }
          )
        )
      ),
      holds.permutationEquivariant
    ),
    monotoneInLoad: fc.property(
      scenario.map(allHealthy),
      fc.nat(),
      fc.tuple(fc.nat({ max: 32 }), fc.nat({ max: 32 }), fc.nat({ max: 100_000 })),
      holds.monotoneInLoad
    ),
    unknownNeverAttractive: fc.property(
      scenario,
      fc.record({ rank: fc.nat(), donor: fc.nat(), hidden: hiddenArb, heavier: fc.boolean() }),
      holds.unknownNeverAttractive
    ),
    noSystematicTieWinner: fc.property(tieRoundsArb, holds.noSystematicTieWinner),
    noStarvationUnderAffinity: fc.property(affinityBurstArb, holds.noStarvationUnderAffinity),
    kvFeasibility: fc.property(kvCaseArb, holds.kvFeasibility)
  }
}
