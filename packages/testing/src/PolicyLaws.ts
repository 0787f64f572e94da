/**
 * Reusable fast-check laws every loadledger routing policy can be held to.
 *
 * @since 0.1.0
 */
import type { Policy } from "@loadledger/policies"
import fc from "fast-check"

import { affinityBurstArb, kvCaseArb, tieRoundsArb } from "./internal/fairness.js"
import { allHealthy, loadFields, scenarioArb } from "./internal/scenario.js"
import { policyLawPredicates } from "./LawPredicates.js"
import type { HiddenLoad, LawName, PolicyArbitraries, PolicyLaws, PolicyScenario } from "./LawTypes.js"

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
