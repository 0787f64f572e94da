/**
 * The registry entries of the AIBrix policies (one line per registered name).
 *
 * @since 0.2.0
 */
import { erasePolicy as erase } from "../../internal/erasePolicy.js"
import type { PolicyEntry } from "../../PolicyEntry.js"
import { aibrixStrategies, makeAibrixPolicy } from "./AibrixPolicy.js"
import { aibrixSloStrategies, makeAibrixSloPolicy } from "./AibrixSloPolicy.js"

/**
 * Registry entries for the AIBrix gateway (`reference: true`): `aibrix/<strategy>` for each of
 * `Aibrix.aibrixStrategies`, and `aibrix/multi` (the weighted mix `prefix-cache:2,least-request:1`).
 * `seed` seeds the shuffle and the draws.
 *
 * `aibrix/load-balance` (since 0.7.0) is `proposed: "vllm-project/aibrix#2365"`: the
 * `load-balance` router of that pull request, open when read (head
 * cd1e1fcc587c6760e14b6a69f774c0395e620006, `pkg/plugins/gateway/algorithms/load_balance.go`;
 * main at e3e10f9e has no such router). It routes to the least pending time `running / capacity`,
 * ties by draw. The capacity is the 1-minute drain rate the gateway computes only for pods whose
 * name contains `decode` (`updateRealtimeRunningRequestsDrainRate1m`, `pkg/cache/cache_metrics.go`
 * at that head), 1 for every other pod; the ranks here are pods `"0"`, `"1"`, ..., so the policy
 * is exact with capacity 1 (least pending = least running, as `aibrix/least-request`).
 *
 * `aibrix/slo`, `aibrix/slo-least-load-pulling`, `aibrix/slo-least-load`, `aibrix/slo-pack-load`
 * (since 0.8.0) are the SLO routers (`Aibrix.makeAibrixSloPolicy`) with upstream's test GPU profile
 * for every rank and the cold output prediction (1 token); `aibrix/least-utilization` (since 0.8.0)
 * routes to the least `engine_utilization` (fed from `RankLoad.utilization`).
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
  ...aibrixSloStrategies.map(
    (strategy): PolicyEntry => ({
      name: `aibrix/${strategy}`,
      engine: "any",
      reference: true,
      description: `AIBrix SLO router ${strategy}: GPU-profile pending load, SLO-ranked (slo.go, slo_queue.go)`,
      make: (o) => erase(makeAibrixSloPolicy({ strategy, seed: o.seed }))
    })
  ),
  {
    name: "aibrix/load-balance",
    engine: "any",
    reference: true,
    proposed: "vllm-project/aibrix#2365",
    description:
      "AIBrix load-balance (proposed #2365): least running / drain-rate capacity, ties by draw (load_balance.go)",
    make: (o) => erase(makeAibrixPolicy({ strategy: "load-balance", seed: o.seed }))
  },
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
