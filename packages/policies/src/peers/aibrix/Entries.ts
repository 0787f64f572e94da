/**
 * The registry entries of the AIBrix policies (one line per registered name).
 *
 * @since 0.2.0
 */
import { erasePolicy as erase } from "../../internal/erasePolicy.js"
import type { PolicyEntry } from "../../PolicyEntry.js"
import { aibrixStrategies, makeAibrixPolicy } from "./AibrixPolicy.js"

/**
 * Registry entries for the AIBrix gateway (`reference: true`): `aibrix/<strategy>` for each of
 * `Aibrix.aibrixStrategies`, and `aibrix/multi` (the weighted mix `prefix-cache:2,least-request:1`).
 * `seed` seeds the shuffle and the draws.
 *
 * @example
 * ```ts
 * import { findPolicy } from "@loadledger/policies"
 * findPolicy("aibrix/least-request")!.make({ seed: 3 }).name // => "aibrix/least-request"
 * ```
 *
 * @category registry
 * @since 0.2.0
 */
export const aibrixPolicyEntries: ReadonlyArray<PolicyEntry> = [
  ...aibrixStrategies.map(
    (strategy): PolicyEntry => ({
      name: `aibrix/${strategy}`,
      engine: "any",
      reference: true,
      description: `AIBrix gateway ${strategy} (pkg/plugins/gateway/algorithms)`,
      make: (o) => erase(makeAibrixPolicy({ strategy, seed: o.seed }))
    })
  ),
  {
    name: "aibrix/multi",
    engine: "any",
    reference: true,
    description:
      "AIBrix weighted multi-strategy prefix-cache:2,least-request:1 (min-max normalised, router.go)",
    make: (o) =>
      erase(
        makeAibrixPolicy({ name: "aibrix/multi", strategy: "prefix-cache:2,least-request:1", seed: o.seed })
      )
  }
]
